#include "devtools/probe.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "cxl/stats_report.h"

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
    o->nmixes = 0;
    memset(o->mix, 0, sizeof o->mix);
    o->arrivals = PROBE_ARRIVALS_STAGGERED;
    o->seed = 1;
    memset(&o->bo, 0, sizeof o->bo);
    o->progress = NULL;
    o->progress_ctx = NULL;
}

int probe_parse_mixes(probe_opts *o, const char *s)
{
    uint32_t n = 0;
    while (*s) {
        char *end;
        if (n == PROBE_MAX_MIXES || *s < '0' || *s > '9')
            return -1;
        unsigned long a = strtoul(s, &end, 10);
        if (*end != ':' || end[1] < '0' || end[1] > '9')
            return -1;
        unsigned long b = strtoul(end + 1, &end, 10);
        if (a > 255 || b > 255 || (a == 0 && b == 0) || (*end && *end != ','))
            return -1;
        o->mix[n][0] = (uint32_t)a;
        o->mix[n][1] = (uint32_t)b;
        n++;
        s = *end ? end + 1 : end;
        if (*end && !*s)
            return -1; /* a trailing comma */
    }
    if (!n)
        return -1;
    o->nmixes = n;
    return 0;
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

/* splitmix64: the host's own seeded sequence (stream offsets, Poisson intervals); never 0 */
static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
}

/* What one measurement window drives: every requester (or the first `streams`) with one endless
 * descriptor, or, for Poisson arrivals, one line per descriptor fed from the host. */
typedef struct traffic {
    uint32_t rd, wr, pattern;
    uint32_t streams;   /* requesters driven (<= p.requesters) */
    uint32_t arrivals;  /* enum probe_arrivals (pattern RANDOM with an interval only) */
    uint32_t gap;       /* fixed interval per requester in cycles (0: as fast as tags allow) */
    double mean_gap;    /* Poisson: mean interval per requester in cycles */
} traffic;

/* The first line of requester r's buffer: r x 64 MiB plus a seeded line offset within the buffer, so that
 * the streams start at unrelated banks, rows and columns (MLC's per-thread buffers do not start at
 * 64 MiB-aligned physical addresses either). */
static uint64_t stream_base(const probe_opts *o, uint32_t r)
{
    uint64_t lines = REGION / CXL_LINE_BYTES;
    return r * REGION + (mix64(((uint64_t)o->seed << 32) ^ (0x5354u + r)) % lines) * CXL_LINE_BYTES;
}

/* Snapshot s0 at the end of the warm-up, s1 at the end of the window. */
static int measure(session *s, const probe_opts *o, cxl_err *err)
{
    uint64_t t0 = us_to_cycles(&s->p, o->warmup_us);
    uint64_t t1 = t0 + us_to_cycles(&s->p, o->window_us);
    int rc = run_to(s, t0, err);
    if (!rc)
        rc = cxl_backend_stats(s->b, &s->s0, err);
    if (!rc)
        rc = run_to(s, t1, err);
    if (!rc)
        rc = cxl_backend_stats(s->b, &s->s1, err);
    return rc;
}

/* Fixed-interval or streaming traffic: one endless descriptor per requester. Staggered arrivals start
 * requester r at r x gap / requesters, so the requests reach the device evenly spaced instead of in
 * bursts of one per requester. */
static int stream_window(session *s, const probe_opts *o, const traffic *t, cxl_err *err)
{
    cxl_desc d[CXL_MAX_REQ];
    memset(d, 0, sizeof d);
    for (uint32_t r = 0; r < t->streams; r++) {
        d[r].id = 100 + r;
        d[r].requester = (uint16_t)r;
        d[r].base = t->pattern == CXL_PAT_SEQ ? stream_base(o, r) : r * REGION;
        d[r].bytes = 1ull << 40; /* longer than any window */
        d[r].footprint = REGION;
        d[r].pattern = (uint8_t)t->pattern;
        d[r].rd_weight = (uint8_t)t->rd;
        d[r].wr_weight = (uint8_t)t->wr;
        d[r].max_outstanding = (uint16_t)s->p.tags;
        d[r].seed = o->seed;
        d[r].gap_cycles = t->gap;
        if (t->arrivals == PROBE_ARRIVALS_STAGGERED)
            d[r].not_before = (uint64_t)r * t->gap / t->streams;
    }
    int rc = cxl_backend_submit(s->b, d, t->streams, err);
    return rc ? rc : measure(s, o, err);
}

/* Poisson arrivals: each requester's accesses arrive at exponentially distributed intervals (mean
 * t->mean_gap cycles, from a seeded generator per requester); each is a one-line descriptor whose
 * not_before is its arrival cycle, submitted in steps of POISSON_STEP cycles while the requester's
 * descriptor queue has room. A requester holds at most CXL_DESCQ such descriptors, so at most CXL_DESCQ
 * of its accesses are in flight (fewer than its tags): past saturation, arrivals wait on the host and
 * the latency, counted from issue as in every probe measurement, stays lower than with fixed intervals.
 * The submissions depend only on cycle counts and queue room, so every backend sees the same ones. */
#define POISSON_STEP 64u
static int poisson_window(session *s, const probe_opts *o, const traffic *t, cxl_err *err)
{
    uint64_t rng[CXL_MAX_REQ], n[CXL_MAX_REQ];
    double next[CXL_MAX_REQ];
    for (uint32_t r = 0; r < t->streams; r++) {
        rng[r] = mix64(((uint64_t)o->seed << 32) ^ (0x504F0000u + r));
        n[r] = 0;
        next[r] = 0;
    }
    uint64_t t0 = us_to_cycles(&s->p, o->warmup_us);
    uint64_t t1 = t0 + us_to_cycles(&s->p, o->window_us);
    uint64_t now = 0;
    int rc = 0;
    while (!rc) {
        cxl_desc d[CXL_MAX_REQ * CXL_DESCQ];
        size_t nd = 0;
        for (uint32_t r = 0; r < t->streams; r++) {
            for (uint32_t room = cxl_backend_space(s->b, r); room && next[r] < (double)(now + POISSON_STEP); room--) {
                cxl_desc *x = &d[nd++];
                memset(x, 0, sizeof *x);
                x->id = ((uint64_t)(r + 1) << 40) | n[r];
                x->requester = (uint16_t)r;
                x->base = r * REGION;
                x->bytes = CXL_LINE_BYTES;
                x->footprint = REGION;
                x->pattern = CXL_PAT_RANDOM;
                /* the mix as the requester interleaves it: access k is a write when floor((k+1) w / (r+w))
                 * passes floor(k w / (r+w)) (requester.h) */
                uint64_t w = t->wr, tot = (uint64_t)t->rd + t->wr;
                int write = (n[r] + 1) * w / tot > n[r] * w / tot;
                x->rd_weight = (uint8_t)!write;
                x->wr_weight = (uint8_t)write;
                x->max_outstanding = 1;
                x->seed = o->seed;
                x->not_before = (uint64_t)ceil(next[r]);
                n[r]++;
                rng[r] = mix64(rng[r]);
                double u = (double)(rng[r] >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
                next[r] += -log1p(-u) * t->mean_gap;
            }
        }
        if (nd)
            rc = cxl_backend_submit(s->b, d, nd, err);
        if (rc)
            break;
        if (now == t0)
            rc = cxl_backend_stats(s->b, &s->s0, err);
        if (rc || now == t1) {
            if (!rc)
                rc = cxl_backend_stats(s->b, &s->s1, err);
            break;
        }
        uint64_t to = now + POISSON_STEP;
        uint64_t mark = now < t0 ? t0 : t1;
        if (to > mark)
            to = mark;
        rc = run_to(s, to, err);
        now = to;
    }
    return rc;
}

static double window_gbps(const session *s)
{
    uint64_t bytes = (s->s1.read_bytes + s->s1.write_bytes) - (s->s0.read_bytes + s->s0.write_bytes);
    double secs = (double)(s->s1.cycles - s->s0.cycles) / ((double)s->p.clk_khz * 1000.0);
    return (double)bytes / secs / 1e9;
}

int probe_bandwidth(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, uint32_t pattern,
                    uint32_t streams, double *gbps, uint64_t *cycles, window_stats *ws, cxl_err *err)
{
    session *sp = NULL;
    int rc = session_open(&sp, dev, o, err);
    if (rc)
        return rc;
    traffic t = { rd, wr, pattern, streams && streams < sp->p.requesters ? streams : sp->p.requesters,
                  PROBE_ARRIVALS_ALIGNED, 0, 0 };
    rc = stream_window(sp, o, &t, err);
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

/* One point of a loaded-latency curve: every requester at interval g cycles (the mean, for Poisson). */
static int curve_point(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, double g, probe_point *pt,
                       uint64_t *cycles, cxl_err *err)
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
    traffic t = { rd, wr, CXL_PAT_RANDOM, sp->p.requesters, o->arrivals, (uint32_t)g, g };
    rc = o->arrivals == PROBE_ARRIVALS_POISSON ? poisson_window(sp, o, &t, err) : stream_window(sp, o, &t, err);
    if (!rc) {
        const int use_w = rd == 0;
        hist_delta(hp, use_w ? &sp->s1.write_lat : &sp->s1.read_lat, use_w ? &sp->s0.write_lat : &sp->s0.read_lat);
        double ns_per_cycle = 1e6 / (double)sp->p.clk_khz;
        pt->offered_gbps = (double)sp->p.requesters * CXL_LINE_BYTES * (double)sp->p.clk_khz * 1000.0 / g / 1e9;
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

static uint32_t curve_npoints(const probe_opts *o)
{
    return o->curve_points < 2 ? 2 : o->curve_points > PROBE_MAX_POINTS ? PROBE_MAX_POINTS : o->curve_points;
}

/* A loaded-latency curve of mix rd:wr: its saturation (random accesses, every requester, all tags), then
 * offered loads from 10 % to 125 % of it. *done counts the measurements for the progress line. */
static int probe_curve_run(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, probe_curve *c,
                           uint64_t *simulated, uint32_t *done, uint32_t total, cxl_err *err)
{
    uint64_t cyc;
    c->rd = rd;
    c->wr = wr;
    c->npoints = 0;
    int rc = probe_bandwidth(dev, o, rd, wr, CXL_PAT_RANDOM, 0, &c->saturation_gbps, &cyc, NULL, err);
    if (rc)
        return rc;
    *simulated += cyc;
    progress(o, ++*done, total);
    cxl_params p;
    rc = devcfg_to_params(dev, &p, err);
    if (rc)
        return rc;
    uint32_t n = curve_npoints(o);
    double prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        double f = 0.1 + (1.25 - 0.1) * i / (n - 1);
        double bytes_per_s = (double)p.requesters * CXL_LINE_BYTES * (double)p.clk_khz * 1000.0;
        double g = bytes_per_s / (f * c->saturation_gbps * 1e9);
        /* fixed intervals are whole cycles; Poisson intervals keep the exact mean */
        if (o->arrivals != PROBE_ARRIVALS_POISSON)
            g = g < 1 ? 1 : floor(g + 0.5);
        if (g == prev) {
            progress(o, ++*done, total);
            continue;
        }
        prev = g;
        rc = curve_point(dev, o, rd, wr, g, &c->pt[c->npoints], &cyc, err);
        if (rc)
            return rc;
        c->npoints++;
        *simulated += cyc;
        progress(o, ++*done, total);
    }
    return 0;
}

int probe_run(const devcfg *dev, const devcfg *ref, const probe_opts *o, probe_result *r, cxl_err *err)
{
    static const uint32_t defmix[4][2] = { { 1, 0 }, { 2, 1 }, { 1, 1 }, { 0, 1 } };
    memset(r, 0, sizeof *r);
    if (o->nmixes) {
        r->nbw = r->ncurves = o->nmixes < PROBE_MAX_MIXES ? o->nmixes : PROBE_MAX_MIXES;
        memcpy(r->bw_mix, o->mix, sizeof r->bw_mix);
    } else {
        r->nbw = 4;
        r->ncurves = 1;
        memcpy(r->bw_mix, defmix, sizeof defmix);
    }
    /* 2 idle latencies, the single stream, the bandwidths, per curve its saturation and points (at most) */
    uint32_t total = 3 + r->nbw + r->ncurves * (1 + curve_npoints(o)), done = 0;
    uint64_t cyc = 0;
    int rc = probe_idle_latency(dev, o, &r->idle_read_latency_ns, &cyc, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, ++done, total);
    probe_opts untraced = *o; /* the waveform covers the first model instance only */
    untraced.bo.trace_fst = NULL;
    o = &untraced;
    rc = probe_idle_latency(ref, o, &r->local_idle_read_latency_ns, &cyc, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, ++done, total);
    rc = probe_bandwidth(dev, o, 1, 0, CXL_PAT_SEQ, 1, &r->single_stream_gbps, &cyc, &r->single_stream_stats, err);
    if (rc)
        return rc;
    r->simulated_cycles += cyc;
    progress(o, ++done, total);
    for (uint32_t i = 0; i < r->nbw; i++) {
        rc = probe_bandwidth(dev, o, r->bw_mix[i][0], r->bw_mix[i][1], CXL_PAT_SEQ, 0, &r->bw_gbps[i], &cyc,
                             &r->bw_stats[i], err);
        if (rc)
            return rc;
        r->simulated_cycles += cyc;
        progress(o, ++done, total);
    }
    for (uint32_t i = 0; i < r->ncurves; i++) {
        uint32_t rd = o->nmixes ? r->bw_mix[i][0] : o->curve_rd, wr = o->nmixes ? r->bw_mix[i][1] : o->curve_wr;
        rc = probe_curve_run(dev, o, rd, wr, &r->curves[i], &r->simulated_cycles, &done, total, err);
        if (rc)
            return rc;
    }
    return 0;
}
