/* test_search.c - `cxlsim search` (search.h): on a small case, the ranking equals the one got by loading
 * every layout with --set overrides and running it through the engine one by one (the path of `cxlsim
 * train`), the rerun's times equal single csim runs, the bound-pruned search equals the exhaustive one (also
 * with the offloads varied, where the bound's CXL term prunes) and does not depend on the worker count, a
 * search whose rounds' results travel as the text lines of MPI ranks (searchmpi.h) is the local one, and a
 * search with no valid layout names what excluded them. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "explore/search.h"
#include "explore/searchmpi.h"
#include "train/tiers.h"
#include "train/train.h"

#define SMALL CXLSIM_SOURCE_DIR "/configs/experiments/cxl-offload-small.yaml"
/* the offload policy stays the experiment's (optimizer on the CPU, one CXL transfer per stage) here, where
 * every layout also runs alone: layouts that offload activations or parameters cost the engine up to a
 * second each with a pipeline (docs/search.md, "Cost"); offload_pruned_equals_exhaustive varies them */
#define VARY ((1u << SEARCH_TP) | (1u << SEARCH_PP) | (1u << SEARCH_MICRO_BATCH))

typedef struct one {
    uint64_t index;
    int64_t ps;
} one;

static int by_time(const void *a, const void *b)
{
    const one *x = a, *y = b;
    if (x->ps != y->ps)
        return x->ps < y->ps ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

/* The layout loaded as `cxlsim train SMALL --set ...` would load it, checked for memory, run on backend:
 * 0 and *ps, or non-zero when it is refused. */
static int run_alone(const expcfg *base, const search_layout *l, const char *backend, int64_t *ps)
{
    override_list ov = { 0 };
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    assert_int_equal(search_layout_overrides(base, l, &ov, &e), 0);
    int rc = expcfg_load_with(SMALL, &ov, 0, x, &e);
    tiers t;
    if (!rc && !(rc = tiers_compute(x, &t)))
        rc = tiers_check(x, &t, &e);
    if (!rc) {
        train_opts o;
        memset(&o, 0, sizeof o);
        o.backend = backend;
        train_result r;
        rc = train_run(x, &o, &r, &e);
        if (!rc) {
            *ps = r.iteration_ps;
            train_result_free(&r);
        }
    }
    override_free(&ov);
    free(x);
    return rc;
}

/* The small experiment with ov (may be NULL), loaded into a new expcfg. */
static expcfg *load_small(const override_list *ov)
{
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    assert_non_null(x);
    assert_int_equal(expcfg_load_with(SMALL, ov, 0, x, &e), 0);
    return x;
}

static int offloads(const search_layout *l)
{
    return l->offload_optimizer || l->offload_activations || l->offload_parameters;
}

/* The options of a search on two workers. */
static search_opts opts(unsigned top, unsigned rerun, unsigned vary)
{
    search_opts o;
    search_default_opts(&o);
    o.top = top;
    o.rerun = rerun;
    o.vary = vary;
    o.jobs = 2;
    return o;
}

static void ranking_equals_one_by_one(void **state)
{
    (void)state;
    expcfg *base = load_small(NULL);
    cxl_err e;
    search_opts o = opts(5, 1, VARY);
    search_report r;
    assert_int_equal(search_run(base, &o, &r, &e), 0);
    assert_int_equal(r.violations, 0);
    assert_true(r.pruned > 0);   /* the bound must do some work here, or the test shows little */

    search_layout *ls;
    size_t n;
    assert_int_equal(search_enumerate(base, VARY, &ls, &n, &e), 0);
    assert_int_equal(n, r.enumerated);
    one *all = calloc(n, sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t ps;
        if (!run_alone(base, &ls[i], "analytical", &ps))
            all[k++] = (one){ i, ps };
    }
    assert_int_equal(k, r.feasible - r.failed);
    qsort(all, k, sizeof *all, by_time);
    for (size_t i = 0; i < o.top; i++) {
        assert_int_equal(r.best[i].index, all[i].index);
        assert_int_equal(r.best[i].screen.iteration_ps, all[i].ps);
        assert_int_equal(r.best[i].screen_rank, i + 1);
    }
    /* the rerun: the best that offload, each as a single csim run gives it */
    size_t want = 0, reran = 0;
    for (size_t i = 0; i < k && want < o.rerun; i++) {
        if (!offloads(&ls[all[i].index]))
            continue;
        want++;
        int64_t ps;
        assert_int_equal(run_alone(base, &ls[all[i].index], "csim", &ps), 0);
        for (size_t j = 0; j < r.nbest; j++)
            if (r.best[j].index == all[i].index) {
                assert_true(r.best[j].has_rerun);
                assert_int_equal(r.best[j].rerun.iteration_ps, ps);
                reran++;
            }
    }
    assert_int_equal(reran, o.rerun);
    assert_int_equal(r.rerun, o.rerun);

    /* every feasible layout run, on one worker: the same answer */
    search_report x;
    o.exhaustive = 1;
    o.jobs = 1;
    assert_int_equal(search_run(base, &o, &x, &e), 0);
    assert_int_equal(x.pruned, 0);
    assert_int_equal(x.screened, r.feasible);
    assert_int_equal(x.nbest, r.nbest);
    for (size_t i = 0; i < r.nbest; i++) {
        assert_int_equal(x.best[i].index, r.best[i].index);
        assert_int_equal(x.best[i].screen.iteration_ps, r.best[i].screen.iteration_ps);
        assert_int_equal(x.best[i].rerun.iteration_ps, r.best[i].rerun.iteration_ps);
    }
    search_report_free(&x);
    /* pruned again on three workers: the same layouts run as on two */
    o.exhaustive = 0;
    o.jobs = 3;
    assert_int_equal(search_run(base, &o, &x, &e), 0);
    assert_int_equal(x.screened, r.screened);
    assert_int_equal(memcmp(x.reasons, r.reasons, sizeof r.reasons), 0);
    search_report_free(&x);

    free(all);
    free(ls);
    search_report_free(&r);
    free(base);
}

/* A layout's result as an MPI rank sends it (searchmpi.h) reads back to the same bytes: doubles exact
 * (subnormal, negative zero, infinity), the reason's '\' and newlines; lines that are not results refused. */
static void mpi_result_lines(void **state)
{
    (void)state;
    search_eval a, b;
    memset(&a, 0, sizeof a);
    a.rc = CXL_ECONFIG;
    a.iteration_ps = INT64_MAX;
    for (int k = 0; k < TRAIN_BK_N; k++)
        a.breakdown_s[k] = 1.0 / (3.0 + k);
    a.breakdown_s[0] = 4.9e-324;
    a.breakdown_s[1] = -0.0;
    a.tokens_per_s = 1.0 / 0.0;
    a.mfu = 0.1 + 0.2;
    a.events = UINT64_MAX;
    a.cxl_cycles = 12345;
    snprintf(a.reason, sizeof a.reason, "out of memory: a\\b\nc \\n");
    char *line = searchmpi_eval_line(&a);
    assert_non_null(line);
    assert_null(strchr(line, '\n'));
    assert_int_equal(searchmpi_line_eval(line, &b), 0);
    assert_memory_equal(&a, &b, sizeof a);
    free(line);
    memset(a.reason, 'x', sizeof a.reason - 1);      /* the longest reason */
    a.reason[sizeof a.reason - 1] = '\0';
    assert_non_null(line = searchmpi_eval_line(&a));
    assert_int_equal(searchmpi_line_eval(line, &b), 0);
    assert_memory_equal(&a, &b, sizeof a);
    free(line);
    /* 2 + TRAIN_BK_N + 4 numbers, then the reason */
    static const char *const bad[] = { "", "0", "0 1 2", "x 1", "-99 1 0 0 0 0 0 0 0 0 0 0 ", "0 1 0 0 0 0 0 0 0 0 0 0",
                                       "0 1 0 0 0 0 0 0 0 0 0 0 a\\", "0 1 0 0 0 0 0 0 0 0 0 0 a\\t",
                                       "0 1 0 0 0z 0 0 0 0 0 0 0 a" };
    assert_int_equal(TRAIN_BK_N, 6);
    assert_int_equal(searchmpi_line_eval("0 1 0 0 0 0 0 0 0 0 0 0 a\\\\", &b), 0);
    assert_string_equal(b.reason, "a\\");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(searchmpi_line_eval(bad[i], &b), -1);
}

/* The rounds of an MPI run without MPI: each result through its line, as rank 0 reads it back. */
static int lines_batch(void *ctx, const expcfg *base, search_entry **en, size_t n, int stage, const char *backend,
                       cxl_err *err)
{
    int *rounds = ctx, rc = search_eval_batch(base, en, n, 1, stage, backend, err);
    for (size_t i = 0; !rc && i < n; i++) {
        search_eval *ev = stage == 2 ? &en[i]->screen : &en[i]->rerun;
        char *line = searchmpi_eval_line(ev);
        assert_non_null(line);
        assert_int_equal(searchmpi_line_eval(line, ev), 0);
        free(line);
    }
    ++*rounds;
    return rc;
}

/* The search of offload_pruned_equals_exhaustive, its rounds' results through their lines: the local one. */
static void mpi_rounds_equal_local(const expcfg *base, search_opts o, const search_report *r)
{
    cxl_err e;
    search_report m;
    int rounds = 0;
    o.exhaustive = 0;
    o.batch = lines_batch;
    o.batch_ctx = &rounds;
    assert_int_equal(search_run(base, &o, &m, &e), 0);
    assert_true(rounds >= 2);                      /* the screen's and the rerun's */
    assert_true(m.rerun > 0);
    assert_int_equal(m.screened, r->screened);
    assert_int_equal(m.pruned, r->pruned);
    assert_memory_equal(m.reasons, r->reasons, sizeof r->reasons);
    assert_int_equal(m.nbest, r->nbest);
    for (size_t i = 0; i < r->nbest; i++) {
        assert_int_equal(m.best[i].index, r->best[i].index);
        assert_memory_equal(&m.best[i].screen, &r->best[i].screen, sizeof r->best[i].screen);
        assert_memory_equal(&m.best[i].rerun, &r->best[i].rerun, sizeof r->best[i].rerun);
        assert_int_equal(m.best[i].rerun_rank, r->best[i].rerun_rank);
    }
    search_report_free(&m);
}

/* Offloads varied (optimizer, activations, parameters) and micro-batches: the bound's CXL term (the bytes
 * a layout waits for over the device's peak, search.c) prunes layouts that offload, and the pruned search
 * gives the exhaustive one's ranking, ranks of the re-run layouts and rerun included; no layout of the
 * exhaustive run beats its bound. */
static void offload_pruned_equals_exhaustive(void **state)
{
    (void)state;
    expcfg *base = load_small(NULL);
    cxl_err e;
    search_opts o = opts(2, 2, (1u << SEARCH_OFFLOAD) | (1u << SEARCH_MICRO_BATCH));
    search_report r, x;
    assert_int_equal(search_run(base, &o, &r, &e), 0);
    o.exhaustive = 1;
    assert_int_equal(search_run(base, &o, &x, &e), 0);
    assert_int_equal(x.violations, 0);
    assert_int_equal(r.violations, 0);
    assert_int_equal(x.screened, x.feasible);
    assert_true(r.pruned > 0);
    assert_int_equal(r.screened + r.pruned, x.screened);
    assert_int_equal(x.nbest, r.nbest);
    for (size_t i = 0; i < r.nbest; i++) {
        assert_int_equal(x.best[i].index, r.best[i].index);
        assert_int_equal(x.best[i].screen.iteration_ps, r.best[i].screen.iteration_ps);
        assert_int_equal(x.best[i].screen_rank, r.best[i].screen_rank);
        assert_int_equal(x.best[i].has_rerun, r.best[i].has_rerun);
        assert_int_equal(x.best[i].rerun_rank, r.best[i].rerun_rank);
        assert_int_equal(x.best[i].rerun.iteration_ps, r.best[i].rerun.iteration_ps);
    }
    /* what pruned them: a layout that offloads activations or parameters whose bound, CXL term included,
     * exceeds the rerun-th best that offloads (the last threshold the search had) */
    int64_t thr = 0;
    for (size_t i = 0; i < x.nbest; i++)
        if (x.best[i].has_rerun && x.best[i].screen.iteration_ps > thr)
            thr = x.best[i].screen.iteration_ps;
    if (x.best[o.top - 1].screen.iteration_ps > thr)
        thr = x.best[o.top - 1].screen.iteration_ps;
    search_layout *ls;
    size_t n, beyond = 0;
    assert_int_equal(search_enumerate(base, o.vary, &ls, &n, &e), 0);
    expcfg *c = malloc(sizeof *c);
    assert_non_null(c);
    for (size_t i = 0; i < n; i++) {
        *c = *base;
        tiers t;
        if (!(ls[i].offload_activations || ls[i].offload_parameters) || search_apply(c, &ls[i], &e) ||
            tiers_compute(c, &t) || tiers_check(c, &t, &e))
            continue;
        beyond += search_bound_ps(c, &e) > thr;
    }
    assert_true(beyond > 0);
    free(c);
    free(ls);
    o.exhaustive = 0;
    mpi_rounds_equal_local(base, o, &r);
    search_report_free(&x);
    search_report_free(&r);
    free(base);
}

static void no_valid_layout(void **state)
{
    (void)state;
    cxl_err e;
    override_list ov = { 0 };
    assert_int_equal(override_add(&ov, "model", "gpt3-175b", &e), 0);
    assert_int_equal(override_add(&ov, "cxl", "{memory: none}", &e), 0);
    expcfg *base = load_small(&ov);
    search_opts o;
    search_default_opts(&o);
    o.vary = (1u << SEARCH_TP) | (1u << SEARCH_PP);
    search_report r;
    assert_int_equal(search_run(base, &o, &r, &e), CXL_ECONFIG);
    assert_int_equal(r.feasible, 0);
    assert_true(r.nreasons >= 1);
    uint64_t sum = r.reasons_other;
    for (size_t i = 0; i < r.nreasons; i++)
        sum += r.reasons[i].count;
    assert_int_equal(sum, r.enumerated);
    assert_string_equal(r.reasons[0].key, "out of GPU memory");
    assert_non_null(strstr(e.msg, "no valid layout of model 'gpt3-175b'"));
    assert_non_null(strstr(e.msg, "by 'out of GPU memory'"));
    search_report_free(&r);
    override_free(&ov);
    free(base);
}

static void bad_options(void **state)
{
    (void)state;
    expcfg *base = load_small(NULL);
    cxl_err e;
    search_opts o;
    search_report r;
    search_default_opts(&o);
    o.top = 0;
    assert_int_equal(search_run(base, &o, &r, &e), CXL_EUSAGE);
    search_default_opts(&o);
    o.jobs = 0;
    assert_int_equal(search_run(base, &o, &r, &e), CXL_EUSAGE);
    /* the split-backward schedules are not searched (their lower bound is not written yet) */
    search_default_opts(&o);
    base->train.pipeline_schedule = TRAINCFG_SCHEDULE_ZB_H1;
    assert_int_equal(search_run(base, &o, &r, &e), CXL_EUSAGE);
    assert_non_null(strstr(e.msg, "zb-h1 is not searched yet"));
    free(base);
}

/* Context parallelism is a dimension where it can run: with flash attention the enumeration has layouts with
 * cp > 1 (dp = GPUs / (tp x pp x cp)) and each one loads as its --set overrides say; with the unfused attention
 * of this experiment's file, none. */
static void context_parallel_dimension(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    assert_non_null(x);
    assert_int_equal(expcfg_load(SMALL, x, &e), 0);
    unsigned vary = (1u << SEARCH_TP) | (1u << SEARCH_PP) | (1u << SEARCH_CP);
    search_layout *ls = NULL;
    size_t n = 0, with_cp = 0;
    assert_int_equal(search_enumerate(x, vary, &ls, &n, &e), 0);
    for (size_t i = 0; i < n; i++)
        with_cp += ls[i].cp > 1;
    assert_int_equal(with_cp, 0);
    free(ls);
    x->train.attention = TRAINCFG_ATTENTION_FLASH;
    assert_int_equal(search_enumerate(x, vary, &ls, &n, &e), 0);
    uint64_t gpus = clustercfg_gpus(&x->cluster);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ls[i].tp * ls[i].pp * ls[i].cp * ls[i].dp, gpus);
        with_cp += ls[i].cp > 1;
    }
    assert_true(with_cp > 0);
    free(ls);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranking_equals_one_by_one),
        cmocka_unit_test(offload_pruned_equals_exhaustive),
        cmocka_unit_test(no_valid_layout),
        cmocka_unit_test(context_parallel_dimension),
        cmocka_unit_test(bad_options),
        cmocka_unit_test(mpi_result_lines),
    };
    return cmocka_run_group_tests_name("search", tests, NULL, NULL);
}
