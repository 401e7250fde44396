/* cxlmem_run.c - advancing one domain of cxlmem (cxlmem.h): the completion lower bound, detailed windows until
 * the rates are steady, extrapolation at those rates, and delivery of completions in canonical order. */
#include "cxl/cxlmem.h"
#include "cxl/cxlmem_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "cxl/stats_report.h"
#include "util/grow.h"

uint64_t cxlmem_next_bound(const cxlmem *m, const domain *d)
{
    if (d->nx == 0)
        return UINT64_MAX;
    if (d->mode == MODE_EXTRAP) {
        uint64_t best = UINT64_MAX;
        for (uint32_t i = 0; i < d->nx; i++) {
            const xfer *x = &d->x[i];
            double left = (double)x->total - x->done;
            uint64_t k = left <= 0 ? 1 : (uint64_t)ceil(left / x->rate);
            if (k < 1)
                k = 1;
            if (d->now + k < best)
                best = d->now + k;
        }
        return best;
    }
    /* lines of chunks still in flight may already be done: any of them could be this transfer's */
    double least = INFINITY;
    for (uint32_t i = 0; i < d->nx; i++) {
        double left = (double)d->x[i].total - d->x[i].done - d->unattributed;
        if (left < least)
            least = left;
    }
    uint64_t lines = least > 0 ? (uint64_t)ceil(least / 64.0) : 0;
    uint64_t k = 1;
    if (m->p.link_present && m->p.link.flit_cost) {
        /* at most 5 responses per flit and host link, one flit per flit time, the first flit at once:
         * L lines need n = ceil(L / 5H) flits, the last no earlier than (n - 1) flit times from now */
        uint64_t per = 5ull * (m->p.hosts ? m->p.hosts : 1), n = (lines + per - 1) / per;
        if (n > 1) {
            unsigned __int128 num = (unsigned __int128)(n - 1) * m->p.link.flit_cost;
            k = (uint64_t)((num + m->p.link.flit_inc - 1) / m->p.link.flit_inc);
        }
    } else {
        /* local path: one line per requester and cycle */
        uint64_t per = m->p.requesters ? m->p.requesters : 1, n = (lines + per - 1) / per;
        k = n > 1 ? n - 1 : 1;
    }
    return d->now + (k > 0 ? k : 1);
}

/* Poll the instance: account chunk completions, collect finished transfers at this cycle. */
static int drain(domain *d, cxl_err *err)
{
    cxl_completion c[256];
    size_t n;
    while ((n = cxl_backend_poll(d->b, c, 256)) > 0) {
        for (size_t i = 0; i < n; i++) {
            uint64_t seq = c[i].id >> 32;
            xfer *x = NULL;
            for (uint32_t k = 0; k < d->nx; k++)
                if (d->x[k].seq == seq)
                    x = &d->x[k];
            if (!x)
                return cxl_errf(err, CXL_EINTERNAL, "internal: completion of an unknown CXL chunk");
            uint64_t b = (uint64_t)c[i].lines * 64;
            x->inst_done += b;
            x->done = (double)(x->inst_base + x->inst_done);
            if (x->rd && !x->wr)
                d->read_bytes += (double)b;
            else if (x->wr && !x->rd)
                d->write_bytes += (double)b;
            else {
                d->read_bytes += (double)b * x->rd / (x->rd + x->wr);
                d->write_bytes += (double)b * x->wr / (x->rd + x->wr);
            }
            if (x->inst_base + x->inst_done >= x->total) {
                uint64_t when = d->base + c[i].end_cycle;
                if (d->nready && when != d->ready_cycle)
                    return cxl_errf(err, CXL_EINTERNAL, "internal: CXL completions at two cycles in one step");
                if (grow_array((void **)&d->ready_seq, &d->capready, d->nready + 1, sizeof *d->ready_seq))
                    return cxl_errf(err, CXL_ENOMEM, "out of memory");
                d->ready_seq[d->nready++] = x->seq;
                d->ready_cycle = when;
            }
        }
    }
    return 0;
}

/* The warm-up, then measurement windows doubling in length (CXLMEM_WINDOW, 2x, 4x, ... up to
 * CXLMEM_WINDOW_MAX): slow periodic effects (two sequential streams drifting in and out of bank
 * conflicts, write-drain cycles) make short windows agree by chance; longer ones average them out. */
static uint64_t window_len(const domain *d)
{
    if (d->windows < 0)
        return CXLMEM_WARMUP;
    uint64_t w = (uint64_t)CXLMEM_WINDOW << (d->windows < 16 ? d->windows : 16);
    w = w < CXLMEM_WINDOW_MAX ? w : CXLMEM_WINDOW_MAX;
    /* a rate-capped transfer issues one line per `gap` cycles and requester: a window must hold enough of
     * them (CXLMEM_GAP_LINES) that counting whole lines measures its rate to well within the tolerance */
    for (uint32_t i = 0; i < d->nx; i++)
        if ((uint64_t)d->x[i].gap * CXLMEM_GAP_LINES > w)
            w = (uint64_t)d->x[i].gap * CXLMEM_GAP_LINES;
    return w;
}

/* Run one domain in detail up to global cycle h (completions of transfers at h at most). */
int cxlmem_run_detail(cxlmem *m, domain *d, uint64_t h, cxl_err *err)
{
    while (d->now < h && d->nready == 0 && d->mode == MODE_DETAIL) {
        int rc = cxlmem_feed(m, d, err);
        if (rc)
            return rc;
        /* no transfer ends before h (next_bound), so the model runs freely to it; the queues are refilled
         * every CXLMEM_REFILL cycles, well before a requester's 16 chunks run dry */
        uint64_t until = h < d->now + CXLMEM_REFILL ? h : d->now + CXLMEM_REFILL;
        if (!m->exact) {
            uint64_t boundary = d->win_start + window_len(d);
            if (boundary < until)
                until = boundary;
        }
        uint64_t before = d->now;
        rc = cxl_backend_advance(d->b, until - d->base, 0, err);
        if (rc)
            return rc;
        d->now = d->base + cxl_backend_now(d->b);
        d->detailed += d->now - before;
        m->st.detailed_cycles += d->now - before;
        d->busy_cycles += d->now - before;
        rc = drain(d, err);
        if (rc)
            return rc;
        cxl_counters st;
        rc = cxl_backend_counters(d->b, &st, err);
        if (rc)
            return rc;
        cxlmem_load_of(m, st.dev, &d->load_live);
        double attributed = 0;
        for (uint32_t i = 0; i < d->nx; i++)
            attributed += (double)d->x[i].inst_done;
        d->unattributed = (double)(st.read_bytes + st.write_bytes) - attributed - d->retired;
        if (d->unattributed < 0)
            d->unattributed = 0;
        if (d->nready)
            break;
        if (!m->exact && d->now >= d->win_start + window_len(d)) {
            uint64_t len = d->now - d->win_start;
            int steady = d->windows >= 1;
            /* progress at line granularity: lines done inside unfinished chunks, shared among the
             * transfers in proportion to the bytes each has in flight */
            double inflight = 0;
            for (uint32_t i = 0; i < d->nx; i++)
                inflight += (double)(d->x[i].issued - d->x[i].inst_done);
            for (uint32_t i = 0; i < d->nx; i++) {
                xfer *x = &d->x[i];
                double mine = inflight > 0 ? d->unattributed * (double)(x->issued - x->inst_done) / inflight : 0;
                double est = x->done + mine;
                x->prev_rate = x->rate;
                x->rate = (est - x->win_done) / (double)len;
                x->win_done = est;
                if (d->windows < 1 || !(x->rate > 0) ||
                    fabs(x->rate - x->prev_rate) > CXLMEM_TOLERANCE * x->rate)
                    steady = 0;
            }
            if (getenv("CXLMEM_DEBUG")) {
                fprintf(stderr, "win %d at %llu:", d->windows, (unsigned long long)d->now);
                for (uint32_t i = 0; i < d->nx; i++)
                    fprintf(stderr, " [%u %.3f]", d->x[i].tag, d->x[i].rate);
                fprintf(stderr, "\n");
                if (getenv("CXLMEM_NOSTEADY"))
                    steady = 0;
            }
            /* two full-length windows in a row that still disagree: the rate wanders more slowly than
             * the longest window; their mean (8 M cycles of measurement) is what extrapolation uses */
            if (len >= CXLMEM_WINDOW_MAX && d->windows >= 1 && window_len(d) >= CXLMEM_WINDOW_MAX) {
                int full = 1;
                for (uint32_t i = 0; i < d->nx; i++)
                    full &= d->x[i].rate > 0 && d->x[i].prev_rate > 0;
                if (full && d->long_windows++ >= 1)
                    steady = 1;
            }
            d->windows++;
            d->win_start = d->now;
            if (steady) {
                /* the rate over both windows, and the load figures per cycle over them */
                for (uint32_t i = 0; i < d->nx; i++)
                    d->x[i].rate = 0.5 * (d->x[i].rate + d->x[i].prev_rate);
                load_sums now;
                cxlmem_load_total(d, &now);
                uint64_t cyc = d->detailed - d->win_detailed[1];
                memset(&d->load_steady, 0, sizeof d->load_steady);
                cxlmem_load_add(&now, &d->win_load[1], -1.0);
                if (cyc)
                    cxlmem_load_add(&d->load_steady, &now, 1.0 / (double)cyc);
                uint32_t *idx = malloc(d->nx * sizeof *idx);
                if (!idx)
                    return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
                cxlmem_canon(d, idx);
                rc = cxlmem_memo_store(m, d, idx);
                free(idx);
                if (rc)
                    return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
                rc = cxlmem_close_instance(m, d, err);
                if (rc)
                    return rc;
                d->mode = MODE_EXTRAP;
            }
            cxlmem_load_window(d);
        }
    }
    return 0;
}

/* Extrapolate up to global cycle h, or to the first completion if that comes first. A transfer with
 * `left` bytes at r bytes per cycle occupies k = ceil(left / r) more cycles and ends in cycle now + k - 1,
 * as a detailed one ends in the cycle its last line returns. */
int cxlmem_run_extrap(cxlmem *m, domain *d, uint64_t h, cxl_err *err)
{
    uint64_t first = cxlmem_next_bound(m, d);
    uint64_t to = first < h ? first : h;
    uint64_t *ends = malloc(d->nx * sizeof *ends);
    if (!ends)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < d->nx; i++) {
        double left = (double)d->x[i].total - d->x[i].done;
        uint64_t k = left <= 0 ? 1 : (uint64_t)ceil(left / d->x[i].rate);
        ends[i] = d->now + (k > 0 ? k : 1);
    }
    double dt = (double)(to - d->now);
    for (uint32_t i = 0; i < d->nx; i++) {
        xfer *x = &d->x[i];
        double mv = ends[i] == to ? (double)x->total - x->done : x->rate * dt;
        if (mv > (double)x->total - x->done)
            mv = (double)x->total - x->done;
        x->done += mv;
        d->read_bytes += mv * x->rd / (x->rd + x->wr);
        d->write_bytes += mv * x->wr / (x->rd + x->wr);
    }
    d->extrapolated += to - d->now;
    cxlmem_load_add(&d->load_closed, &d->load_steady, (double)(to - d->now));
    m->st.extrapolated_cycles += to - d->now;
    d->busy_cycles += to - d->now;
    d->now = to;
    int rc = 0;
    if (to == first) {
        /* every transfer ending in cycle to - 1, in canonical order */
        uint32_t *idx = malloc(d->nx * sizeof *idx);
        if (!idx)
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
        else {
            cxlmem_canon(d, idx);
            for (uint32_t k = 0; k < d->nx && rc == 0; k++)
                if (ends[idx[k]] == to) {
                    if (grow_array((void **)&d->ready_seq, &d->capready, d->nready + 1, sizeof *d->ready_seq))
                        rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
                    else
                        d->ready_seq[d->nready++] = d->x[idx[k]].seq;
                }
            d->ready_cycle = to - 1;
            free(idx);
        }
    }
    free(ends);
    return rc;
}

/* Deliver one ready completion of domain d: remove its transfer; when the cycle's completions are all
 * out, the set has changed. */
int cxlmem_deliver(cxlmem *m, domain *d, int64_t *t_ps, uint32_t *tag, cxl_err *err)
{
    uint64_t seq = d->ready_seq[0];
    *t_ps = cxlmem_ps_of(m, d->ready_cycle);
    memmove(d->ready_seq, d->ready_seq + 1, (d->nready - 1) * sizeof *d->ready_seq);
    d->nready--;
    for (uint32_t i = 0; i < d->nx; i++)
        if (d->x[i].seq == seq) {
            *tag = d->x[i].tag;
            m->last_host = d->x[i].host;
            d->retired += (double)d->x[i].inst_done;
            cxlmem_remove_xfer(m, d, i);
            break;
        }
    return d->nready == 0 ? cxlmem_changed(m, d, err) : 0;
}
