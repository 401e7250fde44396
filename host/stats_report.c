#include "stats_report.h"

uint64_t hist_percentile(const cxl_hist *h, double q)
{
    if (!h->count)
        return 0;
    uint64_t need = (uint64_t)(q * (double)h->count + 0.999999999);
    if (need == 0)
        need = 1;
    uint64_t acc = 0;
    for (uint32_t i = 0; i < CXL_HIST_LINEAR; i++) {
        acc += h->linear[i];
        if (acc >= need)
            return i;
    }
    for (uint32_t k = 0; k < CXL_HIST_LOG; k++) {
        acc += h->log[k];
        if (acc >= need) {
            uint64_t edge = ((uint64_t)CXL_HIST_LINEAR << (k + 1)) - 1;
            return edge < h->max ? edge : h->max;
        }
    }
    return h->max;
}

double hist_mean(const cxl_hist *h) { return h->count ? (double)h->sum / (double)h->count : 0.0; }

void hist_delta(cxl_hist *d, const cxl_hist *a, const cxl_hist *b)
{
    for (uint32_t i = 0; i < CXL_HIST_LINEAR; i++)
        d->linear[i] = a->linear[i] - b->linear[i];
    for (uint32_t k = 0; k < CXL_HIST_LOG; k++)
        d->log[k] = a->log[k] - b->log[k];
    d->count = a->count - b->count;
    d->sum = a->sum - b->sum;
    /* the window's maximum: exact from the linear bins, the overall maximum when the tail was hit */
    d->max = 0;
    for (uint32_t k = 0; k < CXL_HIST_LOG; k++)
        if (d->log[k])
            d->max = a->max;
    if (!d->max)
        for (uint32_t i = CXL_HIST_LINEAR; i-- > 0;)
            if (d->linear[i]) {
                d->max = i;
                break;
            }
}
