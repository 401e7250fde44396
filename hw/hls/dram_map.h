/* dram_map.h - address mapping: a device-local byte address to channel, rank, bank group, bank, row,
 * column. Fields are taken from the line address (addr / 64), least significant first, in the order of
 * params.map; every field size is a power of two; bits above the last field wrap (capacity).
 * With bank_hash, the bank-group and bank bits (bank group low) are XORed with the row folded to their
 * width (permutation-based interleaving, Zhang et al., MICRO 2000): streams in different rows spread
 * over different banks instead of thrashing one, as memory controllers do. */
#ifndef CXL_DRAM_MAP_H
#define CXL_DRAM_MAP_H

#include <stdint.h>

#include "cxl_params.h"

typedef struct cxl_dram_addr {
    uint32_t ch, rank, bg, bank, row, col;
} cxl_dram_addr;

void dram_map(const cxl_dram_params *p, uint64_t addr, cxl_dram_addr *out);

#endif
