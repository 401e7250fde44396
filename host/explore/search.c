/* search.c - enumeration, checks, bound-ordered screening and re-ranking of layouts (search.h); the lower
 * bound is search_bound.c. */
#define _POSIX_C_SOURCE 200809L
#include "explore/search.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cxl/backend.h"
#include "config/devcfg.h"
#include "config/modelcfg.h"
#include "config/parallel.h"
#include "train/compute.h"
#include "train/gpumem.h"
#include "train/opgraph.h"
#include "train/tiers.h"

typedef unsigned long long ull;

const char *const search_dim_names[] = { "tp", "pp", "sp", "virtual_stages", "micro_batch", "recompute", "zero",
                                         "offload", "cp", NULL };

void search_default_opts(search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 10;
    o->rerun = 4;
    o->vary = SEARCH_ALL_DIMS;
    o->jobs = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- enumeration ---- */

/* The divisors of n in ascending order, at most cap of them (n <= 2^40 here: GPUs, layers, batches). */
static size_t divisors(uint64_t n, uint64_t *d, size_t cap)
{
    size_t k = 0;
    for (uint64_t i = 1; i <= n && k < cap; i++)
        if (n % i == 0)
            d[k++] = i;
    return k;
}

typedef struct growl {
    search_layout *v;
    size_t n, cap;
    int oom, over;
} growl;

static void push(growl *g, const search_layout *l)
{
    if (g->oom || g->over)
        return;
    if (g->n >= SEARCH_MAX_LAYOUTS) {
        g->over = 1;
        return;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1024;
        search_layout *v = realloc(g->v, cap * sizeof *v);
        if (!v) {
            g->oom = 1;
            return;
        }
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = *l;
}

enum { MAXDIV = 4096 };

/* The innermost dimensions, for a layout whose tp, pp, dp, virtual_stages and micro_batch are set: sp,
 * recompute, zero, offload (offload last). */
static void inner(const expcfg *b, unsigned vary, search_layout l, growl *g)
{
    const traincfg *t = &b->train;
    const cxlcfg *c = &b->cxl;
    int sps[2] = { t->sp, 0 }, nsp = 1;
    if (vary & (1u << SEARCH_SP)) {
        sps[0] = 0;
        sps[1] = 1;
        nsp = l.tp > 1 ? 2 : 1;
    }
    int cxl = c->memory != CXLCFG_NONE && (vary & (1u << SEARCH_OFFLOAD));
    for (int s = 0; s < nsp; s++)
        for (int r = 0; r < 3; r++) {
            if (!(vary & (1u << SEARCH_RECOMPUTE)) && r > 0)
                break;
            for (uint64_t z = 0; z < 4; z++) {
                if (!(vary & (1u << SEARCH_ZERO)) && z > 0)
                    break;
                if ((vary & (1u << SEARCH_ZERO)) && t->data_parallel == TRAINCFG_DP_FSDP && z != 3)
                    continue;   /* Megatron-FSDP is ZeRO-3 */
                l.sp = (uint8_t)sps[s];
                l.recompute = (uint8_t)((vary & (1u << SEARCH_RECOMPUTE)) ? r : t->recompute);
                l.zero = (vary & (1u << SEARCH_ZERO)) ? z : t->zero;
                if (!cxl) {
                    l.offload_optimizer = (uint8_t)c->offload_optimizer;
                    l.offload_activations = (uint8_t)c->offload_activations;
                    l.offload_parameters = (uint8_t)c->offload_parameters;
                    if (!(l.offload_activations && l.recompute != TRAINCFG_RECOMPUTE_NONE &&
                          (vary & (1u << SEARCH_RECOMPUTE))))
                        push(g, &l);
                    continue;
                }
                for (int o = CXLCFG_OPT_NONE; o <= CXLCFG_OPT_GPU; o++)
                    for (int a = 0; a < 2; a++)
                        for (int p = 0; p < (o != CXLCFG_OPT_NONE ? 2 : 1); p++) {
                            /* offloaded activations come back instead of being recomputed (train.c):
                             * the recompute setting makes no difference there */
                            if (a && l.recompute != TRAINCFG_RECOMPUTE_NONE && (vary & (1u << SEARCH_RECOMPUTE)))
                                continue;
                            l.offload_optimizer = (uint8_t)o;
                            l.offload_activations = (uint8_t)a;
                            l.offload_parameters = (uint8_t)p;
                            push(g, &l);
                        }
            }
        }
}

int search_enumerate(const expcfg *b, unsigned vary, search_layout **out, size_t *n, cxl_err *err)
{
    if (!vary)
        vary = SEARCH_ALL_DIMS;
    const traincfg *t = &b->train;
    if (!traincfg_flash(t) || modelcfg_is_moe(&b->model))
        vary &= ~(1u << SEARCH_CP); /* context parallelism cannot run here (parallel.c check_cp) */
    uint64_t gpus = clustercfg_gpus(&b->cluster), layers = b->model.layers;
    uint64_t *tps = malloc(5 * MAXDIV * sizeof *tps), *pps = tps + MAXDIV, *vs = pps + MAXDIV, *mbs = vs + MAXDIV;
    uint64_t *cps = mbs + MAXDIV;
    growl g = { 0 };
    if (!tps)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    size_t ntp = (vary & (1u << SEARCH_TP)) ? divisors(gpus, tps, MAXDIV) : (tps[0] = t->tp, 1);
    for (size_t i = 0; i < ntp; i++) {
        uint64_t tp = tps[i];
        size_t npp = (vary & (1u << SEARCH_PP)) && gpus % tp == 0 ? divisors(gpus / tp, pps, MAXDIV)
                                                                  : (pps[0] = t->pp, 1);
        for (size_t j = 0; j < npp; j++) {
            uint64_t pp = pps[j];
            size_t ncp = (vary & (1u << SEARCH_CP)) && gpus % (tp * pp) == 0 ? divisors(gpus / (tp * pp), cps, MAXDIV)
                                                                            : (cps[0] = t->cp ? t->cp : 1, 1);
            for (size_t k = 0; k < ncp; k++) {
                uint64_t cp = cps[k], dp = gpus / (tp * pp * cp);
                if (!dp)
                    dp = 1; /* tp x pp x cp beyond the GPUs: parallel_check says so */
                size_t nv = (vary & (1u << SEARCH_VIRTUAL_STAGES)) && pp > 1 && layers % pp == 0
                          ? divisors(layers / pp, vs, MAXDIV)
                          : (vs[0] = (vary & (1u << SEARCH_VIRTUAL_STAGES)) ? 1 : t->virtual_stages, 1);
                size_t nmb = (vary & (1u << SEARCH_MICRO_BATCH)) && t->global_batch % dp == 0
                           ? divisors(t->global_batch / dp, mbs, MAXDIV) : (mbs[0] = t->micro_batch, 1);
                for (size_t a = 0; a < nv; a++)
                    for (size_t c = 0; c < nmb; c++) {
                        search_layout l = { .tp = tp, .pp = pp, .dp = dp, .virtual_stages = vs[a],
                                            .micro_batch = mbs[c], .cp = cp };
                        inner(b, vary, l, &g);
                    }
            }
        }
    }
    free(tps);
    if (g.oom || g.over) {
        free(g.v);
        return g.oom ? cxl_errf(err, CXL_ENOMEM, "out of memory (search: %zu layouts)", g.n)
                     : cxl_errf(err, CXL_ELIMIT, "search: more than %d layouts; vary fewer dimensions (--vary)",
                                SEARCH_MAX_LAYOUTS);
    }
    *out = g.v;
    *n = g.n;
    return 0;
}

int search_apply(expcfg *x, const search_layout *l, cxl_err *err)
{
    traincfg *t = &x->train;
    t->tp = l->tp;
    t->pp = l->pp;
    t->dp = l->dp;
    t->cp = l->cp ? l->cp : 1;
    t->virtual_stages = l->virtual_stages;
    t->micro_batch = l->micro_batch;
    t->sp = l->sp;
    if (l->recompute != t->recompute) {
        /* a searched recomputation is Megatron's default form of it (every layer, uniform groups of one) */
        t->recompute_method = TRAINCFG_RECOMPUTE_UNIFORM;
        t->recompute_num_layers = 0;
    }
    t->recompute = l->recompute;
    t->zero = l->zero;
    x->cxl.offload_optimizer = l->offload_optimizer;
    x->cxl.offload_activations = l->offload_activations;
    x->cxl.offload_parameters = l->offload_parameters;
    return expcfg_check_layout(x, err);
}

int search_layout_overrides(const expcfg *b, const search_layout *l, override_list *ov, cxl_err *err)
{
    const traincfg *t = &b->train;
    const cxlcfg *c = &b->cxl;
    struct { const char *key; uint64_t base, v; const char *const *names; } f[] = {
        { "training.tp", t->tp, l->tp, NULL },
        { "training.pp", t->pp, l->pp, NULL },
        { "training.dp", t->dp, l->dp, NULL },
        { "training.cp", t->cp ? t->cp : 1, l->cp ? l->cp : 1, NULL },
        { "training.virtual_stages", t->virtual_stages, l->virtual_stages, NULL },
        { "training.micro_batch", t->micro_batch, l->micro_batch, NULL },
        { "training.sp", (uint64_t)t->sp, l->sp, NULL },
        { "training.recompute", (uint64_t)t->recompute, l->recompute, traincfg_recompute_names },
        { "training.zero", t->zero, l->zero, NULL },
        { "cxl.offload_optimizer", (uint64_t)c->offload_optimizer, l->offload_optimizer, cxlcfg_opt_names },
        { "cxl.offload_activations", (uint64_t)c->offload_activations, l->offload_activations, NULL },
        { "cxl.offload_parameters", (uint64_t)c->offload_parameters, l->offload_parameters, NULL },
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].base == f[i].v)
            continue;
        char v[32];
        int boolean = !strcmp(f[i].key, "training.sp") || strstr(f[i].key, "offload_activations") ||
                      strstr(f[i].key, "offload_parameters");
        if (f[i].names)
            snprintf(v, sizeof v, "%s", f[i].names[f[i].v]);
        else if (boolean)
            snprintf(v, sizeof v, "%s", f[i].v ? "true" : "false");
        else
            snprintf(v, sizeof v, "%llu", (ull)f[i].v);
        int rc = override_add(ov, f[i].key, v, err);
        if (rc)
            return rc;
    }
    return 0;
}

void search_layout_format(const search_layout *l, int cxl, char *buf, size_t sz)
{
    int n = snprintf(buf, sz, "tp %llu pp %llu dp %llu vs %llu mb %llu sp %s recompute %s zero %llu", (ull)l->tp,
                     (ull)l->pp, (ull)l->dp, (ull)l->virtual_stages, (ull)l->micro_batch, l->sp ? "on" : "off",
                     traincfg_recompute_names[l->recompute], (ull)l->zero);
    if (l->cp > 1 && n > 0 && (size_t)n < sz)
        n += snprintf(buf + n, sz - (size_t)n, " cp %llu", (ull)l->cp);
    if (cxl && n > 0 && (size_t)n < sz)
        snprintf(buf + n, sz - (size_t)n, " offload optimizer %s activations %s parameters %s",
                 cxlcfg_opt_names[l->offload_optimizer], l->offload_activations ? "on" : "off",
                 l->offload_parameters ? "on" : "off");
}

/* ---- reasons ---- */

static void add_reason(search_report *r, const search_layout *l, const char *msg)
{
    const char *colon = strchr(msg, ':');
    size_t k = colon && colon - msg < 90 ? (size_t)(colon - msg) : strnlen(msg, 60);
    for (size_t i = 0; i < r->nreasons; i++)
        if (strlen(r->reasons[i].key) == k && !strncmp(r->reasons[i].key, msg, k)) {
            r->reasons[i].count++;
            return;
        }
    if (r->nreasons == SEARCH_MAX_REASONS) {
        r->reasons_other++;
        return;
    }
    search_reason *s = &r->reasons[r->nreasons++];
    snprintf(s->key, sizeof s->key, "%.*s", (int)k, msg);
    s->count = 1;
    s->first = *l;
    snprintf(s->example, sizeof s->example, "%s", msg);
}

/* Largest count first, ties in the order first seen (insertion sort: stable, at most SEARCH_MAX_REASONS). */
static void sort_reasons(search_report *r)
{
    for (size_t i = 1; i < r->nreasons; i++) {
        search_reason s = r->reasons[i];
        size_t j = i;
        for (; j > 0 && r->reasons[j - 1].count < s.count; j--)
            r->reasons[j] = r->reasons[j - 1];
        r->reasons[j] = s;
    }
}

/* ---- running layouts ---- */

static void eval_one(const expcfg *base, expcfg *x, search_entry *en, const char *backend, search_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    *x = *base;
    cxl_err e;
    cxl_err_clear(&e);
    int rc = search_apply(x, &en->l, &e);
    train_result res;
    train_opts o;
    memset(&o, 0, sizeof o);
    o.backend = x->cxl.memory != CXLCFG_NONE ? backend : NULL;
    if (!rc)
        rc = train_run(x, &o, &res, &e);
    ev->rc = rc;
    if (rc) {
        snprintf(ev->reason, sizeof ev->reason, "%s", e.msg);
        return;
    }
    ev->iteration_ps = res.iteration_ps;
    memcpy(ev->breakdown_s, res.breakdown_s, sizeof ev->breakdown_s);
    ev->tokens_per_s = res.tokens_per_s;
    ev->mfu = res.mfu;
    ev->events = res.events;
    ev->cxl_cycles = res.detailed_cycles;
    train_result_free(&res);
}

static int full_write(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int full_read(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Evaluate en[0..n) with backend, the results into each entry's screen (stage 2) or rerun (stage 3):
 * worker k of w takes entries k, k + w, ... and writes their results to its pipe in that order. */
static int run_batch(const expcfg *base, expcfg *x, search_entry **en, size_t n, int jobs, int stage,
                     const char *backend, cxl_err *err)
{
    size_t w = jobs > 1 ? (size_t)jobs : 1;
    if (w > n)
        w = n;
    if (w <= 1) {
        for (size_t i = 0; i < n; i++)
            eval_one(base, x, en[i], backend, stage == 2 ? &en[i]->screen : &en[i]->rerun);
        return 0;
    }
    int fds[SEARCH_MAX_JOBS];
    pid_t pids[SEARCH_MAX_JOBS];
    size_t started = 0;
    int rc = 0;
    for (; started < w; started++) {
        int p[2];
        if (pipe(p)) {
            rc = cxl_errf(err, CXL_EINTERNAL, "search: cannot make a pipe for a worker: %s", strerror(errno));
            break;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]);
            close(p[1]);
            rc = cxl_errf(err, CXL_EINTERNAL, "search: cannot start a worker process: %s", strerror(errno));
            break;
        }
        if (pid == 0) {
            close(p[0]);
            for (size_t k = 0; k < started; k++)
                close(fds[k]);
            for (size_t i = started; i < n; i += w) {
                search_eval ev;
                eval_one(base, x, en[i], backend, &ev);
                if (full_write(p[1], &ev, sizeof ev))
                    _exit(1);
            }
            _exit(0);
        }
        close(p[1]);
        fds[started] = p[0];
        pids[started] = pid;
    }
    for (size_t k = 0; k < started; k++) {
        for (size_t i = k; !rc && i < n; i += w) {
            search_eval *ev = stage == 2 ? &en[i]->screen : &en[i]->rerun;
            if (full_read(fds[k], ev, sizeof *ev)) {
                char l[256];
                search_layout_format(&en[i]->l, base->cxl.memory != CXLCFG_NONE, l, sizeof l);
                rc = cxl_errf(err, CXL_EINTERNAL, "search: the worker running layout %s ended without its result",
                              l);
            }
        }
        close(fds[k]);
        int st;
        while (waitpid(pids[k], &st, 0) < 0 && errno == EINTR)
            ;
    }
    return rc;
}

int search_eval_batch(const expcfg *base, search_entry **en, size_t n, int jobs, int stage, const char *backend,
                      cxl_err *err)
{
    expcfg *x = malloc(sizeof *x);
    if (!x)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    int rc = run_batch(base, x, en, n, jobs, stage, backend, err);
    free(x);
    return rc;
}

/* A round where the options say: the local pool, or the caller's (MPI ranks). */
static int round_run(const expcfg *base, expcfg *x, search_entry **en, size_t n, const search_opts *o, int stage,
                     const char *backend, cxl_err *err)
{
    if (o->batch)
        return o->batch(o->batch_ctx, base, en, n, stage, backend, err);
    return run_batch(base, x, en, n, o->jobs, stage, backend, err);
}

/* ---- ranking ---- */

static int by_screen(const void *a, const void *b)
{
    const search_entry *x = a, *y = b;
    if (!x->screen.rc != !y->screen.rc)
        return x->screen.rc ? 1 : -1;
    if (x->screen.iteration_ps != y->screen.iteration_ps)
        return x->screen.iteration_ps < y->screen.iteration_ps ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_rerun(const void *a, const void *b)
{
    const search_entry *const *x = a, *const *y = b;
    if (!(*x)->rerun.rc != !(*y)->rerun.rc)
        return (*x)->rerun.rc ? 1 : -1;
    if ((*x)->rerun.iteration_ps != (*y)->rerun.iteration_ps)
        return (*x)->rerun.iteration_ps < (*y)->rerun.iteration_ps ? -1 : 1;
    return (*x)->screen_rank < (*y)->screen_rank ? -1 : 1;
}

/* A feasible layout waiting for stage 2. */
typedef struct cand {
    uint64_t index;
    int64_t bound_ps;
    double hbm_bytes, cxl_bytes_per_gpu;
} cand;

static int by_bound(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->bound_ps != y->bound_ps)
        return x->bound_ps < y->bound_ps ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Stage 1: check every layout; the feasible ones (with their bound) into *out. */
static int check_all(const expcfg *base, expcfg *x, const search_layout *ls, size_t n, search_report *r, cand **out,
                     size_t *nout, cxl_err *err)
{
    cand *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (search: %zu layouts)", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        cxl_err e;
        cxl_err_clear(&e);
        *x = *base;
        tiers tr;
        int rc = search_apply(x, &ls[i], &e);
        if (rc) {
            r->invalid++;
            add_reason(r, &ls[i], e.msg);
            continue;
        }
        if ((rc = tiers_compute(x, &tr)) != 0 || (rc = tiers_check(x, &tr, &e)) != 0) {
            if (!e.code)
                cxl_errf(&e, rc, "the memory estimate failed");
            r->infeasible++;
            add_reason(r, &ls[i], e.msg);
            continue;
        }
        int64_t b = search_bound_ps(x, &e);
        if (b < 0) {
            r->invalid++;
            add_reason(r, &ls[i], e.msg);
            continue;
        }
        c[k++] = (cand){ i, b, tr.hbm_bytes, tr.cxl_bytes_per_gpu };
    }
    r->feasible = k;
    *out = c;
    *nout = k;
    return 0;
}

static int grow_entries(search_entry **v, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    search_entry *p = realloc(*v, c * sizeof *p);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

static int offloads(const search_layout *l)
{
    return l->offload_optimizer != CXLCFG_OPT_NONE || l->offload_activations || l->offload_parameters;
}

/* Stage 2: run candidates in bound order while their bound can beat the top-th best, or (with CXL memory,
 * for the rerun) the rerun-th best of those that offload; the entries that ran well into *ran (ranked),
 * their count into *nran. Every layout that can beat either runs, whether it offloads or not, so the
 * ranks of the re-run layouts (beyond the top) are their ranks among all feasible layouts. */
static int screen(const expcfg *base, expcfg *x, const search_layout *ls, cand *c, size_t nc, const search_opts *o,
                  search_report *r, search_entry **ran, size_t *nran, cxl_err *err)
{
    size_t nok = 0, okcap = 0, pos = 0, ncxl = 0;
    size_t kcxl = r->cxl ? o->rerun : 0;
    search_entry *okv = NULL, *rbuf = malloc(SEARCH_ROUND * sizeof *rbuf), *round[SEARCH_ROUND];
    int rc = rbuf ? 0 : cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    qsort(c, nc, sizeof *c, by_bound);
    while (!rc && pos < nc) {
        int64_t thr = nok >= o->top ? okv[o->top - 1].screen.iteration_ps : INT64_MAX, thr_cxl = kcxl ? INT64_MAX : -1;
        for (size_t i = 0, seen = 0; kcxl && i < nok; i++)
            if (offloads(&okv[i].l) && ++seen == kcxl) {
                thr_cxl = okv[i].screen.iteration_ps;
                break;
            }
        if (!o->exhaustive && c[pos].bound_ps > (thr > thr_cxl ? thr : thr_cxl))
            break;
        size_t k = 0;
        for (; k < SEARCH_ROUND && pos < nc; pos++) {
            const search_layout *l = &ls[c[pos].index];
            int64_t b = c[pos].bound_ps;
            if (!o->exhaustive && b > (thr > thr_cxl ? thr : thr_cxl))
                break;
            search_entry *e = &rbuf[k];
            memset(e, 0, sizeof *e);
            e->index = c[pos].index;
            e->l = *l;
            e->bound_ps = b;
            e->hbm_bytes = c[pos].hbm_bytes;
            e->cxl_bytes_per_gpu = c[pos].cxl_bytes_per_gpu;
            round[k++] = e;
        }
        if ((rc = round_run(base, x, round, k, o, 2, r->screen_backend, err)) != 0)
            break;
        if (grow_entries(&okv, &okcap, nok + k)) {
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
            break;
        }
        for (size_t i = 0; i < k; i++) {
            search_entry *e = round[i];
            r->screened++;
            if (e->screen.rc) {
                r->failed++;
                add_reason(r, &e->l, e->screen.reason);
                continue;
            }
            if (e->screen.iteration_ps < e->bound_ps)
                r->violations++;
            r->screen_events += e->screen.events;
            r->screen_cxl_cycles += e->screen.cxl_cycles;
            ncxl += offloads(&e->l) != 0;
            okv[nok++] = *e;
        }
        qsort(okv, nok, sizeof *okv, by_screen);
        if (o->progress)
            o->progress(o->progress_ctx, 2, r->screened, nc);
    }
    r->pruned += nc - pos;
    free(rbuf);
    *ran = okv;
    *nran = nok;
    return rc;
}

static int no_layout(const expcfg *b, search_report *r, cxl_err *err)
{
    uint64_t excluded = r->invalid + r->infeasible + r->failed;
    if (!r->nreasons)
        return cxl_errf(err, CXL_ECONFIG, "search: no layout of model '%s' on cluster '%s' to try", b->model.name,
                        b->cluster.name);
    char l[256];
    const search_reason *s = &r->reasons[0];
    search_layout_format(&s->first, r->cxl, l, sizeof l);
    return cxl_errf(err, CXL_ECONFIG, "search: no valid layout of model '%s' on cluster '%s' (%llu GPUs): all %llu "
                    "layouts were excluded, %llu of them by '%s' (first: %s: %s)", b->model.name, b->cluster.name,
                    (ull)clustercfg_gpus(&b->cluster), (ull)excluded, (ull)s->count, s->key, l, s->example);
}

int search_run(const expcfg *base, const search_opts *o, search_report *r, cxl_err *err)
{
    memset(r, 0, sizeof *r);
    if (o->top < 1 || o->top > SEARCH_MAX_TOP)
        return cxl_errf(err, CXL_EUSAGE, "search: --top %u: from 1 to %d", o->top, SEARCH_MAX_TOP);
    if (o->rerun > SEARCH_MAX_RERUN)
        return cxl_errf(err, CXL_EUSAGE, "search: --rerun %u: from 0 to %d", o->rerun, SEARCH_MAX_RERUN);
    if (o->jobs < 1 || o->jobs > SEARCH_MAX_JOBS)
        return cxl_errf(err, CXL_EUSAGE, "search: -j %d: from 1 to %d", o->jobs, SEARCH_MAX_JOBS);
    /* the lower bound (search_bound.c) follows Megatron's schedules: a last stage with the head and whole
     * backwards; the split backward and DualPipeV's V would need bounds of their own */
    int sched = base->train.pipeline_schedule;
    if (sched == TRAINCFG_SCHEDULE_ZB_H1 || sched == TRAINCFG_SCHEDULE_DUALPIPEV)
        return cxl_errf(err, CXL_EUSAGE, "search: training.pipeline_schedule %s is not searched yet; use auto, 1f1b "
                        "or interleaved, and run the best layouts with %s by cxlsim train",
                        traincfg_schedule_names[sched], traincfg_schedule_names[sched]);
    snprintf(r->screen_backend, sizeof r->screen_backend, "%s", o->screen_backend ? o->screen_backend : "analytical");
    snprintf(r->rerun_backend, sizeof r->rerun_backend, "%s", o->rerun_backend ? o->rerun_backend : "csim");
    r->cxl = base->cxl.memory != CXLCFG_NONE;
    r->vary = (o->vary ? o->vary : SEARCH_ALL_DIMS) & (r->cxl ? SEARCH_ALL_DIMS : ~(1u << SEARCH_OFFLOAD));
    /* context parallelism only where it can run (parallel.c check_cp): flash attention, a dense model */
    if (!traincfg_flash(&base->train) || modelcfg_is_moe(&base->model))
        r->vary &= ~(1u << SEARCH_CP);
    search_layout *ls = NULL;
    size_t n = 0, nc = 0, nran = 0;
    cand *c = NULL;
    search_entry *ran = NULL;
    expcfg *x = malloc(sizeof *x);
    if (!x)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    double t0 = now_s();
    int rc = search_enumerate(base, r->vary, &ls, &n, err);
    r->enumerated = n;
    if (!rc)
        rc = check_all(base, x, ls, n, r, &c, &nc, err);
    double t1 = now_s();
    r->wall_s[0] = t1 - t0;
    if (!rc)
        rc = screen(base, x, ls, c, nc, o, r, &ran, &nran, err);
    double t2 = now_s();
    r->wall_s[1] = t2 - t1;
    if (!rc) {
        sort_reasons(r);
        if (r->violations)
            rc = cxl_errf(err, CXL_EINTERNAL, "search: %llu layouts ran faster than their lower bound; the "
                          "pruned ranking cannot be trusted (run with --exhaustive)", (ull)r->violations);
        else if (!nran)
            rc = no_layout(base, r, err);
    }
    if (!rc) {
        /* the top, then (CXL) the best that offload beyond it, up to rerun of them */
        size_t keep = 0, k = 0, want = r->cxl ? o->rerun : 0;
        for (size_t i = 0; i < nran; i++) {
            int cx = r->cxl && offloads(&ran[i].l) && k < want;
            ran[i].screen_rank = (uint32_t)(i + 1);
            if (i < o->top || cx)
                ran[keep++] = ran[i];
            k += cx;
        }
        r->nbest = keep;
        r->best = ran;
        ran = NULL;
        search_entry **todo = k ? malloc(k * sizeof *todo) : NULL;
        if (k && !todo)
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
        for (size_t i = 0, j = 0; !rc && i < keep; i++)
            if (offloads(&r->best[i].l) && j < k)
                todo[j++] = &r->best[i];
        for (size_t i = 0; !rc && i < k; i += SEARCH_ROUND) {
            size_t m = k - i < SEARCH_ROUND ? k - i : SEARCH_ROUND;
            rc = round_run(base, x, todo + i, m, o, 3, r->rerun_backend, err);
            if (o->progress)
                o->progress(o->progress_ctx, 3, i + m, k);
        }
        if (!rc && k) {
            qsort(todo, k, sizeof *todo, by_rerun);
            for (size_t i = 0; i < k; i++) {
                todo[i]->has_rerun = 1;
                todo[i]->rerun_rank = (uint32_t)(i + 1);
            }
            r->rerun = k;
        }
        free(todo);
    }
    r->wall_s[2] = now_s() - t2;
    free(ran);
    free(c);
    free(ls);
    free(x);
    return rc;
}

void search_report_free(search_report *r)
{
    free(r->best);
    r->best = NULL;
    r->nbest = 0;
}
