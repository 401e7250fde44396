/* dram_timing.h - per-bank, per-bank-group, per-rank and per-channel timing state of one DRAM channel,
 * and the JEDEC constraints between commands (DDR4 JESD79-4, DDR5 JESD79-5).
 *
 * Each level keeps the earliest cycle at which each command may issue; a command's readiness is the
 * maximum over its bank, bank group, rank and channel. Issuing a command raises those earliest cycles:
 *   ACT: bank RD/WR +tRCD, PRE +tRAS, ACT +tRC; bank group ACT +tRRD_L; rank ACT +tRRD_S and tFAW
 *        (the fifth ACT waits for the first of the last four + tFAW)
 *   RD:  bank PRE +tRTP; bank group RD +tCCD_L, WR +tRTW; rank RD +tCCD_S, WR +tRTW;
 *        other ranks RD +tBL+2, WR +tRTW (shared data bus, 2-cycle rank switch)
 *   WR:  bank PRE +tCWL+tBL+tWR; bank group WR +tCCD_L_WR, RD +tCWL+tBL+tWTR_L; rank WR +tCCD_S_WR,
 *        RD +tCWL+tBL+tWTR_S; other ranks WR +tBL+2, RD +max(1, tCWL+tBL+2-tCL)
 *   PRE: bank ACT +tRP
 *   REF (all banks of a rank, all precharged): rank ACT +tRFC
 *   REFsb (DDR5 same-bank refresh: bank index `bank` in every bank group of the rank, precharged):
 *        those banks ACT +tRFCsb
 * Because tCCD_L >= tCCD_S, tRRD_L >= tRRD_S and tWTR_L >= tWTR_S, applying the long value at the bank
 * group and the short one at the rank gives exactly the same-group / other-group rules.
 */
#ifndef CXL_DRAM_TIMING_H
#define CXL_DRAM_TIMING_H

#include <stdint.h>

#include "cxl_params.h"

enum cxl_dram_cmd { DRAM_ACT = 0, DRAM_PRE, DRAM_RD, DRAM_WR, DRAM_REF, DRAM_REFSB };

typedef struct cxl_bank {
    int32_t open_row;              /* -1 when precharged */
    uint64_t next_act, next_pre, next_col;
} cxl_bank;

typedef struct cxl_dram_timing {
    cxl_bank bank[CXL_MAX_BANKS];
    uint64_t bg_act[CXL_MAX_BANKS], bg_rd[CXL_MAX_BANKS], bg_wr[CXL_MAX_BANKS]; /* per rank*bg */
    uint64_t rank_act[CXL_MAX_RANKS], rank_rd[CXL_MAX_RANKS], rank_wr[CXL_MAX_RANKS];
    uint64_t faw[CXL_MAX_RANKS][4];
    uint32_t faw_n[CXL_MAX_RANKS], faw_head[CXL_MAX_RANKS];
} cxl_dram_timing;

void dram_timing_init(cxl_dram_timing *t, const cxl_dram_params *p);
/* Bank index within the channel, and bank-group index (rank * bankgroups + bg). */
static inline uint32_t dram_bank_idx(const cxl_dram_params *p, uint32_t rank, uint32_t bg, uint32_t bank)
{
    return (rank * p->bankgroups + bg) * p->banks + bank;
}
/* Earliest cycle at which `cmd` may issue to the bank (REF: to the rank of the bank). */
uint64_t dram_ready(const cxl_dram_timing *t, const cxl_dram_params *p, uint32_t cmd, uint32_t rank,
                    uint32_t bg, uint32_t bank);
/* Record `cmd` issued at `now` (auto_pre: RD/WR with auto-precharge, closed-page policy). */
void dram_issue(cxl_dram_timing *t, const cxl_dram_params *p, uint32_t cmd, uint32_t rank, uint32_t bg,
                uint32_t bank, uint32_t row, int auto_pre, uint64_t now);

#endif
