#include "cxl/stats_report.h"

#include <math.h>

#include <string.h>

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

void window_stats_compute(window_stats *w, const cxl_stats *a, const cxl_stats *b, const cxl_params *p,
                          cxl_hist *scratch)
{
    memset(w, 0, sizeof *w);
    uint64_t cycles = a->cycles - b->cycles;
    double ns_per_cycle = 1e6 / (double)p->clk_khz;
    w->seconds = (double)cycles * ns_per_cycle * 1e-9;
    if (w->seconds > 0) {
        w->read_gbps = (double)(a->read_bytes - b->read_bytes) / w->seconds / 1e9;
        w->write_gbps = (double)(a->write_bytes - b->write_bytes) / w->seconds / 1e9;
    }
    for (int k = 0; k < 2; k++) {
        hist_delta(scratch, k ? &a->write_lat : &a->read_lat, k ? &b->write_lat : &b->read_lat);
        double *o = k ? w->write_lat_ns : w->read_lat_ns;
        o[0] = hist_mean(scratch) * ns_per_cycle;
        o[1] = (double)hist_percentile(scratch, 0.50) * ns_per_cycle;
        o[2] = (double)hist_percentile(scratch, 0.99) * ns_per_cycle;
        o[3] = (double)scratch->max * ns_per_cycle;
        if (k)
            w->writes = scratch->count;
        else
            w->reads = scratch->count;
        if (!scratch->count) /* no access of this kind in the window: n/a, not 0 ns */
            o[0] = o[1] = o[2] = o[3] = NAN;
    }
    uint64_t slots[2] = { 0, 0 };
    for (int d = 0; d < 2; d++) /* n/a on a path without a link, and for a direction that sent nothing */
        w->link_utilisation[d] = w->slot_utilisation[d] = NAN;
    for (uint32_t h = 0; h < p->hosts && p->link_present; h++) {
        const cxl_link_stats *la = &a->link[h], *lb = &b->link[h];
        for (int d = 0; d < 2; d++) {
            w->flits[d] += la->flits[d] - lb->flits[d];
            w->data_flits[d] += la->data_flits[d] - lb->data_flits[d];
            slots[d] += la->slots_used[d] - lb->slots_used[d];
        }
        for (int c = 0; c < CXL_NCLASS; c++)
            w->credit_stalls[c] += la->credit_stall[c] - lb->credit_stall[c];
    }
    if (p->link_present && cycles && w->flits[0] + w->flits[1]) { /* no flit counted: a backend without a
                                                                     link model (analytical), n/a */
        /* Flits are counted when they start, so a window can hold one more start than its share of wire
         * time (the flit at its end runs past it; docs/cxl-model.md 2.3: acc stays in (-cost, inc]). The
         * capacity is therefore the most starts N cycles allow, (N + 1) * inc / cost + 1 per host link: a
         * saturated link reads just under 100 % (about 98 % in a --quick window of a Gen1 x1 link). */
        double cap = ((double)(cycles + 1) * (double)p->link.flit_inc / (double)p->link.flit_cost + 1.0) * p->hosts;
        for (int d = 0; d < 2; d++) {
            w->link_utilisation[d] = (double)w->flits[d] / cap;
            w->slot_utilisation[d] = w->flits[d] ? (double)slots[d] / (4.0 * (double)w->flits[d]) : NAN;
        }
    }
    uint64_t col = 0, acts = 0, dl = 0, occ = 0, dq = 0;
    for (uint32_t d = 0; d < p->devices; d++) {
        const cxl_dev_stats *da = &a->dev[d], *db = &b->dev[d];
        col += (da->reads - db->reads) + (da->writes - db->writes);
        acts += da->acts - db->acts;
        w->row_conflicts += da->row_conflicts - db->row_conflicts;
        w->refreshes += da->refs - db->refs;
        occ += da->ingress_occ_sum - db->ingress_occ_sum;
        dq += da->dramq_occ_sum - db->dramq_occ_sum;
        if (da->ingress_occ_max > w->ingress_max)
            w->ingress_max = da->ingress_occ_max;
        for (int k = 0; k < 4; k++) {
            w->devload[k] += (double)(da->devload[k] - db->devload[k]);
            dl += da->devload[k] - db->devload[k];
        }
    }
    w->row_hit_rate = col ? 1.0 - (double)(acts < col ? acts : col) / (double)col : NAN;
    if (cycles) {
        w->ingress_mean = (double)occ / (double)cycles;
        w->dram_queue_mean = (double)dq / (double)cycles;
    }
    for (int k = 0; k < 4; k++)
        w->devload[k] = dl ? w->devload[k] / (double)dl : 0.0;
    w->switch_stalls = a->switch_stall - b->switch_stall;
}
