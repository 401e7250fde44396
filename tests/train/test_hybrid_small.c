/* test_hybrid_small.c - issue 4's acceptance check on configs/experiments/cxl-offload-small.yaml: the
 * iteration time with acceleration (steady-state extrapolation, memo) within 1 % of `--exact` (every
 * cycle of every CXL transfer simulated), with at least 50x fewer detailed cycles. The exact run takes
 * about a minute on one core; under the sanitizers (10x slower) the test reports itself skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/train.h"

#ifndef CXLSIM_SOURCE_DIR
#define CXLSIM_SOURCE_DIR "."
#endif

static void accelerated_within_one_percent_of_exact(void **state)
{
    (void)state;
#ifdef CXLSIM_SANITIZED
    skip();
#endif
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    cxl_err_clear(&e);
    if (expcfg_load(CXLSIM_SOURCE_DIR "/configs/experiments/cxl-offload-small.yaml", x, &e))
        fail_msg("%s", e.msg);
    train_opts fast = { NULL, NULL, NULL, NULL, 0, NULL, { 0 }, NULL }, exact = { NULL, NULL, NULL, NULL, 1, NULL, { 0 }, NULL };
    train_result a, b;
    if (train_run(x, &fast, &a, &e) || train_run(x, &exact, &b, &e))
        fail_msg("%s", e.msg);
    double err = ((double)a.iteration_ps - (double)b.iteration_ps) / (double)b.iteration_ps;
    double ratio = (double)b.detailed_cycles / (double)a.detailed_cycles;
    printf("HYBRID cxl-offload-small | iteration accelerated %.6f s, exact %.6f s | error %+.3f %% | detailed cycles "
           "%llu vs %llu (%.0fx fewer) | extrapolated %llu | memo hits %llu | CXL stall %.4f s vs %.4f s\n",
           (double)a.iteration_ps / 1e12, (double)b.iteration_ps / 1e12, 100 * err,
           (unsigned long long)a.detailed_cycles, (unsigned long long)b.detailed_cycles, ratio,
           (unsigned long long)a.extrapolated_cycles, (unsigned long long)a.memo_hits, a.breakdown_s[TRAIN_BK_CXL],
           b.breakdown_s[TRAIN_BK_CXL]);
    assert_true(b.extrapolated_cycles == 0 && b.memo_hits == 0);
    assert_true(a.breakdown_s[TRAIN_BK_CXL] > 0);
    assert_true(fabs(err) <= 0.01);
    assert_true(ratio >= 50);
    train_result_free(&a);
    train_result_free(&b);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(accelerated_within_one_percent_of_exact) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
