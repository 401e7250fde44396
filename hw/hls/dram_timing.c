#include "dram_timing.h"

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void dram_timing_init(cxl_dram_timing *t, const cxl_dram_params *p)
{
    (void)p;
tim_init_banks:
    for (uint32_t i = 0; i < CXL_MAX_BANKS; i++) {
        t->bank[i].open_row = -1;
        t->bank[i].next_act = t->bank[i].next_pre = t->bank[i].next_col = 0;
        t->bg_act[i] = t->bg_rd[i] = t->bg_wr[i] = 0;
    }
tim_init_ranks:
    for (uint32_t r = 0; r < CXL_MAX_RANKS; r++) {
        t->rank_act[r] = t->rank_rd[r] = t->rank_wr[r] = 0;
        t->faw_n[r] = t->faw_head[r] = 0;
        for (uint32_t k = 0; k < 4; k++)
            t->faw[r][k] = 0;
    }
}

uint64_t dram_ready(const cxl_dram_timing *t, const cxl_dram_params *p, uint32_t cmd, uint32_t rank,
                    uint32_t bg, uint32_t bank)
{
    uint32_t gi = rank * p->bankgroups + bg;
    const cxl_bank *b = &t->bank[dram_bank_idx(p, rank, bg, bank)];
    switch (cmd) {
    case DRAM_ACT: return max64(b->next_act, max64(t->bg_act[gi], t->rank_act[rank]));
    case DRAM_PRE: return b->next_pre;
    case DRAM_RD: return max64(b->next_col, max64(t->bg_rd[gi], t->rank_rd[rank]));
    case DRAM_WR: return max64(b->next_col, max64(t->bg_wr[gi], t->rank_wr[rank]));
    default: return t->rank_act[rank];
    }
}

void dram_issue(cxl_dram_timing *t, const cxl_dram_params *p, uint32_t cmd, uint32_t rank, uint32_t bg,
                uint32_t bank, uint32_t row, int auto_pre, uint64_t now)
{
    uint32_t gi = rank * p->bankgroups + bg;
    cxl_bank *b = &t->bank[dram_bank_idx(p, rank, bg, bank)];
    uint32_t nb = p->bankgroups * p->banks;
    switch (cmd) {
    case DRAM_ACT:
        b->open_row = (int32_t)row;
        b->next_col = max64(b->next_col, now + p->tRCD);
        b->next_pre = max64(b->next_pre, now + p->tRAS);
        b->next_act = max64(b->next_act, now + p->tRC);
        t->bg_act[gi] = max64(t->bg_act[gi], now + p->tRRD_L);
        t->rank_act[rank] = max64(t->rank_act[rank], now + p->tRRD_S);
        {
            uint32_t n = t->faw_n[rank];
            if (n < 4) {
                t->faw[rank][(t->faw_head[rank] + n) % 4] = now;
                t->faw_n[rank] = n + 1;
            } else {
                t->faw[rank][t->faw_head[rank]] = now;
                t->faw_head[rank] = (t->faw_head[rank] + 1) % 4;
            }
            if (t->faw_n[rank] == 4)
                t->rank_act[rank] = max64(t->rank_act[rank], t->faw[rank][t->faw_head[rank]] + p->tFAW);
        }
        break;
    case DRAM_PRE:
        b->open_row = -1;
        b->next_act = max64(b->next_act, now + p->tRP);
        break;
    case DRAM_RD:
    case DRAM_WR: {
        int rd = cmd == DRAM_RD;
        uint64_t pre_at;
        if (rd) {
            pre_at = now + p->tRTP;
            t->bg_rd[gi] = max64(t->bg_rd[gi], now + p->tCCD_L);
            t->bg_wr[gi] = max64(t->bg_wr[gi], now + p->tRTW);
            t->rank_rd[rank] = max64(t->rank_rd[rank], now + p->tCCD_S);
            t->rank_wr[rank] = max64(t->rank_wr[rank], now + p->tRTW);
        } else {
            pre_at = now + p->tCWL + p->tBL + p->tWR;
            t->bg_wr[gi] = max64(t->bg_wr[gi], now + p->tCCD_L_WR);
            t->bg_rd[gi] = max64(t->bg_rd[gi], now + p->tCWL + p->tBL + p->tWTR_L);
            t->rank_wr[rank] = max64(t->rank_wr[rank], now + p->tCCD_S_WR);
            t->rank_rd[rank] = max64(t->rank_rd[rank], now + p->tCWL + p->tBL + p->tWTR_S);
        }
        b->next_pre = max64(b->next_pre, pre_at);
    tim_other_ranks:
        for (uint32_t r = 0; r < p->ranks; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
            if (r == rank)
                continue;
            if (rd) {
                t->rank_rd[r] = max64(t->rank_rd[r], now + p->tBL + 2);
                t->rank_wr[r] = max64(t->rank_wr[r], now + p->tRTW);
            } else {
                uint64_t d = p->tCWL + p->tBL + 2 > p->tCL ? p->tCWL + p->tBL + 2 - p->tCL : 1;
                t->rank_wr[r] = max64(t->rank_wr[r], now + p->tBL + 2);
                t->rank_rd[r] = max64(t->rank_rd[r], now + d);
            }
        }
        if (auto_pre) {
            uint64_t pre = max64(b->next_pre, pre_at);
            b->open_row = -1;
            b->next_act = max64(b->next_act, pre + p->tRP);
        }
        break;
    }
    case DRAM_REF:
    tim_ref_banks:
        for (uint32_t i = 0; i < nb; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_BANKS */
            cxl_bank *x = &t->bank[rank * nb + i];
            x->next_act = max64(x->next_act, now + p->tRFC);
        }
        t->rank_act[rank] = max64(t->rank_act[rank], now + p->tRFC);
        break;
    case DRAM_REFSB:
    tim_refsb_banks:
        for (uint32_t g = 0; g < p->bankgroups; g++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* bank groups: at most 16 (host/config/devcfg.c) */
            cxl_bank *x = &t->bank[dram_bank_idx(p, rank, g, bank)];
            x->next_act = max64(x->next_act, now + p->tRFCsb);
        }
        break;
    default: break;
    }
}
