#include "stats.h"

void hist_add(cxl_hist *h, uint64_t cycles)
{
    h->count++;
    h->sum += cycles;
    if (cycles > h->max)
        h->max = cycles;
    if (cycles < CXL_HIST_LINEAR) {
        h->linear[cycles]++;
        return;
    }
    uint32_t k = 0;
    uint64_t lim = (uint64_t)CXL_HIST_LINEAR << 1;
hist_log:
    while (k + 1 < CXL_HIST_LOG && cycles >= lim) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 15 /* CXL_HIST_LOG - 1 */
        k++;
        lim <<= 1;
    }
    h->log[k]++;
}
