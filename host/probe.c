#include "probe.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "stats_report.h"

#define GIB (1024ull * 1024 * 1024)
#define REGION (64ull * 1024 * 1024) /* per-requester region for streaming */

void probe_default_opts(probe_opts *o)
{
    o->backend = "csim";
    o->idle_samples = 1000;
    o->warmup_us = 10;
    o->window_us = 50;
    o->curve_points = 12;
    o->curve_rd = 1;
    o->curve_wr = 0;
    o->seed = 1;
    memset(&o->bo, 0, sizeof o->bo);
    o->progress = NULL;
    o->progress_ctx = NULL;
}

typedef struct session {
    cxl_backend *b;
    cxl_params p;
    cxl_stats s0, s1;       /* snapshots (large: kept off the stack) */
} session;

/* Sessions hold two statistics snapshots (large), so they live on the heap. */
static int session_open(session **out, const devcfg *dev, const probe_opts *o, cxl_err *err)
{
    session *s = calloc(1, sizeof *s);
    if (!s)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    int rc = devcfg_to_params(dev, &s->p, err);
    if (!rc)
        rc = cxl_backend_open_opts(o->backend, &s->p, &o->bo, &s->b, err);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void session_close(session *s)
{
    cxl_backend_close(s->b);
    free(s);
}

static uint64_t us_to_cycles(const cxl_params *p, double us) { return (uint64_t)(us * (double)p->clk_khz / 1000.0); }

/* Advance until the descriptor `id` completes; give up (CXL_EINTERNAL) after `limit` cycles. */
static int run_until_done(session *s, uint64_t id, uint64_t limit, cxl_err *err)
{
    uint64_t stop_at = cxl_backend_now(s->b) + limit;
    for (;;) {
        cxl_completion c[64];
        size_t n;
        while ((n = cxl_backend_poll(s->b, c, 64)) > 0)
            for (size_t i = 0; i < n; i++)
                if (c[i].id == id)
                    return 0;
        if (cxl_backend_now(s->b) >= stop_at)
            return cxl_errf(err, CXL_EINTERNAL, "descriptor %llu did not complete within %llu cycles",
                            (unsigned long long)id, (unsigned long long)limit);
        int rc = cxl_backend_advance(s->b, stop_at, 1, err);
        if (rc)
            return rc;
    }
}

/* Advance to cycle t, discarding completions. */
static int run_to(session *s, uint64_t t, cxl_err *err)
{
    while (cxl_backend_now(s->b) < t) {
        int rc = cxl_backend_advance(s->b, t, 0, err);
        if (rc)
            return rc;
        cxl_completion c[256];
        while (cxl_backend_poll(s->b, c, 256) > 0) {
        }
    }
    return 0;
}

int probe_idle_latency(const devcfg *dev, const probe_opts *o, double *ns, uint64_t *cycles, cxl_err *err)
{
    session *sp = NULL;
    int rc = session_open(&sp, dev, o, err);
    if (rc)
        return rc;
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.pattern = CXL_PAT_RANDOM;
    d.footprint = GIB;
    d.max_outstanding = 1;
    d.rd_weight = 1;
    d.seed = o->seed;
    /* warm-up: open rows everywhere, so measured reads see the steady row-miss state */
    d.id = 1;
    d.bytes = 256 * CXL_LINE_BYTES;
    rc = cxl_backend_submit(sp->b, &d, 1, err);
    if (!rc)
        rc = run_until_done(sp, 1, 100000000ull, err);
    if (!rc)
        rc = cxl_backend_stats(sp->b, &sp->s0, err);
    d.id = 2;
    d.bytes = (uint64_t)o->idle_samples * CXL_LINE_BYTES;
    if (!rc)
        rc = cxl_backend_submit(sp->b, &d, 1, err);
    if (!rc)
        rc = run_until_done(sp, 2, 1000000000ull, err);
    if (!rc)
        rc = cxl_backend_stats(sp->b, &sp->s1, err);
    if (!rc) {
        double mean = (double)(sp->s1.read_lat.sum - sp->s0.read_lat.sum) /
                      (double)(sp->s1.read_lat.count - sp->s0.read_lat.count);
        *ns = mean * 1e6 / (double)sp->p.clk_khz;
        *cycles = sp->s1.cycles;
    }
    session_close(sp);
    return rc;
}

/* Stream from every requester; measure a window. Fills s0/s1 snapshots. */
static int stream_window(session *s, const probe_opts *o, uint32_t rd, uint32_t wr, uint32_t pattern, uint32_t gap,
                         cxl_err *err)
{
    cxl_desc d[CXL_MAX_REQ];
    memset(d, 0, sizeof d);
    for (uint32_t r = 0; r < s->p.requesters; r++) {
        d[r].id = 100 + r;
        d[r].requester = (uint16_t)r;
        d[r].base = r * REGION;
        d[r].bytes = 1ull << 40; /* longer than any window */
        d[r].footprint = REGION;
        d[r].pattern = (uint8_t)pattern;
        d[r].rd_weight = (uint8_t)rd;
        d[r].wr_weight = (uint8_t)wr;
        d[r].max_outstanding = (uint16_t)s->p.tags;
        d[r].seed = o->seed;
        d[r].gap_cycles = gap;
    }
    int rc = cxl_backend_submit(s->b, d, s->p.requesters, err);
    uint64_t t0 = us_to_cycles(&s->p, o->warmup_us);
    uint64_t t1 = t0 + us_to_cycles(&s->p, o->window_us);
    if (!rc)
        rc = run_to(s, t0, err);
    if (!rc)
        rc = cxl_backend_stats(s->b, &s->s0, err);
    if (!rc)
        rc = run_to(s, t1, err);
    if (!rc)
        rc = cxl_backend_stats(s->b, &s->s1, err);
    return rc;
}

static double window_gbps(const session *s)
{
    uint64_t bytes = (s->s1.read_bytes + s->s1.write_bytes) - (s->s0.read_bytes + s->s0.write_bytes);
    double secs = (double)(s->s1.cycles - s->s0.cycles) / ((double)s->p.clk_khz * 1000.0);
    return (double)bytes / secs / 1e9;
}

int probe_bandwidth(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, uint32_t pattern,
                    double *gbps, uint64_t *cycles, window_stats *ws, cxl_err *err)
{
    session *sp = NULL;
    int rc = session_open(&sp, dev, o, err);
    if (rc)
        return rc;
    rc = stream_window(sp, o, rd, wr, pattern, 0, err);
    if (!rc) {
        *gbps = window_gbps(sp);
        *cycles = sp->s1.cycles;
        if (ws) {
            cxl_hist *h = malloc(sizeof *h);
            if (!h)
                rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            else
                window_stats_compute(ws, &sp->s1, &sp->s0, &sp->p, h);
            free(h);
        }
    }
    session_close(sp);
    return rc;
}

static int curve_point(const devcfg *dev, const probe_opts *o, uint32_t gap, probe_point *pt, uint64_t *cycles,
                       cxl_err *err)
{
    session *sp = NULL;
    int rc = session_open(&sp, dev, o, err);
    if (rc)
        return rc;
    cxl_hist *hp = malloc(sizeof *hp);
    if (!hp) {
        session_close(sp);
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    }
    rc = stream_window(sp, o, o->curve_rd, o->curve_wr, CXL_PAT_RANDOM, gap, err);
    if (!rc) {
        const int use_w = o->curve_rd == 0;
        hist_delta(hp, use_w ? &sp->s1.write_lat : &sp->s1.read_lat, use_w ? &sp->s0.write_lat : &sp->s0.read_lat);
        double ns_per_cycle = 1e6 / (double)sp->p.clk_khz;
        pt->offered_gbps = (double)sp->p.requesters * CXL_LINE_BYTES * (double)sp->p.clk_khz * 1000.0 / gap / 1e9;
        /* A window in which nothing completed (an offered interval longer than the window, on a slow
         * link) measures nothing: n/a (NaN, JSON null), not 0 GB/s at 0 ns. */
        uint64_t bytes = (sp->s1.read_bytes + sp->s1.write_bytes) - (sp->s0.read_bytes + sp->s0.write_bytes);
        pt->completions = hp->count;
        pt->achieved_gbps = bytes ? window_gbps(sp) : NAN;
        pt->mean_latency_ns = hp->count ? hist_mean(hp) * ns_per_cycle : NAN;
        pt->p99_latency_ns = hp->count ? (double)hist_percentile(hp, 0.99) * ns_per_cycle : NAN;
        *cycles = sp->s1.cycles;
    }
    free(hp);
    session_close(sp);
    return rc;
}

/* Report that done of total measurements have finished (each is one model instance). */
static void progress(const probe_opts *o, uint32_t done, uint32_t total)
{
    if (o->progress)
        o->progress(o->progress_ctx, (double)done / total);
}

int probe_run(const devcfg *dev, const devcfg *ref, const probe_opts *o, probe_result *r, cxl_err *err)
{
    memset(r, 0, sizeof *r);
    /* 2 idle latencies, 4 bandwidths, the saturation of the curve's mix, the curve's points (at most) */
    uint32_t total = 7 + (o->curve_points < 2 ? 2 : o->curve_points > PROBE_MAX_POINTS ? PROBE_MAX_POINTS
                                                                                       : o->curve_points);
    uint64_t cyc = 0;
    int rc = probe_idle_latency(dev, o, &r->idle_read_latency_ns, &cyc, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, 1, total);
    probe_opts untraced = *o; /* the waveform covers the first model instance only */
    untraced.bo.trace_fst = NULL;
    o = &untraced;
    rc = probe_idle_latency(ref, o, &r->local_idle_read_latency_ns, &cyc, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, 2, total);
    static const uint32_t mix[4][2] = { { 1, 0 }, { 2, 1 }, { 1, 1 }, { 0, 1 } };
    for (int i = 0; i < 4; i++) {
        rc = probe_bandwidth(dev, o, mix[i][0], mix[i][1], CXL_PAT_SEQ, &r->bw_gbps[i], &cyc, &r->bw_stats[i], err);
        if (rc)
            return rc;
        r->simulated_cycles += cyc;
        progress(o, 3 + (uint32_t)i, total);
    }
    double sat;
    rc = probe_bandwidth(dev, o, o->curve_rd, o->curve_wr, CXL_PAT_RANDOM, &sat, &cyc, NULL, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, 7, total);
    cxl_params p;
    rc = devcfg_to_params(dev, &p, err);
    if (rc)
        return rc;
    uint32_t n = o->curve_points < 2 ? 2 : o->curve_points > PROBE_MAX_POINTS ? PROBE_MAX_POINTS : o->curve_points;
    uint32_t prev_gap = 0;
    for (uint32_t i = 0; i < n; i++) {
        double f = 0.1 + (1.25 - 0.1) * i / (n - 1);
        double bytes_per_s = (double)p.requesters * CXL_LINE_BYTES * (double)p.clk_khz * 1000.0;
        double g = bytes_per_s / (f * sat * 1e9);
        uint32_t gap = g < 1 ? 1 : (uint32_t)(g + 0.5);
        if (gap == prev_gap)
            continue;
        prev_gap = gap;
        rc = curve_point(dev, o, gap, &r->curve[r->npoints], &cyc, err);
        if (rc)
            return rc;
        r->npoints++;
        r->simulated_cycles += cyc;
        progress(o, 8 + i, total);
    }
    return 0;
}
