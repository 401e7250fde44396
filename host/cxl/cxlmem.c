/* cxlmem.c - CXL domains under the training engine: transfers as chunk descriptors, lockstep
 * synchronisation bounded by a completion lower bound, steady-state extrapolation and its memo. */
#include "cxl/cxlmem.h"
#include "cxl/cxlmem_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "cxl/stats_report.h"
#include "util/grow.h"

/* ---- public ---- */

int cxlmem_new(const char *backend, const cxl_backend_opts *bo, const cxl_params *p, uint32_t ndomains, int exact,
               cxlmem **out, cxl_err *err)
{
    cxlmem *m = calloc(1, sizeof *m);
    if (!m)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL domains)");
    snprintf(m->backend, sizeof m->backend, "%s", backend);
    if (bo)
        m->bo = *bo;
    m->p = *p;
    m->exact = exact;
    m->nd = ndomains;
    m->d = calloc(ndomains ? ndomains : 1, sizeof *m->d);
    if (!m->d) {
        free(m);
        return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL domains)");
    }
    /* check the backend once, so a missing one is reported before the run */
    cxl_backend *b;
    int rc = cxl_backend_open_opts(backend, p, &m->bo, &b, err);
    if (rc) {
        cxlmem_free(m);
        return rc;
    }
    cxl_backend_close(b);
    *out = m;
    return 0;
}

void cxlmem_free(cxlmem *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->nd; i++) {
        if (m->d[i].b)
            cxl_backend_close(m->d[i].b);
        free(m->d[i].x);
        free(m->d[i].ready_seq);
    }
    for (uint32_t i = 0; i < m->nmemo; i++) {
        free(m->memo[i].key);
        free(m->memo[i].rate);
    }
    free(m->memo);
    free(m->d);
    free(m);
}

uint32_t cxlmem_domains(const cxlmem *m) { return m->nd; }
uint32_t cxlmem_last_domain(const cxlmem *m) { return m->last_domain; }
uint32_t cxlmem_last_host(const cxlmem *m) { return m->last_host; }

int cxlmem_busy(const cxlmem *m)
{
    for (uint32_t i = 0; i < m->nd; i++)
        if (m->d[i].nx || m->d[i].nready)
            return 1;
    return 0;
}

/* Bring an idle domain's clock to `cycle` (nothing happens while idle). */
static void idle_to(domain *d, uint64_t cycle)
{
    if (d->mode == MODE_IDLE && d->now < cycle)
        d->now = cycle;
}

int cxlmem_start(cxlmem *m, int64_t now_ps, uint32_t domain_id, uint32_t host, uint64_t bytes, uint8_t rd,
                 uint8_t wr, double cap_Bps, uint32_t tag, cxl_err *err)
{
    if (domain_id >= m->nd)
        return cxl_errf(err, CXL_ECONFIG, "CXL domain %u does not exist (%u domains)", domain_id, m->nd);
    if (host >= m->p.hosts)
        return cxl_errf(err, CXL_ECONFIG, "CXL host port %u does not exist (the device has %u)", host, m->p.hosts);
    if (bytes == 0)
        return cxl_errf(err, CXL_ECONFIG, "a CXL transfer moves at least one byte");
    if (rd + wr == 0)
        return cxl_errf(err, CXL_ECONFIG, "a CXL transfer needs a read or a write weight");
    domain *d = &m->d[domain_id];
    uint64_t c = cxlmem_cycle_of(m, now_ps);
    idle_to(d, cxlmem_cycle_of(m, m->idle_ps));
    idle_to(d, c);
    /* c may be one below d->now: a transfer started when another ends (whose cycle the domain has
     * completed) begins in the next cycle, as a reaction to an observed completion does in hardware */
    if (c > d->now)
        return cxl_errf(err, CXL_EINTERNAL, "internal: CXL transfer started at cycle %llu, domain %u only at %llu "
                        "(synchronisation)", (unsigned long long)c, domain_id, (unsigned long long)d->now);
    if (grow_array((void **)&d->x, &d->capx, d->nx + 1, sizeof *d->x))
        return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL transfers)");
    xfer *x = &d->x[d->nx++];
    m->ntx++;
    memset(x, 0, sizeof *x);
    x->tag = tag;
    x->host = host;
    x->rd = rd;
    x->wr = wr;
    x->total = (bytes + 63) / 64 * 64;
    x->seq = m->seq++;
    x->region = (d->next_region++ % 64) << 30;
    uint32_t nreq = cxlmem_host_requesters(m, host);
    if (cap_Bps > 0 && nreq) {
        /* each of the port's requesters issues one 64 B line per gap cycles */
        double per_req = cap_Bps / nreq, clk_hz = (double)m->p.clk_khz * 1000.0;
        double g = ceil(64.0 * clk_hz / per_req);
        x->gap = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g; /* the descriptor's 32-bit gap_cycles */
        if (x->gap <= 1)
            x->gap = 0;
    }
    m->st.transfers++;
    x->win_done = 0;
    return cxlmem_changed(m, d, err);
}

/* How far the domain may be simulated safely: every transfer completion has end_cycle >= the result - 1.
 * Detail: lines complete at a requester when their response (DRS for a read, NDR for a write) leaves the
 * host link; a 68 B flit carries at most 3 DRS and 2 NDR (the model's per-flit limits, docs/cxl-model.md),
 * one flit per flit time and link, so the transfer with the least left (lines already done inside
 * unfinished chunks counted as its own) needs at least that many flit times.
 * Extrapolation: exactly the first end + 1. */

int cxlmem_next(cxlmem *m, int64_t horizon_ps, int64_t *t_ps, uint32_t *tag, cxl_err *err)
{
    if (m->ntx == 0) {
        /* nothing to run (most of the engine's events): what the loop below does then, in O(1) */
        if (horizon_ps != INT64_MAX && horizon_ps > m->idle_ps)
            m->idle_ps = horizon_ps;
        return 0;
    }
    uint64_t hc = horizon_ps == INT64_MAX ? UINT64_MAX : cxlmem_cycle_of(m, horizon_ps);
    for (;;) {
        /* completions already found come first: lowest cycle, then lowest domain */
        domain *best = NULL;
        for (uint32_t i = 0; i < m->nd; i++)
            if (m->d[i].nready && m->d[i].ready_cycle < hc && (!best || m->d[i].ready_cycle < best->ready_cycle))
                best = &m->d[i];
        if (best) {
            m->last_domain = (uint32_t)(best - m->d);
            int rc = cxlmem_deliver(m, best, t_ps, tag, err);
            return rc ? rc : 1;
        }
        /* the safe step: no transfer of any domain can complete before h */
        uint64_t h = hc;
        int active = 0;
        for (uint32_t i = 0; i < m->nd; i++) {
            if (!m->d[i].nx || m->d[i].nready)
                continue;
            active = 1;
            uint64_t b = cxlmem_next_bound(m, &m->d[i]);
            if (b < h)
                h = b;
        }
        if (!active) {
            if (hc != UINT64_MAX)
                for (uint32_t i = 0; i < m->nd; i++)
                    idle_to(&m->d[i], hc);
            return 0;
        }
        if (h == UINT64_MAX)
            return cxl_errf(err, CXL_EINTERNAL, "internal: CXL transfers active but nothing bounds their end");
        for (uint32_t i = 0; i < m->nd; i++) {
            domain *d = &m->d[i];
            int rc = 0;
            if (d->nready)
                continue;
            if (d->mode == MODE_DETAIL)
                rc = cxlmem_run_detail(m, d, h, err);
            if (rc == 0 && d->mode == MODE_EXTRAP && !d->nready)
                rc = cxlmem_run_extrap(m, d, h, err);
            if (d->mode == MODE_IDLE)
                idle_to(d, h);
            if (rc)
                return rc;
            if (d->nready && d->ready_cycle + 1 < h)
                return cxl_errf(err, CXL_EINTERNAL, "internal: a CXL transfer ended in cycle %llu, before the "
                                "synchronisation bound %llu (mode %d)", (unsigned long long)d->ready_cycle,
                                (unsigned long long)h, d->mode);
        }
        int found = 0;
        for (uint32_t i = 0; i < m->nd; i++)
            found |= m->d[i].nready != 0;
        if (!found && h >= hc)
            return 0;
    }
}

void cxlmem_get_stats(const cxlmem *m, cxlmem_stats *out) { *out = m->st; }

int cxlmem_report(cxlmem *m, uint32_t domain_id, cxlmem_domain_report *out, cxl_err *err)
{
    memset(out, 0, sizeof *out);
    if (domain_id >= m->nd)
        return cxl_errf(err, CXL_ECONFIG, "CXL domain %u does not exist", domain_id);
    domain *d = &m->d[domain_id];
    int rc = cxlmem_close_instance(m, d, err); /* folds the running instance's statistics in */
    if (rc)
        return rc;
    if (d->mode == MODE_DETAIL)
        d->mode = MODE_IDLE;
    out->read_bytes = d->read_bytes;
    out->write_bytes = d->write_bytes;
    out->busy_ps = cxlmem_ps_of(m, d->busy_cycles);
    double ns = 1e6 / (double)m->p.clk_khz;
    out->read_lat_ns[0] = hist_mean(&d->read_lat) * ns;
    out->read_lat_ns[1] = (double)hist_percentile(&d->read_lat, 0.5) * ns;
    out->read_lat_ns[2] = (double)hist_percentile(&d->read_lat, 0.99) * ns;
    out->read_lat_ns[3] = (double)d->read_lat.max * ns;
    uint64_t tot = d->devload[0] + d->devload[1] + d->devload[2] + d->devload[3];
    for (int k = 0; k < 4; k++)
        out->devload[k] = tot ? (double)d->devload[k] / (double)tot : 0;
    out->devices = m->p.devices < CXL_MAX_DEVS ? m->p.devices : CXL_MAX_DEVS;
    uint64_t cmds = 0;
    for (uint32_t dv = 0; dv < out->devices; dv++)
        cmds += d->dev_cmds[dv];
    for (uint32_t dv = 0; dv < out->devices; dv++) {
        out->dev_share[dv] = cmds ? (double)d->dev_cmds[dv] / (double)cmds : 0;
        uint64_t t = d->dev_devload[dv][0] + d->dev_devload[dv][1] + d->dev_devload[dv][2] + d->dev_devload[dv][3];
        for (int k = 0; k < 4; k++)
            out->dev_devload[dv][k] = t ? (double)d->dev_devload[dv][k] / (double)t : 0;
    }
    out->detailed_cycles = d->detailed;
    out->extrapolated_cycles = d->extrapolated;
    return 0;
}

void cxlmem_load(const cxlmem *m, uint32_t d, cxlmem_load_sums *out)
{
    memset(out, 0, sizeof *out);
    if (d >= m->nd)
        return;
    const domain *D = &m->d[d];
    load_sums l;
    cxlmem_load_total(D, &l);
    memcpy(out->devload_msgs, l.msgs, sizeof out->devload_msgs);
    out->ingress_occ = l.ingress;
    out->dram_queue_occ = l.dramq;
    out->cycles = (double)(D->detailed + D->extrapolated);
}

void cxlmem_domain_bytes(const cxlmem *m, uint32_t d, double *read_bytes, double *write_bytes)
{
    *read_bytes = d < m->nd ? m->d[d].read_bytes : 0;
    *write_bytes = d < m->nd ? m->d[d].write_bytes : 0;
}
