/* compare.c - the comparison engine (see compare.h for the drive loop and the difference search). */
#include "devtools/compare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "out/outfile.h"

#define CMP_STEP_DEFAULT (1ull << 32) /* longest advance: long enough that only completions stop it */
#define CMP_GRID 64u                  /* statistics checkpoints per interval of the difference search */

enum { ST_WAITING = 0, ST_SUBMITTED = 1, ST_DONE = 2 };
enum { OUT_DONE, OUT_LIMIT, OUT_DIFF, OUT_STATS };

typedef struct cmp_buf {
    cxl_completion *c;
    size_t n, cap;
} cmp_buf;

typedef struct cmp_ctx {
    const cxl_params *p;
    const trace *t;
    const cmp_opts *o;
    const char *name[2];
    /* the same for every run */
    size_t *order;                   /* trace indices grouped by requester, trace order within each */
    size_t rstart[CXL_MAX_REQ + 1];  /* requester r's part of order[] */
    uint64_t *byid;                  /* (id, index) pairs sorted by id; NULL when ids are 1..n in order */
    uint8_t *state;                  /* per descriptor: ST_* */
    cxl_desc batch[CXL_MAX_REQ * CXL_DESCQ];
    cmp_buf buf[2];
    cxl_stats *st[2];
    /* one run */
    cxl_backend *be[2];
    size_t rnext[CXL_MAX_REQ];
    uint64_t submitted, completed, advances;
    int limit_hit;                   /* the run stopped at max_cycles */
    /* the statistics window of a search run: checkpoints at lo + k x wstep and at hi, within (lo, hi] */
    int window;
    uint64_t lo, hi, wstep, last_equal;
    cmp_diff stats_diff;             /* what differs at the first checkpoint that differs */
} cmp_ctx;

void cmp_default_opts(cmp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend_a = "csim";
    o->backend_b = "verilator";
    o->locate = 1;
}

/* ---- the report of one difference ----------------------------------------------------------------- */

static void diff_set(cmp_diff *d, uint64_t cycle, const char *unit, const char *field)
{
    memset(d, 0, sizeof *d);
    d->cycle = cycle;
    snprintf(d->unit, sizeof d->unit, "%s", unit);
    snprintf(d->field, sizeof d->field, "%s", field);
}

static void val(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void val(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

static int diff_u64(cmp_diff *d, uint64_t cycle, const char *unit, const char *field, uint64_t a, uint64_t b)
{
    diff_set(d, cycle, unit, field);
    val(d->a, sizeof d->a, "%llu", (unsigned long long)a);
    val(d->b, sizeof d->b, "%llu", (unsigned long long)b);
    return 1;
}

/* ---- statistics, field by field in struct order ---------------------------------------------------- */

static int hist_diff(const cxl_hist *a, const cxl_hist *b, const char *name, uint64_t cycle, cmp_diff *d)
{
    char f[112];
    for (uint32_t i = 0; i < CXL_HIST_LINEAR; i++)
        if (a->linear[i] != b->linear[i]) {
            snprintf(f, sizeof f, "stats %s.linear[%u] (lines with latency %u cycles)", name, i, i);
            return diff_u64(d, cycle, "requesters", f, a->linear[i], b->linear[i]);
        }
    for (uint32_t k = 0; k < CXL_HIST_LOG; k++)
        if (a->log[k] != b->log[k]) {
            snprintf(f, sizeof f, "stats %s.log[%u]", name, k);
            return diff_u64(d, cycle, "requesters", f, a->log[k], b->log[k]);
        }
    const char *names[3] = { "count", "sum", "max" };
    const uint64_t va[3] = { a->count, a->sum, a->max }, vb[3] = { b->count, b->sum, b->max };
    for (int k = 0; k < 3; k++)
        if (va[k] != vb[k]) {
            snprintf(f, sizeof f, "stats %s.%s", name, names[k]);
            return diff_u64(d, cycle, "requesters", f, va[k], vb[k]);
        }
    return 0;
}

/* The first field in which a and b differ, as read at cycle `now` (so counted by cycle now - 1). */
static int stats_diff(const cxl_params *p, const cxl_stats *a, const cxl_stats *b, uint64_t now, cmp_diff *d)
{
    static const char *const dir[2] = { "m2s", "s2m" };
    static const char *const cls[CXL_NCLASS] = { "m2s_req", "m2s_rwd", "s2m_drs", "s2m_ndr" };
    uint64_t cycle = now ? now - 1 : 0;
    char f[112], u[48];
    if (a->cycles != b->cycles)
        return diff_u64(d, cycle, "model", "stats cycles", a->cycles, b->cycles);
    if (a->read_bytes != b->read_bytes)
        return diff_u64(d, cycle, "requesters", "stats read_bytes", a->read_bytes, b->read_bytes);
    if (a->write_bytes != b->write_bytes)
        return diff_u64(d, cycle, "requesters", "stats write_bytes", a->write_bytes, b->write_bytes);
    if (hist_diff(&a->read_lat, &b->read_lat, "read_lat", cycle, d) ||
        hist_diff(&a->write_lat, &b->write_lat, "write_lat", cycle, d))
        return 1;
    for (uint32_t i = 0; i < CXL_MAX_HOSTS + CXL_MAX_DEVS; i++) {
        const cxl_link_stats *x = &a->link[i], *y = &b->link[i];
        if (p->sw.present && i >= p->hosts)
            snprintf(u, sizeof u, "link %u (switch to device %u)", i, i - p->hosts);
        else if (p->sw.present)
            snprintf(u, sizeof u, "link %u (host %u)", i, i);
        else
            snprintf(u, sizeof u, "link %u", i);
        const struct {
            const char *name;
            const uint64_t *va, *vb;
            int n;
            const char *const *idx;
        } arr[5] = {
            { "flits", x->flits, y->flits, 2, dir },
            { "data_flits", x->data_flits, y->data_flits, 2, dir },
            { "slots_used", x->slots_used, y->slots_used, 2, dir },
            { "msgs", x->msgs, y->msgs, CXL_NCLASS, cls },
            { "credit_stall", x->credit_stall, y->credit_stall, CXL_NCLASS, cls },
        };
        for (int k = 0; k < 5; k++)
            for (int j = 0; j < arr[k].n; j++)
                if (arr[k].va[j] != arr[k].vb[j]) {
                    snprintf(f, sizeof f, "stats link[%u].%s[%s]", i, arr[k].name, arr[k].idx[j]);
                    return diff_u64(d, cycle, u, f, arr[k].va[j], arr[k].vb[j]);
                }
    }
    for (uint32_t i = 0; i < CXL_MAX_DEVS; i++) {
        const cxl_dev_stats *x = &a->dev[i], *y = &b->dev[i];
        snprintf(u, sizeof u, "device %u", i);
        const char *names[9] = { "reads", "writes", "acts", "pres", "refs", "row_conflicts",
                                 "ingress_occ_sum", "ingress_occ_max", "dramq_occ_sum" };
        const uint64_t va[9] = { x->reads, x->writes, x->acts, x->pres, x->refs, x->row_conflicts,
                                 x->ingress_occ_sum, x->ingress_occ_max, x->dramq_occ_sum };
        const uint64_t vb[9] = { y->reads, y->writes, y->acts, y->pres, y->refs, y->row_conflicts,
                                 y->ingress_occ_sum, y->ingress_occ_max, y->dramq_occ_sum };
        for (int k = 0; k < 9; k++)
            if (va[k] != vb[k]) {
                snprintf(f, sizeof f, "stats dev[%u].%s", i, names[k]);
                return diff_u64(d, cycle, u, f, va[k], vb[k]);
            }
        for (int k = 0; k < 4; k++)
            if (x->devload[k] != y->devload[k]) {
                snprintf(f, sizeof f, "stats dev[%u].devload[%d]", i, k);
                return diff_u64(d, cycle, u, f, x->devload[k], y->devload[k]);
            }
    }
    if (a->switch_stall != b->switch_stall)
        return diff_u64(d, cycle, "switch", "stats switch_stall", a->switch_stall, b->switch_stall);
    return 0;
}

/* ---- completions ------------------------------------------------------------------------------------ */

static int comp_order(const void *x, const void *y)
{
    const cxl_completion *a = x, *b = y;
    if (a->end_cycle != b->end_cycle)
        return a->end_cycle < b->end_cycle ? -1 : 1;
    if (a->requester != b->requester)
        return a->requester < b->requester ? -1 : 1;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    if (a->start_cycle != b->start_cycle)
        return a->start_cycle < b->start_cycle ? -1 : 1;
    return a->lines < b->lines ? -1 : a->lines > b->lines;
}

static int comp_same(const cxl_completion *a, const cxl_completion *b)
{
    return a->id == b->id && a->start_cycle == b->start_cycle && a->end_cycle == b->end_cycle &&
           a->requester == b->requester && a->lines == b->lines;
}

/* a (backend A) and b (backend B) complete the same id: the first field that differs, struct order. */
static void comp_field_diff(const cxl_completion *a, const cxl_completion *b, cmp_diff *d)
{
    const char *names[4] = { "start_cycle", "end_cycle", "requester", "lines" };
    const uint64_t va[4] = { a->start_cycle, a->end_cycle, a->requester, a->lines };
    const uint64_t vb[4] = { b->start_cycle, b->end_cycle, b->requester, b->lines };
    char u[48], f[112];
    snprintf(u, sizeof u, "requester %u", a->requester);
    for (int k = 0; k < 4; k++)
        if (va[k] != vb[k]) {
            snprintf(f, sizeof f, "completion id %llu %s", (unsigned long long)a->id, names[k]);
            diff_u64(d, a->end_cycle < b->end_cycle ? a->end_cycle : b->end_cycle, u, f, va[k], vb[k]);
            return;
        }
}

static size_t count_id(const cmp_buf *b, uint64_t id, const cxl_completion **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < b->n; i++)
        if (b->c[i].id == id && !n++)
            *first = &b->c[i];
    return n;
}

/* z, from side s, is missing or different on the other side, which has reached cycle other_now.
 * Returns 0 (d untouched) when the other side has the same completion as often. */
static int comp_missing(const cmp_ctx *c, int s, const cxl_completion *z, uint64_t other_now, cmp_diff *d)
{
    const cxl_completion *w;
    const cmp_buf *own = &c->buf[s], *other = &c->buf[!s];
    size_t n_own = count_id(own, z->id, &w), n_other = count_id(other, z->id, &w);
    char u[48], f[112];
    snprintf(u, sizeof u, "requester %u", z->requester);
    if (n_other && n_own != n_other) {
        snprintf(f, sizeof f, "completion id %llu reported (times, at cycle %llu)", (unsigned long long)z->id,
                 (unsigned long long)z->end_cycle);
        diff_u64(d, z->end_cycle, u, f, s ? n_other : n_own, s ? n_own : n_other);
    } else if (n_other) {
        if (comp_same(z, w))
            return 0;
        comp_field_diff(s ? w : z, s ? z : w, d);
    } else {
        snprintf(f, sizeof f, "completion id %llu end_cycle", (unsigned long long)z->id);
        diff_set(d, z->end_cycle, u, f);
        char *mine = s ? d->b : d->a, *theirs = s ? d->a : d->b;
        val(mine, sizeof d->a, "%llu", (unsigned long long)z->end_cycle);
        val(theirs, sizeof d->a, "not completed by cycle %llu", (unsigned long long)(other_now ? other_now - 1 : 0));
    }
    return 1;
}

/* After both advanced: A reached now_a, B now_b, completions in buf[0], buf[1] (sorted here).
 * Returns 1 with d filled at the first difference. */
static int compare_stop(cmp_ctx *c, uint64_t now_a, uint64_t now_b, cmp_diff *d)
{
    cmp_buf *a = &c->buf[0], *b = &c->buf[1];
    qsort(a->c, a->n, sizeof *a->c, comp_order);
    qsort(b->c, b->n, sizeof *b->c, comp_order);
    if (now_b > now_a) /* B ran past the cycle it was asked to stop at */
        return diff_u64(d, now_a, "model", "now (the cycle an advance stopped at)", now_a, now_b);
    if (now_b < now_a) { /* B stopped earlier: on a completion A did not produce then */
        if (b->n && comp_missing(c, 1, &b->c[0], now_a, d))
            return 1;
        /* or on the same completions, at another cycle: its advance stops elsewhere */
        return diff_u64(d, now_b, "model", "now (the cycle an advance stopped at)", now_a, now_b);
    }
    size_t n = a->n > b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const cxl_completion *x = i < a->n ? &a->c[i] : NULL, *y = i < b->n ? &b->c[i] : NULL;
        if (x && y && comp_same(x, y))
            continue;
        if ((!y || (x && comp_order(x, y) < 0)) ? comp_missing(c, 0, x, now_b, d) : comp_missing(c, 1, y, now_a, d))
            return 1;
        /* the same completions in another arrangement (duplicates): report the counts */
        return diff_u64(d, now_a ? now_a - 1 : 0, "model", "completions at this cycle", a->n, b->n);
    }
    return 0;
}

static size_t lookup(const cmp_ctx *c, uint64_t id)
{
    if (!c->byid)
        return id >= 1 && id <= c->t->n ? (size_t)(id - 1) : SIZE_MAX;
    size_t lo = 0, hi = c->t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->byid[2 * mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->t->n && c->byid[2 * lo] == id ? (size_t)c->byid[2 * lo + 1] : SIZE_MAX;
}

/* Both backends agree on these completions: check them against the trace and account them. A
 * completion both invent is a bug the comparison cannot see as a difference: an error. */
static int account(cmp_ctx *c, cxl_err *err)
{
    const cmp_buf *b = &c->buf[0];
    for (size_t i = 0; i < b->n; i++) {
        const cxl_completion *x = &b->c[i];
        size_t k = lookup(c, x->id);
        const char *why = NULL;
        char tmp[96];
        if (k == SIZE_MAX)
            why = "which is not in the trace";
        else if (c->state[k] == ST_WAITING)
            why = "which was not submitted";
        else if (c->state[k] == ST_DONE)
            why = "which had already completed";
        else if (x->requester != c->t->d[k].requester) {
            snprintf(tmp, sizeof tmp, "on requester %u; the descriptor is requester %u's", x->requester,
                     c->t->d[k].requester);
            why = tmp;
        } else if (x->lines != c->t->d[k].bytes / CXL_LINE_BYTES || x->start_cycle > x->end_cycle) {
            snprintf(tmp, sizeof tmp, "with %u lines from cycle %llu to %llu (the descriptor has %llu lines)",
                     x->lines, (unsigned long long)x->start_cycle, (unsigned long long)x->end_cycle,
                     (unsigned long long)(c->t->d[k].bytes / CXL_LINE_BYTES));
            why = tmp;
        }
        if (why)
            return cxl_errf(err, CXL_EINTERNAL,
                            "backends %s and %s both report a completion of id %llu at cycle %llu, %s: a bug in "
                            "both",
                            c->name[0], c->name[1], (unsigned long long)x->id, (unsigned long long)x->end_cycle, why);
        c->state[k] = ST_DONE;
        c->completed++;
    }
    return 0;
}

/* ---- driving the backends --------------------------------------------------------------------------- */

static int be_err(const cmp_ctx *c, int s, int rc, const cxl_err *e, cxl_err *err)
{
    return cxl_errf(err, rc, "backend %s (%c): %s", c->name[s], 'A' + s, e->msg);
}

static int poll_all(cmp_ctx *c, int s, cxl_err *err)
{
    cmp_buf *b = &c->buf[s];
    for (;;) {
        if (b->n == b->cap) {
            size_t cap = b->cap ? 2 * b->cap : 1024;
            cxl_completion *nc = realloc(b->c, cap * sizeof *nc);
            if (!nc)
                return cxl_errf(err, CXL_ENOMEM, "out of memory for %zu completions", cap);
            b->c = nc;
            b->cap = cap;
        }
        size_t k = cxl_backend_poll(c->be[s], b->c + b->n, b->cap - b->n);
        b->n += k;
        if (!k)
            return 0;
    }
}

/* Advance side s towards `until`, stopping on completion; repeat while it returns early with nothing
 * (a backend may return early, e.g. at an internal batch boundary). Completions collect in buf[s]. A
 * side already at `until` is not advanced (B when A stopped where B stands): a backend has handed over
 * every completion before the cycle it reports (host/cxl/comp_ring.h), so there is nothing left to collect. */
static int advance_side(cmp_ctx *c, int s, uint64_t until, cxl_err *err)
{
    cxl_backend *b = c->be[s];
    c->buf[s].n = 0;
    for (;;) {
        uint64_t before = cxl_backend_now(b);
        if (before >= until)
            return poll_all(c, s, err);
        cxl_err e;
        cxl_err_clear(&e);
        int rc = cxl_backend_advance(b, until, 1, &e);
        if (s == 0)
            c->advances++;
        if (rc)
            return be_err(c, s, rc, &e, err);
        if ((rc = poll_all(c, s, err)))
            return rc;
        uint64_t now = cxl_backend_now(b);
        if (c->buf[s].n || now >= until)
            return 0;
        if (now == before)
            return cxl_errf(err, CXL_EINTERNAL,
                            "backend %s (%c): advance to cycle %llu stayed at cycle %llu without a completion",
                            c->name[s], 'A' + s, (unsigned long long)until, (unsigned long long)now);
    }
}

/* Step 1 of the loop: every requester takes what fits, the same batch on both. */
static int submit_round(cmp_ctx *c, uint64_t now, cmp_diff *d, int *differs, cxl_err *err)
{
    size_t nb = 0;
    *differs = 0;
    for (uint32_t r = 0; r < c->p->requesters && r < CXL_MAX_REQ; r++) {
        size_t rem = c->rstart[r + 1] - c->rstart[r] - c->rnext[r];
        if (!rem)
            continue;
        uint32_t sa = cxl_backend_space(c->be[0], r), sb = cxl_backend_space(c->be[1], r);
        size_t na = sa < rem ? sa : rem, nbb = sb < rem ? sb : rem;
        if (na != nbb) {
            char u[48];
            snprintf(u, sizeof u, "requester %u", r);
            diff_u64(d, now, u, "descriptor queue space", sa, sb);
            *differs = 1;
            return 0;
        }
        if (na > CXL_DESCQ)
            na = CXL_DESCQ;
        for (size_t k = 0; k < na; k++) {
            size_t idx = c->order[c->rstart[r] + c->rnext[r]++];
            c->batch[nb++] = c->t->d[idx];
            c->state[idx] = ST_SUBMITTED;
        }
    }
    if (!nb)
        return 0;
    for (int s = 0; s < 2; s++) {
        cxl_err e;
        cxl_err_clear(&e);
        int rc = cxl_backend_submit(c->be[s], c->batch, nb, &e);
        if (rc)
            return be_err(c, s, rc, &e, err);
    }
    c->submitted += nb;
    return 0;
}

static int read_stats(cmp_ctx *c, cxl_err *err)
{
    for (int s = 0; s < 2; s++) {
        cxl_err e;
        cxl_err_clear(&e);
        int rc = cxl_backend_stats(c->be[s], c->st[s], &e);
        if (rc)
            return be_err(c, s, rc, &e, err);
    }
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void close_backends(cmp_ctx *c)
{
    for (int s = 0; s < 2; s++) {
        cxl_backend_close(c->be[s]);
        c->be[s] = NULL;
    }
}

/* One run from cycle 0 on fresh instances. *outcome: OUT_DONE (every descriptor completed), OUT_LIMIT
 * (max_cycles, or the window's end), OUT_DIFF (d filled, *at = the cycle up to which the statistics
 * are worth searching), OUT_STATS (window runs: statistics differ at a checkpoint; c->stats_diff).
 * *now_out: the cycle both reached. */
static int run(cmp_ctx *c, int *outcome, cmp_diff *d, uint64_t *at, uint64_t *now_out, cxl_err *err)
{
    int rc = 0;
    for (int s = 0; s < 2; s++) {
        cxl_backend_opts bo = cxl_backend_opts_for(c->name[s], c->o->bo);
        if (s == 1 && !strcmp(c->name[0], c->name[1]))
            bo.trace_fst = NULL; /* one waveform: side A's */
        if ((rc = cxl_backend_open_opts(c->name[s], c->p, &bo, &c->be[s], err))) {
            close_backends(c);
            return rc;
        }
    }
    memset(c->rnext, 0, sizeof c->rnext);
    memset(c->state, 0, c->t->n);
    c->submitted = c->completed = c->advances = 0;
    c->limit_hit = 0;
    c->last_equal = c->lo;
    uint64_t step = c->o->step_cycles ? c->o->step_cycles : CMP_STEP_DEFAULT;
    uint64_t limit = c->o->max_cycles ? c->o->max_cycles : UINT64_MAX;
    if (c->window && c->hi < limit)
        limit = c->hi;
    uint64_t now = 0;
    for (;;) {
        if (c->window && now >= c->hi) {
            *outcome = OUT_LIMIT;
            break;
        }
        int differs;
        if ((rc = submit_round(c, now, d, &differs, err)))
            break;
        if (differs) {
            *outcome = OUT_DIFF;
            *at = now;
            break;
        }
        if (c->completed == c->t->n) {
            *outcome = OUT_DONE;
            break;
        }
        if (now >= limit) {
            *outcome = OUT_LIMIT;
            c->limit_hit = 1;
            break;
        }
        uint64_t horizon = sat_add(now, step);
        if (horizon > limit)
            horizon = limit;
        if (c->window) {
            uint64_t g = now < c->lo ? sat_add(c->lo, c->wstep)
                                     : sat_add(c->lo, ((now - c->lo) / c->wstep + 1) * c->wstep);
            if (g > c->hi)
                g = c->hi;
            if (g < horizon)
                horizon = g;
        }
        if ((rc = advance_side(c, 0, horizon, err)))
            break;
        uint64_t now_a = cxl_backend_now(c->be[0]);
        if ((rc = advance_side(c, 1, now_a, err)))
            break;
        uint64_t now_b = cxl_backend_now(c->be[1]);
        if (compare_stop(c, now_a, now_b, d)) {
            *outcome = OUT_DIFF;
            *at = d->cycle < now_a ? d->cycle : now_a;
            now = now_a < now_b ? now_a : now_b;
            break;
        }
        if ((rc = account(c, err)))
            break;
        if (c->o->progress && !c->window)
            c->o->progress(c->o->progress_ctx, (double)c->completed / (double)c->t->n);
        now = now_a;
        if (c->window && now > c->lo && now <= c->hi && ((now - c->lo) % c->wstep == 0 || now == c->hi)) {
            if ((rc = read_stats(c, err)))
                break;
            if (stats_diff(c->p, c->st[0], c->st[1], now, &c->stats_diff)) {
                *outcome = OUT_STATS;
                break;
            }
            c->last_equal = now;
        }
    }
    *now_out = now;
    if (!rc && (*outcome == OUT_DONE || *outcome == OUT_LIMIT) && !c->window) {
        /* the end of the comparison run: the statistics, read once */
        if ((rc = read_stats(c, err)) == 0 && stats_diff(c->p, c->st[0], c->st[1], now, d)) {
            *outcome = OUT_DIFF;
            *at = now;
        }
    }
    close_backends(c);
    return rc;
}

/* The first cycle at or before `hi` whose statistics differ: runs again with checkpoints over (0, hi],
 * then over the first interval that differs, and so on down to one cycle. *found = 0 when they are equal
 * at every checkpoint of the first run (the difference is not in the statistics before hi). */
static int locate(cmp_ctx *c, uint64_t hi, cmp_diff *out, int *found, cmp_result *r, cxl_err *err)
{
    uint64_t lo = 0;
    *found = 0;
    while (!*found || hi - lo > 1) {
        c->window = 1;
        c->lo = lo;
        c->hi = hi;
        c->wstep = (hi - lo + CMP_GRID - 1) / CMP_GRID;
        if (!c->wstep)
            c->wstep = 1;
        int outcome = OUT_LIMIT;
        uint64_t at = 0, now = 0;
        cmp_diff d;
        int rc = run(c, &outcome, &d, &at, &now, err);
        c->window = 0;
        r->replays++;
        if (rc)
            return rc;
        if (outcome == OUT_DIFF)
            return cxl_errf(err, CXL_EINTERNAL,
                            "a run again from cycle 0 differed earlier than the first one (at cycle %llu, %s): a "
                            "backend is not deterministic",
                            (unsigned long long)d.cycle, d.field);
        if (outcome != OUT_STATS) {
            if (*found)
                return cxl_errf(err, CXL_EINTERNAL,
                                "statistics differed at cycle %llu in one run and not in the next: a backend is "
                                "not deterministic",
                                (unsigned long long)hi);
            return 0;
        }
        *found = 1;
        *out = c->stats_diff;
        lo = c->last_equal;
        hi = now;
    }
    return 0;
}

/* qsort order of (id, index) pairs: by id, then index */
static int pair_cmp(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

static int prepare(cmp_ctx *c, cxl_err *err)
{
    const trace *t = c->t;
    uint32_t R = c->p->requesters < CXL_MAX_REQ ? c->p->requesters : CXL_MAX_REQ;
    c->order = malloc((t->n ? t->n : 1) * sizeof *c->order);
    c->state = malloc(t->n ? t->n : 1);
    c->st[0] = malloc(sizeof(cxl_stats));
    c->st[1] = malloc(sizeof(cxl_stats));
    if (!c->order || !c->state || !c->st[0] || !c->st[1])
        return cxl_errf(err, CXL_ENOMEM, "out of memory preparing the comparison of %zu descriptors", t->n);
    size_t count[CXL_MAX_REQ] = { 0 };
    int in_order = 1;
    for (size_t i = 0; i < t->n; i++) {
        cxl_err e;
        cxl_err_clear(&e);
        if (cxl_desc_check(c->p, &t->d[i], &e))
            return cxl_errf(err, CXL_ECONFIG, "trace descriptor %zu: %s", i + 1, e.msg);
        count[t->d[i].requester]++;
        if (t->d[i].id != i + 1)
            in_order = 0;
    }
    c->rstart[0] = 0;
    for (uint32_t r = 0; r < CXL_MAX_REQ; r++)
        c->rstart[r + 1] = c->rstart[r] + (r < R ? count[r] : 0);
    size_t fill[CXL_MAX_REQ];
    memcpy(fill, c->rstart, sizeof fill);
    for (size_t i = 0; i < t->n; i++)
        c->order[fill[t->d[i].requester]++] = i;
    if (!in_order) {
        c->byid = malloc(2 * t->n * sizeof *c->byid);
        if (!c->byid)
            return cxl_errf(err, CXL_ENOMEM, "out of memory indexing %zu descriptor ids", t->n);
        for (size_t i = 0; i < t->n; i++) {
            c->byid[2 * i] = t->d[i].id;
            c->byid[2 * i + 1] = i;
        }
        qsort(c->byid, t->n, 2 * sizeof *c->byid, pair_cmp);
        for (size_t i = 1; i < t->n; i++)
            if (c->byid[2 * i] == c->byid[2 * i - 2])
                return cxl_errf(err, CXL_ECONFIG, "trace: id %llu used by descriptors %llu and %llu; ids must be unique",
                                (unsigned long long)c->byid[2 * i], (unsigned long long)c->byid[2 * i - 1] + 1,
                                (unsigned long long)c->byid[2 * i + 1] + 1);
    }
    return 0;
}

int cmp_run(const cxl_params *p, const trace *t, const cmp_opts *o, cmp_result *r, cxl_err *err)
{
    memset(r, 0, sizeof *r);
    r->descriptors = t->n;
    cmp_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    c->p = p;
    c->t = t;
    c->o = o;
    c->name[0] = o->backend_a;
    c->name[1] = o->backend_b;
    int rc = prepare(c, err);
    if (!rc) {
        int outcome = OUT_DONE;
        uint64_t at = 0, now = 0;
        cmp_diff d;
        rc = run(c, &outcome, &d, &at, &now, err);
        if (!rc) {
            r->submitted = c->submitted;
            r->completions = c->completed;
            r->cycles = now;
            r->advances = c->advances;
            r->truncated = c->limit_hit;
            r->equal = outcome != OUT_DIFF;
            if (!r->equal) {
                r->diff = d;
                int found = 0;
                cmp_diff first;
                if (o->locate && at > 0)
                    rc = locate(c, at, &first, &found, r, err);
                if (!rc && found && (first.cycle != d.cycle || strcmp(first.field, d.field))) {
                    r->seen = d;
                    r->diff = first;
                    r->located = 1;
                }
            }
        }
    }
    free(c->order);
    free(c->state);
    free(c->byid);
    free(c->st[0]);
    free(c->st[1]);
    free(c->buf[0].c);
    free(c->buf[1].c);
    free(c);
    return rc;
}

int cmp_waveform(const cxl_params *p, const trace *t, const cmp_opts *o, const char *path, uint64_t from,
                 uint64_t to, uint64_t *reached, cxl_err *err)
{
    *reached = 0;
    if (!cxl_backend_can_trace(o->backend_a) && !cxl_backend_can_trace(o->backend_b))
        return cxl_errf(err, CXL_EUSAGE,
                        "--trace-fst needs a verilator backend that can write waveforms among the two compared "
                        "(%s, %s; CMake option CXLSIM_RTL_TRACE)",
                        o->backend_a, o->backend_b);
    /* the waveform goes through the outputs' rules (a temporary file, registered for the signal
     * handlers, renamed at the end), written by the simulator under that file's name */
    outfile *f;
    int rc = outfile_open(path, &f, err);
    if (rc)
        return rc;
    if (!outfile_file(f)) {
        outfile_abort(f);
        return cxl_errf(err, CXL_EUSAGE, "--trace-fst: '%s': the waveform is written to a file", path);
    }
    cmp_result *r = malloc(sizeof *r);
    if (!r) {
        outfile_abort(f);
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    }
    cxl_backend_opts bo = { 0 };
    if (o->bo)
        bo = *o->bo;
    bo.trace_fst = outfile_file(f);
    bo.trace_from = from;
    bo.trace_to = to;
    cmp_opts w = *o;
    w.bo = &bo;
    w.locate = 0;
    w.max_cycles = sat_add(to, 1);
    if (o->max_cycles && o->max_cycles < w.max_cycles)
        w.max_cycles = o->max_cycles;
    rc = cmp_run(p, t, &w, r, err);
    *reached = rc ? 0 : r->cycles;
    if (rc)
        outfile_abort(f);
    else
        rc = outfile_commit(f, err);
    free(r);
    return rc;
}
