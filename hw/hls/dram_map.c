#include "dram_map.h"

void dram_map(const cxl_dram_params *p, uint64_t addr, cxl_dram_addr *out)
{
    uint64_t x = addr / CXL_LINE_BYTES;
    uint32_t v[CXL_MAP_NFIELDS] = { 0, 0, 0, 0, 0, 0 };
map_fields:
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++) {
        uint32_t f = p->map[i];
        uint32_t b = p->bits[f];
        v[f] = (uint32_t)(x & ((1ull << b) - 1));
        x >>= b;
    }
    if (p->bank_hash) {
        uint32_t bb = p->bits[CXL_MAP_BG] + p->bits[CXL_MAP_BANK];
        if (bb) {
            uint32_t mask = (1u << bb) - 1, h = 0, row = v[CXL_MAP_ROW];
        map_fold:
            for (uint32_t i = 0; i < 32 && row; i++) {
                h ^= row & mask;
                row >>= bb;
            }
            uint32_t bk = (v[CXL_MAP_BANK] << p->bits[CXL_MAP_BG] | v[CXL_MAP_BG]) ^ h;
            v[CXL_MAP_BG] = bk & ((1u << p->bits[CXL_MAP_BG]) - 1);
            v[CXL_MAP_BANK] = bk >> p->bits[CXL_MAP_BG];
        }
    }
    out->ch = v[CXL_MAP_CH];
    out->rank = v[CXL_MAP_RANK];
    out->bg = v[CXL_MAP_BG];
    out->bank = v[CXL_MAP_BANK];
    out->row = v[CXL_MAP_ROW];
    out->col = v[CXL_MAP_COL];
}
