/* cxlmem.c - CXL domains under the training engine: transfers as chunk descriptors, lockstep
 * synchronisation bounded by a completion lower bound, steady-state extrapolation and its memo. */
#include "cxlmem.h"

#include "grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "stats_report.h"

enum { MODE_IDLE, MODE_DETAIL, MODE_EXTRAP };

typedef struct xfer {
    uint32_t tag, host;
    uint8_t rd, wr;
    uint32_t gap;           /* cycles between two lines of one requester (rate cap), 0 = none */
    uint64_t total;         /* bytes, multiple of 64 */
    double done;            /* bytes completed (detail completions + extrapolation) */
    uint64_t issued;        /* bytes handed to the current backend instance, counted from inst_base */
    uint64_t inst_base;     /* bytes already done when the current instance took over */
    uint64_t inst_done;     /* bytes completed in the current instance */
    uint64_t region;        /* base address of its region */
    uint32_t rr;            /* next requester (index among the host's requesters) */
    double win_done;        /* done at the start of the current measurement window */
    double rate, prev_rate; /* bytes per cycle */
    uint64_t seq;           /* start order: the canonical tie-break */
} xfer;

/* Load figures of a domain (cxlmem_load): S2M messages by DevLoad value and the sums over cycles of
 * the devices' ingress and DRAM queue occupancy (summed over the domain's devices). */
typedef struct load_sums {
    double msgs[4];
    double ingress, dramq;
} load_sums;

typedef struct memo_ent {
    uint32_t n;
    uint32_t *key;          /* n x (host, rd, wr, gap) packed as 4 words each, canonical order */
    double *rate;
    load_sums steady;       /* per cycle in the steady state */
} memo_ent;

typedef struct domain {
    cxl_backend *b;
    uint64_t base;          /* global cycle of the instance's cycle 0 */
    uint64_t now;           /* global cycle reached */
    int mode;
    uint64_t win_start;     /* global cycle where the current window (or warm-up) began */
    int windows;            /* measurement windows completed since the change */
    int long_windows;       /* of them, at the longest length */
    xfer *x;
    uint32_t nx, capx;
    /* completions found and not yet delivered (same cycle), in canonical order */
    uint64_t *ready_seq;     /* finished transfers (by seq: several may share a tag) */
    uint32_t nready, capready;
    uint64_t ready_cycle;
    /* reports */
    cxl_hist read_lat;
    uint64_t devload[4];
    uint64_t dev_cmds[CXL_MAX_DEVS], dev_devload[CXL_MAX_DEVS][4];
    double read_bytes, write_bytes;
    uint64_t busy_cycles, detailed, extrapolated;
    uint64_t next_region;
    uint32_t rr[CXL_MAX_REQ];  /* per requester: the transfer (position) its next chunk comes from */
    double unattributed;    /* bytes completed at the requesters in chunks not yet complete */
    double retired;         /* bytes of the instance's transfers that have left (completed, removed) */
    /* load figures (cxlmem_load): closed instances and extrapolated stretches, the running instance's
     * statistics as last read, the steady state's per-cycle figures while extrapolating, and the sums
     * at the start of the current and the previous measurement window (in detailed cycles) */
    load_sums load_closed, load_live, load_steady, win_load[2];
    uint64_t win_detailed[2];
} domain;

struct cxlmem {
    char backend[32];
    cxl_backend_opts bo;    /* strings borrowed from the caller, who outlives this */
    cxl_params p;
    int exact;
    domain *d;
    uint32_t nd;
    memo_ent *memo;
    uint32_t nmemo, capmemo;
    uint64_t seq;
    cxlmem_stats st;
    uint32_t last_domain, last_host;
    uint64_t capacity;      /* address space for regions */
    uint64_t ntx;           /* transfers in all domains (0: cxlmem_next has nothing to run) */
    int64_t idle_ps;        /* the latest horizon cxlmem_next saw with no transfer anywhere: every domain's
                               clock is at least there (idle_to, applied when a domain next starts one) */
};


/* ---- time ---- */

static int64_t ps_of(const cxlmem *m, uint64_t cycle)
{
    return (int64_t)((unsigned __int128)cycle * 1000000000u / m->p.clk_khz);
}

static uint64_t cycle_of(const cxlmem *m, int64_t ps)
{
    if (ps <= 0)
        return 0;
    unsigned __int128 n = (unsigned __int128)ps * m->p.clk_khz;
    return (uint64_t)((n + 999999999u) / 1000000000u);
}

/* ---- stats across backend instances ---- */

/* The load figures of an instance's per-device statistics (all devices). */
static void load_of(const cxlmem *m, const cxl_dev_stats *dev, load_sums *out)
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
static void load_add(load_sums *a, const load_sums *b, double f)
{
    for (int k = 0; k < 4; k++)
        a->msgs[k] += b->msgs[k] * f;
    a->ingress += b->ingress * f;
    a->dramq += b->dramq * f;
}

static void load_total(const domain *d, load_sums *out)
{
    *out = d->load_closed;
    load_add(out, &d->load_live, 1.0);
}

/* Mark the start of a measurement window (or the warm-up): the previous start is kept. */
static void load_window(domain *d)
{
    d->win_load[1] = d->win_load[0];
    d->win_detailed[1] = d->win_detailed[0];
    load_total(d, &d->win_load[0]);
    d->win_detailed[0] = d->detailed;
}

static int close_instance(cxlmem *m, domain *d, cxl_err *err)
{
    if (!d->b)
        return 0;
    cxl_stats s;
    int rc = cxl_backend_stats(d->b, &s, err);
    if (rc == 0) {
        load_sums l;
        load_of(m, s.dev, &l);
        load_add(&d->load_closed, &l, 1.0);
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
        x->done = (double)done64;
        x->inst_base = done64;
        x->issued = 0;
        x->inst_done = 0;
    }
    return 0;
}

/* ---- feeding descriptors ---- */

static uint32_t host_requesters(const cxlmem *m, uint32_t host)
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
static int feed(cxlmem *m, domain *d, cxl_err *err)
{
    for (uint32_t h = 0; h < m->p.hosts; h++) {
        uint32_t nreq = host_requesters(m, h);
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

/* ---- memo ---- */

static int xfer_cmp(const xfer *a, const xfer *b)
{
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->rd != b->rd)
        return a->rd < b->rd ? -1 : 1;
    if (a->wr != b->wr)
        return a->wr < b->wr ? -1 : 1;
    if (a->gap != b->gap)
        return a->gap < b->gap ? -1 : 1;
    return 0;
}

/* Canonical order of the domain's transfers into idx[]. */
static void canon(const domain *d, uint32_t *idx)
{
    for (uint32_t i = 0; i < d->nx; i++)
        idx[i] = i;
    for (uint32_t i = 1; i < d->nx; i++) {
        uint32_t v = idx[i], j = i;
        while (j > 0) {
            const xfer *a = &d->x[idx[j - 1]], *b = &d->x[v];
            int c = xfer_cmp(a, b);
            if (c < 0 || (c == 0 && a->seq < b->seq))
                break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static memo_ent *memo_find(cxlmem *m, const domain *d, const uint32_t *idx)
{
    for (uint32_t e = 0; e < m->nmemo; e++) {
        memo_ent *M = &m->memo[e];
        if (M->n != d->nx)
            continue;
        uint32_t i;
        for (i = 0; i < d->nx; i++) {
            const xfer *x = &d->x[idx[i]];
            const uint32_t *k = &M->key[4 * i];
            if (k[0] != x->host || k[1] != x->rd || k[2] != x->wr || k[3] != x->gap)
                break;
        }
        if (i == d->nx)
            return M;
    }
    return NULL;
}

static int memo_store(cxlmem *m, const domain *d, const uint32_t *idx)
{
    if (grow_array((void **)&m->memo, &m->capmemo, m->nmemo + 1, sizeof *m->memo))
        return CXL_ENOMEM;
    memo_ent *M = &m->memo[m->nmemo];
    M->n = d->nx;
    M->key = malloc((size_t)4 * d->nx * sizeof *M->key);
    M->rate = malloc((size_t)d->nx * sizeof *M->rate);
    if (!M->key || !M->rate) {
        free(M->key);
        free(M->rate);
        return CXL_ENOMEM;
    }
    for (uint32_t i = 0; i < d->nx; i++) {
        const xfer *x = &d->x[idx[i]];
        M->key[4 * i] = x->host;
        M->key[4 * i + 1] = x->rd;
        M->key[4 * i + 2] = x->wr;
        M->key[4 * i + 3] = x->gap;
        /* identical transfers share one rate (they are symmetric; averaging removes measurement noise) */
        double sum = 0;
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < d->nx; j++)
            if (xfer_cmp(&d->x[idx[j]], x) == 0) {
                sum += d->x[idx[j]].rate;
                cnt++;
            }
        M->rate[i] = sum / cnt;
    }
    M->steady = d->load_steady;
    m->nmemo++;
    return 0;
}

/* ---- changes ---- */

/* The set of active transfers changed at d->now: restart measurement, or take rates from the memo. */
static int changed(cxlmem *m, domain *d, cxl_err *err)
{
    if (d->nx == 0) {
        int rc = close_instance(m, d, err);
        d->mode = MODE_IDLE;
        return rc;
    }
    if (!m->exact) {
        uint32_t *idx = malloc(d->nx * sizeof *idx);
        if (!idx)
            return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
        canon(d, idx);
        memo_ent *M = memo_find(m, d, idx);
        if (M) {
            for (uint32_t i = 0; i < d->nx; i++)
                d->x[idx[i]].rate = M->rate[i];
            d->load_steady = M->steady;
            free(idx);
            m->st.memo_hits++;
            int rc = close_instance(m, d, err);
            d->mode = MODE_EXTRAP;
            return rc;
        }
        free(idx);
    }
    if (d->mode != MODE_DETAIL || !d->b) {
        int rc = close_instance(m, d, err);
        if (rc == 0)
            rc = open_instance(m, d, err);
        if (rc)
            return rc;
    }
    d->mode = MODE_DETAIL;
    d->win_start = d->now;
    load_window(d);
    load_window(d);
    d->windows = -1; /* warm-up first */
    d->long_windows = 0;
    for (uint32_t i = 0; i < d->nx; i++)
        d->x[i].win_done = d->x[i].done;
    return 0;
}

static void remove_xfer(cxlmem *m, domain *d, uint32_t i)
{
    d->x[i] = d->x[--d->nx];
    m->ntx--;
}

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
    uint64_t c = cycle_of(m, now_ps);
    idle_to(d, cycle_of(m, m->idle_ps));
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
    uint32_t nreq = host_requesters(m, host);
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
    return changed(m, d, err);
}

/* How far the domain may be simulated safely: every transfer completion has end_cycle >= the result - 1.
 * Detail: lines complete at a requester when their response (DRS for a read, NDR for a write) leaves the
 * host link; a 68 B flit carries at most 3 DRS and 2 NDR (the model's per-flit limits, docs/cxl-model.md),
 * one flit per flit time and link, so the transfer with the least left (lines already done inside
 * unfinished chunks counted as its own) needs at least that many flit times.
 * Extrapolation: exactly the first end + 1. */
static uint64_t next_bound(const cxlmem *m, const domain *d)
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
static int run_detail(cxlmem *m, domain *d, uint64_t h, cxl_err *err)
{
    while (d->now < h && d->nready == 0 && d->mode == MODE_DETAIL) {
        int rc = feed(m, d, err);
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
        load_of(m, st.dev, &d->load_live);
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
                load_total(d, &now);
                uint64_t cyc = d->detailed - d->win_detailed[1];
                memset(&d->load_steady, 0, sizeof d->load_steady);
                load_add(&now, &d->win_load[1], -1.0);
                if (cyc)
                    load_add(&d->load_steady, &now, 1.0 / (double)cyc);
                uint32_t *idx = malloc(d->nx * sizeof *idx);
                if (!idx)
                    return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
                canon(d, idx);
                rc = memo_store(m, d, idx);
                free(idx);
                if (rc)
                    return cxl_errf(err, CXL_ENOMEM, "out of memory (CXL memo)");
                rc = close_instance(m, d, err);
                if (rc)
                    return rc;
                d->mode = MODE_EXTRAP;
            }
            load_window(d);
        }
    }
    return 0;
}

/* Extrapolate up to global cycle h, or to the first completion if that comes first. A transfer with
 * `left` bytes at r bytes per cycle occupies k = ceil(left / r) more cycles and ends in cycle now + k - 1,
 * as a detailed one ends in the cycle its last line returns. */
static int run_extrap(cxlmem *m, domain *d, uint64_t h, cxl_err *err)
{
    uint64_t first = next_bound(m, d);
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
    load_add(&d->load_closed, &d->load_steady, (double)(to - d->now));
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
            canon(d, idx);
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
static int deliver(cxlmem *m, domain *d, int64_t *t_ps, uint32_t *tag, cxl_err *err)
{
    uint64_t seq = d->ready_seq[0];
    *t_ps = ps_of(m, d->ready_cycle);
    memmove(d->ready_seq, d->ready_seq + 1, (d->nready - 1) * sizeof *d->ready_seq);
    d->nready--;
    for (uint32_t i = 0; i < d->nx; i++)
        if (d->x[i].seq == seq) {
            *tag = d->x[i].tag;
            m->last_host = d->x[i].host;
            d->retired += (double)d->x[i].inst_done;
            remove_xfer(m, d, i);
            break;
        }
    return d->nready == 0 ? changed(m, d, err) : 0;
}

int cxlmem_next(cxlmem *m, int64_t horizon_ps, int64_t *t_ps, uint32_t *tag, cxl_err *err)
{
    if (m->ntx == 0) {
        /* nothing to run (most of the engine's events): what the loop below does then, in O(1) */
        if (horizon_ps != INT64_MAX && horizon_ps > m->idle_ps)
            m->idle_ps = horizon_ps;
        return 0;
    }
    uint64_t hc = horizon_ps == INT64_MAX ? UINT64_MAX : cycle_of(m, horizon_ps);
    for (;;) {
        /* completions already found come first: lowest cycle, then lowest domain */
        domain *best = NULL;
        for (uint32_t i = 0; i < m->nd; i++)
            if (m->d[i].nready && m->d[i].ready_cycle < hc && (!best || m->d[i].ready_cycle < best->ready_cycle))
                best = &m->d[i];
        if (best) {
            m->last_domain = (uint32_t)(best - m->d);
            int rc = deliver(m, best, t_ps, tag, err);
            return rc ? rc : 1;
        }
        /* the safe step: no transfer of any domain can complete before h */
        uint64_t h = hc;
        int active = 0;
        for (uint32_t i = 0; i < m->nd; i++) {
            if (!m->d[i].nx || m->d[i].nready)
                continue;
            active = 1;
            uint64_t b = next_bound(m, &m->d[i]);
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
                rc = run_detail(m, d, h, err);
            if (rc == 0 && d->mode == MODE_EXTRAP && !d->nready)
                rc = run_extrap(m, d, h, err);
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
    int rc = close_instance(m, d, err); /* folds the running instance's statistics in */
    if (rc)
        return rc;
    if (d->mode == MODE_DETAIL)
        d->mode = MODE_IDLE;
    out->read_bytes = d->read_bytes;
    out->write_bytes = d->write_bytes;
    out->busy_ps = ps_of(m, d->busy_cycles);
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
    load_total(D, &l);
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
