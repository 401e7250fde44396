// rtl_dram_presets.h - cxl_dram_params of shipped presets for the DRAM unit tests (test_dram_map.cpp,
// test_dram_timing.cpp), which link only the model library (cxlhw), not the host's devcfg.
//
// Values are devcfg_to_params() of configs/devices/{asic,asic-ddr4,cz120}.yaml (fpga and local-ddr5 give
// the same DRAM fields as asic); `ranks4` is synthetic: 4 ranks, another field order, no bank hash, so
// the rank and order paths are covered too. Regenerate when a preset's DRAM section changes.
#ifndef RTL_DRAM_PRESETS_H
#define RTL_DRAM_PRESETS_H

extern "C" {
#include "cxl_params.h"
}

namespace rtl_unit {

struct DramPreset {
    const char *name;
    cxl_dram_params p;
};

// std, channels, ranks, bankgroups, banks, rows, columns, map, bits,
// tRCD, tCL, tRP, tRAS, tRC, tCWL, tWR, tRTP, tBL, tCCD_S, tCCD_L, tCCD_S_WR, tCCD_L_WR, tRRD_S, tRRD_L,
// tFAW, tWTR_S, tWTR_L, tRTW, tREFI, tRFC, tRFCsb, refresh, read_queue, write_queue, wdrain_high,
// wdrain_low, row_policy, scheduler, bank_hash
inline const DramPreset kDramPresets[] = {
    {"asic", {1, 2, 1, 8, 4, 65536, 64, {0, 2, 5, 3, 1, 4}, {1, 0, 3, 2, 16, 6},
              34, 34, 34, 77, 111, 32, 72, 18, 8, 8, 12, 8, 48, 8, 12, 48, 6, 24, 12,
              9360, 708, 312, 2, 32, 32, 24, 8, 0, 0, 1}},
    {"asic-ddr4", {0, 1, 1, 4, 4, 65536, 128, {0, 2, 5, 3, 1, 4}, {0, 0, 2, 2, 16, 7},
                   22, 22, 22, 52, 74, 16, 24, 12, 4, 4, 8, 4, 8, 4, 8, 34, 4, 12, 12,
                   12480, 560, 0, 1, 32, 32, 24, 8, 0, 0, 1}},
    {"cz120", {1, 4, 1, 8, 4, 65536, 64, {0, 2, 5, 3, 1, 4}, {2, 0, 3, 2, 16, 6},
               34, 34, 34, 77, 111, 32, 72, 18, 8, 8, 12, 8, 48, 8, 12, 48, 6, 24, 12,
               9360, 708, 312, 2, 32, 32, 24, 8, 0, 0, 1}},
    {"ranks4", {0, 2, 4, 4, 4, 32768, 128, {5, 0, 1, 2, 3, 4}, {1, 2, 2, 2, 15, 7},
                22, 22, 22, 52, 74, 16, 24, 12, 4, 4, 8, 4, 8, 4, 8, 34, 4, 12, 12,
                12480, 560, 0, 1, 32, 32, 24, 8, 0, 0, 0}},
};

} // namespace rtl_unit

#endif
