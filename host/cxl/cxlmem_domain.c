/* cxlmem_domain.c - one CXL domain of cxlmem (cxlmem.h): time conversion, its backend instance opened and
 * closed with its statistics carried across, descriptors fed to its requesters, and a change of its transfers. */
#include "cxl/cxlmem.h"
#include "cxl/cxlmem_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "cxl/stats_report.h"
#include "util/grow.h"

/* ---- time ---- */

int64_t cxlmem_ps_of(const cxlmem *m, uint64_t cycle)
{
    return (int64_t)((unsigned __int128)cycle * 1000000000u / m->p.clk_khz);
}

uint64_t cxlmem_cycle_of(const cxlmem *m, int64_t ps)
{
    if (ps <= 0)
        return 0;
    unsigned __int128 n = (unsigned __int128)ps * m->p.clk_khz;
    return (uint64_t)((n + 999999999u) / 1000000000u);
}

/* ---- stats across backend instances ---- */

/* The load figures of an instance's per-device statistics (all devices). */
void cxlmem_load_of(const cxlmem *m, const cxl_dev_stats *dev, load_sums *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t dv = 0; dv < m->p.devices && dv < (uint32_t)CXL_MAX_DEVS; dv++) {
        for (int k = 0; k < 4; k++)
            out->msgs[k] += (double)dev[dv].devload[k];
        out->ingress += (double)dev[dv].ingress_occ_sum;
        out->dramq += (double)dev[dv].dramq_occ_sum;
    }
}

/* a += b * f */
void cxlmem_load_add(load_sums *a, const load_sums *b, double f)
{
    for (int k = 0; k < 4; k++)
        a->msgs[k] += b->msgs[k] * f;
    a->ingress += b->ingress * f;
    a->dramq += b->dramq * f;
}

void cxlmem_load_total(const domain *d, load_sums *out)
{
    *out = d->load_closed;
    cxlmem_load_add(out, &d->load_live, 1.0);
}

/* Mark the start of a measurement window (or the warm-up): the previous start is kept. */
void cxlmem_load_window(domain *d)
{
    d->win_load[1] = d->win_load[0];
    d->win_detailed[1] = d->win_detailed[0];
    cxlmem_load_total(d, &d->win_load[0]);
    d->win_detailed[0] = d->detailed;
}

int cxlmem_close_instance(cxlmem *m, domain *d, cxl_err *err)
{
    if (!d->b)
        return 0;
    cxl_stats s;
    int rc = cxl_backend_stats(d->b, &s, err);
    if (rc == 0) {
        load_sums l;
        cxlmem_load_of(m, s.dev, &l);
        cxlmem_load_add(&d->load_closed, &l, 1.0);
        memset(&d->load_live, 0, sizeof d->load_live);
        for (uint32_t i = 0; i < CXL_HIST_LINEAR; i++)
            d->read_lat.linear[i] += s.read_lat.linear[i];
        for (uint32_t i = 0; i < CXL_HIST_LOG; i++)
            d->read_lat.log[i] += s.read_lat.log[i];
        d->read_lat.count += s.read_lat.count;
        d->read_lat.sum += s.read_lat.sum;
        if (s.read_lat.max > d->read_lat.max)
            d->read_lat.max = s.read_lat.max;
        for (uint32_t dv = 0; dv < m->p.devices && dv < (uint32_t)CXL_MAX_DEVS; dv++) {
            d->dev_cmds[dv] += s.dev[dv].reads + s.dev[dv].writes;
            for (int k = 0; k < 4; k++) {
                d->devload[k] += s.dev[dv].devload[k];
                d->dev_devload[dv][k] += s.dev[dv].devload[k];
            }
        }
    }
    cxl_backend_close(d->b);
    d->b = NULL;
    return rc;
}

static int open_instance(cxlmem *m, domain *d, cxl_err *err)
{
    int rc = cxl_backend_open_opts(m->backend, &m->p, &m->bo, &d->b, err);
    if (rc)
        return rc;
    d->base = d->now;
    d->retired = 0;
    d->unattributed = 0;
    for (uint32_t i = 0; i < d->nx; i++) {
        xfer *x = &d->x[i];
        uint64_t done64 = (uint64_t)(x->done / 64.0) * 64;
        if (done64 > x->total)
            done64 = x->total;
        /* the part line the fluid steps moved beyond done64 is moved again, line by line, in detail: take it
         * back out of the domain's byte counts, which counted it then (cxlmem_run.c, extrapolate) */
        double back = x->done - (double)done64;
        if (back > 0 && x->rd + x->wr > 0) {
            d->read_bytes -= back * x->rd / (x->rd + x->wr);
            d->write_bytes -= back * x->wr / (x->rd + x->wr);
        }
        x->done = (double)done64;
        x->inst_base = done64;
        x->issued = 0;
        x->inst_done = 0;
    }
    return 0;
}

/* ---- feeding descriptors ---- */

uint32_t cxlmem_host_requesters(const cxlmem *m, uint32_t host)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < m->p.requesters; r++)
        n += m->p.req_host[r] == host;
    return n;
}

static uint32_t host_requester(const cxlmem *m, uint32_t host, uint32_t k)
{
    for (uint32_t r = 0; r < m->p.requesters; r++)
        if (m->p.req_host[r] == host && k-- == 0)
            return r;
    return 0;
}

/* Give every requester as many chunks as it has room for, transfers of its port in round robin. */
int cxlmem_feed(cxlmem *m, domain *d, cxl_err *err)
{
    for (uint32_t h = 0; h < m->p.hosts; h++) {
        uint32_t nreq = cxlmem_host_requesters(m, h);
        for (uint32_t k = 0; k < nreq; k++) {
            uint32_t r = host_requester(m, h, k);
            uint32_t room = cxl_backend_space(d->b, r);
            /* round robin over this port's transfers with bytes left to issue, resumed where this
             * requester's last chunk came from */
            while (room > 0) {
                int any = 0;
                for (uint32_t j = 0; j < d->nx && room > 0; j++) {
                    uint32_t pos = d->rr[r] % d->nx;
                    xfer *x = &d->x[pos];
                    d->rr[r] = pos + 1;
                    if (x->host != h || x->inst_base + x->issued >= x->total)
                        continue;
                    uint64_t left = x->total - x->inst_base - x->issued;
                    uint64_t bytes = left < CXLMEM_CHUNK ? left : CXLMEM_CHUNK;
                    uint64_t off = x->inst_base + x->issued;
                    cxl_desc ds;
                    memset(&ds, 0, sizeof ds);
                    ds.id = (x->seq << 32) | (off / CXLMEM_CHUNK);
                    ds.base = x->region + off % (1ull << 30);
                    ds.bytes = bytes;
                    ds.footprint = 0;
                    ds.not_before = 0;
                    ds.requester = (uint16_t)r;
                    ds.max_outstanding = (uint16_t)m->p.tags;
                    ds.pattern = CXL_PAT_SEQ;
                    ds.rd_weight = x->rd;
                    ds.wr_weight = x->wr;
                    ds.gap_cycles = x->gap;
                    ds.seed = (uint32_t)x->seq;
                    int rc = cxl_backend_submit(d->b, &ds, 1, err);
                    if (rc)
                        return rc;
                    x->issued += bytes;
                    room--;
                    any = 1;
                }
                if (!any)
                    break;
            }
        }
    }
    return 0;
}


/* ---- changes ---- */

/* The set of active transfers changed at d->now: restart measurement, or take rates from the memo. */
int cxlmem_changed(cxlmem *m, domain *d, cxl_err *err)
{
    if (d->nx == 0) {
        int rc = cxlmem_close_instance(m, d, err);
        d->mode = MODE_IDLE;
        return rc;
    }
    if (!m->exact) {
        uint32_t *idx = malloc(d->nx * sizeof *idx);
        if (!idx)
            return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
        cxlmem_canon(d, idx);
        memo_ent *M = cxlmem_memo_find(m, d, idx);
        if (M) {
            for (uint32_t i = 0; i < d->nx; i++)
                d->x[idx[i]].rate = M->rate[i];
            d->load_steady = M->steady;
            free(idx);
            m->st.memo_hits++;
            int rc = cxlmem_close_instance(m, d, err);
            d->mode = MODE_EXTRAP;
            return rc;
        }
        free(idx);
    }
    if (d->mode != MODE_DETAIL || !d->b) {
        int rc = cxlmem_close_instance(m, d, err);
        if (rc == 0)
            rc = open_instance(m, d, err);
        if (rc)
            return rc;
    }
    d->mode = MODE_DETAIL;
    d->win_start = d->now;
    cxlmem_load_window(d);
    cxlmem_load_window(d);
    d->windows = -1; /* warm-up first */
    d->long_windows = 0;
    for (uint32_t i = 0; i < d->nx; i++)
        d->x[i].win_done = d->x[i].done;
    return 0;
}

void cxlmem_remove_xfer(cxlmem *m, domain *d, uint32_t i)
{
    d->x[i] = d->x[--d->nx];
    m->ntx--;
}
