/* test_sweep.c - sweep files (sweep.h): lists, ranges, zipped and crossed axes, the point numbering,
 * the filter (sweepexpr.h), the checks that name the axis; rows (sweeprow.h): the cell format and its
 * escapes, CSV quoting. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "explore/sweep.h"
#include "explore/sweepmpi.h"
#include "explore/sweepexpr.h"
#include "explore/sweeprow.h"

#include "tmpdir_fixture.h"

static int look(void *ctx, const char *name, size_t len, double *out, char *why, size_t whysz)
{
    (void)ctx;
    if (len == 1 && *name == 'a') {
        *out = 4;
        return 0;
    }
    if (len == 3 && !strncmp(name, "b.c", 3)) {
        *out = 2;
        return 0;
    }
    snprintf(why, whysz, "unknown '%.*s'", (int)len, name);
    return -1;
}

static double ev(const char *s)
{
    double v = -99;
    char why[128];
    if (sweepexpr_eval(s, look, NULL, &v, why, sizeof why))
        fail_msg("%s: %s", s, why);
    return v;
}

static void expressions(void **state)
{
    (void)state;
    assert_true(ev("1 + 2 * 3") == 7);
    assert_true(ev("(1 + 2) * 3") == 9);
    assert_true(ev("a * b.c <= 8") == 1);
    assert_true(ev("a * b.c < 8") == 0);
    assert_true(ev("a % 3 == 1 && !(b.c != 2)") == 1);
    assert_true(ev("a > 5 || b.c >= 2") == 1);
    assert_true(ev("-a + 10 / b.c") == 1);
    assert_true(ev("!a") == 0);
    double v;
    char why[128];
    assert_int_equal(sweepexpr_eval("a +", look, NULL, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "unexpected end"));
    assert_int_equal(sweepexpr_eval("a / 0", look, NULL, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "division by zero"));
    assert_int_equal(sweepexpr_eval("zz > 1", look, NULL, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "unknown 'zz'"));
    assert_int_equal(sweepexpr_eval("(a", look, NULL, &v, why, sizeof why), -1);
    assert_int_equal(sweepexpr_eval("a b", look, NULL, &v, why, sizeof why), -1);
    char deep[300];
    memset(deep, '(', 200);
    deep[200] = '\0';
    assert_int_equal(sweepexpr_eval(deep, look, NULL, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "nested too deeply"));
}

static void points_of_crossed_and_zipped_axes(void **state)
{
    (void)state;
    const char *path = tmpdir_write("s.yaml", "base: llama2-7b-2x8-h100\n"
                                    "axes:\n"
                                    "  training.pp: { from: 1, to: 8, times: 2 }\n"
                                    "  training.micro_batch: { from: 1, to: 5, step: 2 }\n"
                                    "zip:\n"
                                    "  - { training.tp: [1, 2], training.sp: [false, true] }\n"
                                    "filter: training.pp * training.tp <= 8\n"
                                    "best: 3\n");
    sweep_spec sp;
    cxl_err e;
    if (sweep_load(path, NULL, &sp, &e))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    assert_int_equal(sp.naxes, 4);
    assert_int_equal(sp.ngroups, 3);
    assert_int_equal(sp.axes[0].nvals, 4);           /* 1, 2, 4, 8 */
    assert_string_equal(sp.axes[0].vals[3], "8");
    assert_int_equal(sp.axes[1].nvals, 3);           /* 1, 3, 5 */
    assert_string_equal(sp.axes[1].vals[2], "5");
    assert_int_equal(sp.product, 4 * 3 * 2);
    assert_int_equal(sp.npoints, 4 * 3 * 2 - 3);     /* pp 8 x tp 2 is filtered, for each micro_batch */
    assert_int_equal(sp.best, 3);
    /* the last group varies fastest; zipped axes move together */
    assert_int_equal(sweep_value_index(&sp, 0, 7), 1);
    assert_int_equal(sweep_value_index(&sp, 1, 7), 0);
    assert_int_equal(sweep_value_index(&sp, 2, 7), 1);
    assert_int_equal(sweep_value_index(&sp, 3, 7), 1);
    override_list ov = { 0 };
    assert_int_equal(sweep_point_overrides(&sp, NULL, 7, &ov, &e), 0);
    assert_int_equal(ov.n, 4);
    assert_string_equal(ov.items[0].key, "training.pp");
    assert_string_equal(ov.items[0].value, "2");
    assert_string_equal(ov.items[3].value, "true");
    override_free(&ov);
    uint64_t fp = sp.fingerprint;
    sweep_free(&sp);
    assert_int_equal(sweep_load(path, NULL, &sp, &e), 0);
    assert_true(sp.fingerprint == fp);               /* the same sweep, the same fingerprint */
    sweep_free(&sp);
}

static void errors_name_the_axis(void **state)
{
    (void)state;
    static const struct { const char *yaml, *want; } cases[] = {
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1, 2]\n  training.zero: [1, 7]\n",
          "axis 'training.zero', value '7': --set training.zero: " },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1, 2]\n  training.recompute: [none, half]\n",
          "axis 'training.recompute', value 'half'" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: {from: 8, to: 1, step: 1}\n", "has no values" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: {from: 1, to: 8, times: 1}\n", "times must be" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: {from: 1, upto: 8, times: 2}\n", "unknown range key 'upto'" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.tp: 4\n", "expected a list of values" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training..tp: [4]\n", "empty name" },
        { "base: llama2-7b-2x8-h100\n", "no axes" },
        { "base: llama2-7b-2x8-h100\ncommand: search\naxes:\n  training.tp: [1]\n", "valid: train, memory, probe" },
        { "base: asic\ncommand: probe\nprobe: { backend: nope }\naxes:\n  link.width: [8]\n", "unknown backend 'nope'" },
        { "base: asic\ncommand: probe\naxes:\n  link.width: [8, 3]\n", "axis 'link.width', value '3': --set link.width: " },
        { "axes:\n  training.tp: [1]\n", "base: name the experiment" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.recompute: [none, full]\nfilter: training.recompute > 0\n",
          "axis 'training.recompute' has the value 'none', not a number" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.global_batch: {from: 1, to: 1000000, step: 1}\n"
          "  training.micro_batch: {from: 1, to: 2, step: 1}\n", "more than 65536 values" },
        { "base: llama2-7b-2x8-h100\naxes:\n  training.global_batch: {from: 1, to: 60000, step: 1}\n"
          "  training.micro_batch: {from: 1, to: 20, step: 1}\n", "more than 1000000 points" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = tmpdir_write("bad.yaml", cases[i].yaml);
        sweep_spec sp;
        cxl_err e;
        char buf[2048];
        int rc = sweep_load(path, NULL, &sp, &e);
        cxl_err_format(&e, buf, sizeof buf);
        if (rc != CXL_ECONFIG || !strstr(buf, cases[i].want))
            fail_msg("case %zu: rc %d, '%s' (want '%s')", i, rc, buf, cases[i].want);
    }
}

static void rows_and_escapes(void **state)
{
    (void)state;
    char **cells;
    int n = sweeprow_split("12\ta\\tb\tx\\\\y\tline\\nbreak\t", &cells);
    assert_int_equal(n, 5);
    assert_string_equal(cells[0], "12");
    assert_string_equal(cells[1], "a\tb");
    assert_string_equal(cells[2], "x\\y");
    assert_string_equal(cells[3], "line\nbreak");
    assert_string_equal(cells[4], "");
    free(cells);
    assert_int_equal(sweeprow_point("12\tx"), 12);
    assert_int_equal(sweeprow_point("x\t12"), -1);
    assert_int_equal(sweeprow_point("12"), -1);
    /* a failed point's row, as CSV (quoted reason) and JSON (nulls, inputs) */
    const char *path = tmpdir_write("r.yaml", "base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1, 2]\n");
    sweep_spec sp;
    cxl_err e;
    assert_int_equal(sweep_load(path, NULL, &sp, &e), 0);
    char *row = sweeprow_failed(&sp, 1, "crashed", "died, \"badly\"");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(sweeprow_csv(f, &sp, row), 0);
    assert_int_equal(sweeprow_jsonl(f, &sp, row), 0);
    fclose(f);
    assert_non_null(strstr(buf, "1,2,crashed,,"));
    assert_non_null(strstr(buf, ",\"died, \"\"badly\"\"\"\n"));
    assert_non_null(strstr(buf, "{\"point\": 1,\"inputs\": {\"training.tp\": \"2\"},\"status\": \"crashed\",\"tp\": null"));
    assert_non_null(strstr(buf, "\"reason\": \"died, \\\"badly\\\"\"}\n"));
    free(buf);
    free(row);
    sweep_free(&sp);
}

/* The MPI launcher read from the environment (sweepmpi.h): Open MPI's mpirun, PMI-2, srun with PMIx;
 * a plain run is one rank; several ranks need MPI built in, or the message says how to build it. */
static void mpi_launch_from_environment(void **state)
{
    (void)state;
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK",
                                        "PMIX_RANK", "SLURM_STEP_NUM_TASKS", NULL };
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    sweepmpi_launch l;
    cxl_err e;
    cxl_err_clear(&e);
    sweepmpi_launch_get(&l);
    assert_int_equal(l.size, 1);
    assert_int_equal(l.rank, 0);
    assert_int_equal(sweepmpi_require(&l, "sweep", &e), 0);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    sweepmpi_launch_get(&l);
    assert_int_equal(l.size, 4);
    assert_int_equal(l.rank, 3);
    assert_string_equal(l.from, "OMPI_COMM_WORLD_SIZE=4");
    int rc = sweepmpi_require(&l, "sweep", &e);
    if (sweepmpi_built())
        assert_int_equal(rc, 0);
    else {
        assert_int_equal(rc, CXL_EBACKEND);
        assert_non_null(strstr(e.msg, "rank 3 of 4"));
        assert_non_null(strstr(e.msg, "-DCXLSIM_MPI=ON"));
    }
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("PMIX_RANK", "2", 1);                 /* srun --mpi=pmix: the size is Slurm's */
    setenv("SLURM_STEP_NUM_TASKS", "8", 1);
    sweepmpi_launch_get(&l);
    assert_int_equal(l.size, 8);
    assert_int_equal(l.rank, 2);
    unsetenv("SLURM_STEP_NUM_TASKS");            /* a rank without a size: one rank */
    sweepmpi_launch_get(&l);
    assert_int_equal(l.size, 1);
    assert_int_equal(l.rank, 0);
    unsetenv("PMIX_RANK");
    setenv("PMI_SIZE", "x2", 1);                 /* not a number: ignored */
    sweepmpi_launch_get(&l);
    assert_int_equal(l.size, 1);
    unsetenv("PMI_SIZE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expressions),
        cmocka_unit_test(points_of_crossed_and_zipped_axes),
        cmocka_unit_test(errors_name_the_axis),
        cmocka_unit_test(rows_and_escapes),
        cmocka_unit_test(mpi_launch_from_environment),
    };
    return cmocka_run_group_tests_name("sweep", tests, tmpdir_setup, tmpdir_teardown);
}
