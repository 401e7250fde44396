/* test_optimes.c - measured operation times: the documented format loads, lookups hit on the full
 * identity (name, dtype, batch, m, n, k) and miss otherwise, every error names file:line:column and the
 * key, optimes_write_list output loads back to identical picoseconds, and a list without times is
 * profiling input (accepted without times, rejected naming the entry when times are required). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/gpucfg.h"
#include "train/optimes.h"

#include "tmpdir_fixture.h"

static optimes *load_ok(const char *path, int require_times)
{
    optimes *t = NULL;
    cxl_err e;
    if (optimes_load(path, &t, require_times, &e))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    assert_non_null(t);
    return t;
}

static const char good[] =
    "# written by scripts/profile_ops.py on NVIDIA A100-SXM4-80GB\n"
    "gpu: NVIDIA A100-SXM4-80GB      # informational string\n"
    "source: free text                # informational\n"
    "ops:\n"
    "  - { name: fc1.fwd, dtype: bf16, batch: 1, m: 2048, n: 5504, k: 4096, time: 1.234ms }\n"
    "  - { name: layernorm.fwd, dtype: bf16, m: 8388608, time: 45us }   # memory op\n"
    "  - name: attn.score.fwd\n"
    "    dtype: bf16\n"
    "    batch: 32\n"
    "    m: 2048\n"
    "    n: 2048\n"
    "    k: 128\n"
    "    kind: gemm\n"
    "    bytes: 285212672B\n"
    "    time: 250000ns\n";

static op_desc op(const char *name, int dtype, uint64_t batch, uint64_t m, uint64_t n, uint64_t k)
{
    op_desc o = { name, OP_GEMM, dtype, batch, m, n, k, 2.0 * batch * m * n * k, 0, 0, 0, 1, 0 };
    return o;
}

static void load_and_lookup(void **state)
{
    (void)state;
    optimes *t = load_ok(tmpdir_write("good.yaml", good), 1);
    assert_int_equal(optimes_count(t), 3);
    assert_string_equal(optimes_gpu(t), "NVIDIA A100-SXM4-80GB");
    assert_string_equal(optimes_source(t), "free text");
    int64_t ps = 0;
    op_desc o = op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096);
    assert_int_equal(optimes_lookup(t, &o, &ps), 1);
    assert_int_equal(ps, 1234000000ll);
    /* a memory op: batch, n and k default to 1 */
    o = op("layernorm.fwd", GPUCFG_BF16, 1, 8388608, 1, 1);
    o.kind = OP_MEM;
    assert_int_equal(optimes_lookup(t, &o, &ps), 1);
    assert_int_equal(ps, 45000000ll);
    o = op("attn.score.fwd", GPUCFG_BF16, 32, 2048, 2048, 128);
    assert_int_equal(optimes_lookup(t, &o, &ps), 1);
    assert_int_equal(ps, 250000000ll);
    /* every part of the identity matters */
    ps = -7;
    const op_desc misses[] = {
        op("fc1.fwd", GPUCFG_FP16, 1, 2048, 5504, 4096), op("fc1.fwd", GPUCFG_BF16, 2, 2048, 5504, 4096),
        op("fc1.fwd", GPUCFG_BF16, 1, 2049, 5504, 4096), op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5505, 4096),
        op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4095), op("fc2.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096),
        op("fc1.fw", GPUCFG_BF16, 1, 2048, 5504, 4096),  op("zzz", GPUCFG_BF16, 1, 1, 1, 1),
        op("", GPUCFG_BF16, 1, 1, 1, 1),                 op(NULL, GPUCFG_BF16, 1, 2048, 5504, 4096),
    };
    for (size_t i = 0; i < sizeof misses / sizeof misses[0]; i++)
        if (optimes_lookup(t, &misses[i], &ps) != 0)
            fail_msg("miss %zu hit", i);
    assert_int_equal(ps, -7);
    optimes_free(t);
    /* an empty list is fine */
    t = load_ok(tmpdir_write("empty.yaml", "ops: []\n"), 1);
    assert_int_equal(optimes_count(t), 0);
    assert_string_equal(optimes_gpu(t), "");
    o = op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096);
    assert_int_equal(optimes_lookup(t, &o, &ps), 0);
    optimes_free(t);
    optimes_free(NULL);
}

/* Load text (require_times 1) and expect CXL_ECONFIG at line:col with both needles in the message. */
static void expect_err(const char *text, int line, int col, const char *needle1, const char *needle2)
{
    const char *p = tmpdir_write("bad.yaml", text);
    optimes *t = (optimes *)&t;
    cxl_err e;
    int rc = optimes_load(p, &t, 1, &e);
    assert_null(t);
    if (rc != CXL_ECONFIG)
        fail_msg("rc %d, expected CXL_ECONFIG: %s", rc, e.msg);
    if (!strstr(e.msg, needle1) || (needle2 && !strstr(e.msg, needle2)))
        fail_msg("message lacks '%s' / '%s': %s", needle1, needle2 ? needle2 : "", e.msg);
    assert_string_equal(e.file, p);
    if (e.line != line || e.col != col)
        fail_msg("at %d:%d, expected %d:%d: %s", e.line, e.col, line, col, e.msg);
}

static void errors(void **state)
{
    (void)state;
    /* unknown key in an entry, with a suggestion */
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 1, tim: 1ms }\n", 2, 35, "unknown key 'ops[0].tim'",
               "did you mean 'time'?");
    /* unknown top-level key */
    expect_err("gpus: x\nops: []\n", 1, 1, "unknown key 'gpus'; did you mean 'gpu'?",
               "Valid keys at the top level: gpu, source, ops");
    /* missing ops, ops not a sequence, an entry not a mapping */
    expect_err("gpu: x\n", 1, 1, "missing required key 'ops'", NULL);
    expect_err("ops: 3\n", 1, 6, "'ops' must be a sequence", NULL);
    expect_err("ops:\n  - fc1.fwd\n", 2, 5, "'ops[0]' must be a mapping", NULL);
    /* missing name, missing time */
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 1, time: 1us }\n  - { dtype: bf16, m: 1, time: 1us }\n",
               3, 5, "missing required key 'ops[1].name'", NULL);
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 1, time: 1us }\n  - { name: fc2.bwd, dtype: bf16, m: 1 }\n",
               3, 5, "missing required key 'ops[1].time' for entry 'fc2.bwd'", "1.234ms");
    /* bad dtype: the valid ones listed */
    expect_err("ops:\n  - { name: a, dtype: bf17, m: 1, time: 1us }\n", 2, 23, "'ops[0].dtype' = 'bf17'",
               "bf16, fp16, fp8, tf32, fp32");
    /* negative, zero and non-integer sizes; a time without a unit; a zero time */
    expect_err("ops:\n  - { name: a, dtype: bf16, m: -5, time: 1us }\n", 2, 32, "'ops[0].m' = '-5'",
               "negative values are not allowed");
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 5, n: 0, time: 1us }\n", 2, 38, "'ops[0].n' = '0' is out of range",
               "valid values are 1");
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 5, batch: 0, time: 1us }\n", 2, 42, "'ops[0].batch'",
               "out of range");
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 5, k: 2.5, time: 1us }\n", 2, 38, "'ops[0].k' = '2.5'",
               "not a plain integer");
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 5, time: 12 }\n", 2, 41, "'ops[0].time' = '12'", "needs a unit");
    expect_err("ops:\n  - { name: a, dtype: bf16, m: 5, time: 0ns }\n", 2, 41, "'ops[0].time'", "out of range");
    /* duplicate entries: reported at the second, naming the first's line */
    expect_err("ops:\n"
               "  - { name: fc1.fwd, dtype: bf16, m: 2, n: 3, k: 4, time: 1us }\n"
               "  - { name: fc1.fwd, dtype: fp16, m: 2, n: 3, k: 4, time: 1us }\n"
               "  - { name: ln, dtype: bf16, m: 8, time: 1us }\n"
               "  - { name: ln, dtype: bf16, m: 8, batch: 1, n: 1, k: 1, time: 2us }\n"
               "  - { name: fc1.fwd, dtype: bf16, batch: 1, m: 2, n: 3, k: 4, time: 3us }\n",
               5, 5, "duplicate entry 'ops[3]': 'ln' bf16 batch 1 m 8 n 1 k 1", "already listed at line 4, column 5");
    /* a duplicate key inside one entry (cfg.h's rule) */
    expect_err("ops:\n  - { name: a, name: b, dtype: bf16, m: 1, time: 1us }\n", 2, 16, "duplicate key", NULL);
    /* unreadable file */
    optimes *t = NULL;
    cxl_err e;
    char path[300];
    snprintf(path, sizeof path, "%s/none.yaml", g_tmpdir);
    assert_int_equal(optimes_load(path, &t, 1, &e), CXL_EIO);
    assert_null(t);
}

/* Write ops with times, load back, compare every lookup. */
static void write_list_round_trip(void **state)
{
    (void)state;
    op_desc ops[] = {
        op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096),
        op("attn.score.fwd", GPUCFG_BF16, 32, 2048, 2048, 128),
        { "layernorm.fwd", OP_MEM, GPUCFG_BF16, 1, 8388608, 1, 1, 5 * 8388608.0, 2 * 2 * 8388608.0, 0, 0, 0, 0 },
        op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096),    /* repeated: written once, first time kept */
        op("fc1.fwd", GPUCFG_FP8, 1, 2048, 5504, 4096),     /* same name, other dtype: its own entry */
        { "adam", OP_MEM, GPUCFG_FP32, 1, 7000000000ull, 1, 1, 0, 16 * 7e9, 0, 0, 0, 0 },
    };
    const int64_t times[] = { 1234567891, 1, 45000001, 999, 9000000000000000000ll, 3141592653589ll };
    enum { N = sizeof ops / sizeof ops[0] };
    const char *p = tmpdir_write("times.yaml", "");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(optimes_write_list(f, ops, N, "NVIDIA H200 \"SXM\": #1", "profile_ops.py, 20 iters", times), 0);
    fclose(f);
    optimes *t = load_ok(p, 1);
    assert_int_equal(optimes_count(t), N - 1);
    assert_string_equal(optimes_gpu(t), "NVIDIA H200 \"SXM\": #1");
    assert_string_equal(optimes_source(t), "profile_ops.py, 20 iters");
    for (size_t i = 0; i < N; i++) {
        int64_t ps = 0;
        assert_int_equal(optimes_lookup(t, &ops[i], &ps), 1);
        assert_int_equal(ps, times[i == 3 ? 0 : i]);
    }
    optimes_free(t);
    /* first-seen order in the file */
    f = fopen(p, "r");
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    const char *a = strstr(text, "\"fc1.fwd\", kind: gemm, dtype: bf16"), *b = strstr(text, "\"attn.score.fwd\""),
               *c = strstr(text, "\"layernorm.fwd\", kind: mem"), *d = strstr(text, "\"adam\"");
    assert_true(a && b && c && d && a < b && b < c && c < d);
    assert_non_null(strstr(text, "time: 1234567891ps"));
    assert_non_null(strstr(text, "bytes: 33554432B"));
}

static void timeless_list(void **state)
{
    (void)state;
    op_desc ops[] = {
        op("fc1.fwd", GPUCFG_BF16, 1, 2048, 5504, 4096),
        { "gelu.fwd", OP_MEM, GPUCFG_BF16, 1, 1000, 1, 1, 0, 4000, 0, 0, 0, 0 },
    };
    const char *p = tmpdir_write("list.yaml", "");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(optimes_write_list(f, ops, 2, NULL, NULL, NULL), 0);
    fclose(f);
    optimes *t = load_ok(p, 0);
    assert_int_equal(optimes_count(t), 2);
    assert_string_equal(optimes_gpu(t), "");
    int64_t ps = -7;
    assert_int_equal(optimes_lookup(t, &ops[0], &ps), 0); /* listed, but not timed */
    assert_int_equal(ps, -7);
    optimes_free(t);
    cxl_err e;
    t = NULL;
    assert_int_equal(optimes_load(p, &t, 1, &e), CXL_ECONFIG);
    assert_null(t);
    assert_non_null(strstr(e.msg, "missing required key 'ops[0].time' for entry 'fc1.fwd'"));
    assert_string_equal(e.file, p);
    assert_int_equal(e.line, 3); /* after the comment and 'ops:' */
    assert_int_equal(e.col, 5);
    /* an empty list writes 'ops: []' and loads */
    f = fopen(p, "w");
    assert_int_equal(optimes_write_list(f, NULL, 0, "x", NULL, NULL), 0);
    fclose(f);
    t = load_ok(p, 1);
    assert_int_equal(optimes_count(t), 0);
    optimes_free(t);
}

static void write_list_rejects_bad_ops(void **state)
{
    (void)state;
    const char *p = tmpdir_write("bad-list.yaml", "");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    op_desc ops[] = { op("fc1.fwd", GPUCFG_BF16, 1, 2, 3, 4), op(NULL, GPUCFG_BF16, 1, 2, 3, 4) };
    assert_int_equal(optimes_write_list(f, ops, 2, NULL, NULL, NULL), CXL_EINTERNAL);
    ops[1] = op("x", GPUCFG_NDTYPES, 1, 2, 3, 4);
    assert_int_equal(optimes_write_list(f, ops, 2, NULL, NULL, NULL), CXL_EINTERNAL);
    ops[1] = op("x", GPUCFG_BF16, 1, 0, 3, 4);
    assert_int_equal(optimes_write_list(f, ops, 2, NULL, NULL, NULL), CXL_EINTERNAL);
    ops[1] = op("x", GPUCFG_BF16, 1, 2, 3, 4);
    const int64_t times[] = { 5, 0 };
    assert_int_equal(optimes_write_list(f, ops, 2, NULL, NULL, times), CXL_EINTERNAL);
    assert_int_equal(ftell(f), 0); /* nothing written */
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_and_lookup),
        cmocka_unit_test(errors),
        cmocka_unit_test(write_list_round_trip),
        cmocka_unit_test(timeless_list),
        cmocka_unit_test(write_list_rejects_bad_ops),
    };
    return cmocka_run_group_tests_name("optimes", tests, tmpdir_setup, tmpdir_teardown);
}
