/* test_grad_reduce.c - the data-parallel gradient reduction as the frameworks do it (traincfg.h
 * training.grad_reduce): Megatron's default (no overlap: one call after the backward), Megatron-FSDP's
 * forced overlap, DeepSpeed's overlap_comm (auto: ZeRO-3) and reduce_bucket_size, the keys refused with the
 * other framework; and the options the summary lists as differing from the defaults (expcfg_options_diff). */
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
#include "train/collalgo.h"
#include "train/train.h"

#include "train_fixture.h"

/* 2 nodes of 8 A100, dp 16: the gradients cross the NICs */
static const char head[] =
    "name: g\n"
    "model: { name: tiny, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, tied_embeddings: true }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 2 }\n";

static expcfg *try_load(const char *training, cxl_err *e)
{
    char text[2048];
    snprintf(text, sizeof text, "%straining: { global_batch: 64, micro_batch: 2, dp: 16%s }\n", head, training);
    return tfx_try_load_text("g.yaml", text, e);
}

static expcfg *load(const char *training)
{
    cxl_err e;
    expcfg *x = try_load(training, &e);
    if (!x)
        fail_msg("%s: %s", training, e.msg);
    return x;
}

/* the iteration of `training`; *dp_calls: the data-parallel collectives of the gradients (stage 0) */
static int64_t run(const char *training, double *exposed_dp, uint64_t *dp_calls)
{
    expcfg *x = load(training);
    train_result r;
    tfx_run(x, NULL, &r);
    int64_t t = r.iteration_ps;
    if (exposed_dp)
        *exposed_dp = r.breakdown_s[TRAIN_BK_DP];
    if (dp_calls) {
        *dp_calls = 0;
        for (uint32_t i = 0; i < r.ncolls; i++)
            if (r.colls[i].group == TRAIN_GROUP_DP && r.colls[i].op != COLLALGO_ALLGATHER)
                *dp_calls += r.colls[i].count;
    }
    train_result_free(&r);
    free(x);
    return t;
}

static void megatron_defaults(void **state)
{
    (void)state;
    /* Megatron-Core's DistributedDataParallelConfig.overlap_grad_reduce = False: off unless given */
    expcfg *x = load("");
    assert_int_equal(x->train.overlap_grad_reduce, 0);
    assert_int_equal(traincfg_grad_overlap(&x->train), 0);
    free(x);
    double dp_off, dp_on;
    uint64_t calls_off, calls_on;
    int64_t def = run("", NULL, NULL);
    int64_t off = run(", overlap_grad_reduce: false", &dp_off, &calls_off);
    int64_t on = run(", overlap_grad_reduce: true", &dp_on, &calls_on);
    assert_true(def == off);
    /* without overlap: bucket_size None, one call after the backward (tiny's 54 M parameters x 2 B are
     * several 25 MB grad_buckets); with it: grad_bucket pieces during the last backward */
    assert_true(calls_off == 1);
    assert_true(calls_on > 1);
    assert_true(dp_on < dp_off);
    assert_true(on < off);
    /* grad_bucket cuts nothing without overlap */
    assert_true(run(", overlap_grad_reduce: false, grad_bucket: 1MB", NULL, NULL) == off);
    /* Megatron-FSDP always overlaps (it asserts overlap_grad_reduce) */
    x = load(", data_parallel: fsdp");
    assert_int_equal(x->train.overlap_grad_reduce, 1);
    free(x);
}

static void deepspeed_overlap_comm(void **state)
{
    (void)state;
    /* overlap_comm auto: DeepSpeed's default, true with ZeRO-3 only */
    expcfg *x = load(", grad_reduce: deepspeed, zero: 1");
    assert_int_equal(traincfg_grad_overlap(&x->train), 0);
    assert_int_equal(traincfg_grad_sync(&x->train), 0);
    assert_true(x->train.reduce_bucket_elems == 500000000);
    free(x);
    x = load(", grad_reduce: deepspeed, zero: 3");
    assert_int_equal(traincfg_grad_overlap(&x->train), 1);
    free(x);
    x = load(", grad_reduce: deepspeed, zero: 2");
    assert_int_equal(traincfg_grad_sync(&x->train), 1);
    free(x);
    /* ZeRO-1 with overlap_comm: hooks during the boundary micro-batch's backward, buckets of
     * reduce_bucket_size elements: 12.5 M bf16 gradients = Megatron's overlap with a 25 MB grad_bucket */
    int64_t ds = run(", grad_reduce: deepspeed, zero: 1, overlap_comm: true, reduce_bucket_size: 12500000", NULL, NULL);
    int64_t mg = run(", zero: 1, overlap_grad_reduce: true, grad_bucket: 25MB", NULL, NULL);
    assert_true(ds == mg);
    /* without it, after the backward in reduce_bucket_size pieces: one call of 5e8 elements here, as Megatron */
    assert_true(run(", grad_reduce: deepspeed, zero: 1", NULL, NULL) == run(", zero: 1", NULL, NULL));
    /* ZeRO-0 is DeepSpeed's engine all-reduce after the backward, whatever overlap_comm says */
    assert_true(run(", grad_reduce: deepspeed, overlap_comm: true", NULL, NULL) == run("", NULL, NULL));
    /* ZeRO-2 reduces every micro-batch's gradients during its backward: on a side stream with overlap_comm,
     * else the compute stream waits for them */
    double dp_sync, dp_side;
    uint64_t calls_sync, calls_side;
    int64_t sync = run(", grad_reduce: deepspeed, zero: 2, reduce_bucket_size: 12500000", &dp_sync, &calls_sync);
    int64_t side = run(", grad_reduce: deepspeed, zero: 2, reduce_bucket_size: 12500000, overlap_comm: true", &dp_side,
                       &calls_side);
    /* 2 micro-batches, several buckets each (the side stream's fill a layer at a time, so their count may differ) */
    assert_true(calls_sync >= 2 * 2 && calls_side >= 2 * 2);
    assert_true(dp_side < dp_sync);
    assert_true(side < sync);
}

static void expect_error(const char *training, const char *a, const char *b)
{
    cxl_err e;
    expcfg *x = try_load(training, &e);
    if (x)
        fail_msg("accepted: %s", training);
    assert_int_equal(e.code, CXL_ECONFIG);
    if (!strstr(e.msg, a) || !strstr(e.msg, b) || e.line != 5)
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
}

static void keys_of_the_other_framework(void **state)
{
    (void)state;
    expect_error(", overlap_comm: true", "training.overlap_comm: DeepSpeed's option", "grad_reduce: deepspeed");
    expect_error(", reduce_bucket_size: 1000", "training.reduce_bucket_size", "grad_reduce is megatron");
    expect_error(", grad_reduce: deepspeed, overlap_grad_reduce: true", "training.overlap_grad_reduce: Megatron's",
                 "overlap_comm");
    expect_error(", grad_reduce: deepspeed, data_parallel: fsdp", "training.grad_reduce", "zero 3");
    /* more buckets than the engine simulates: refused when the run is set up, at the key */
    expcfg *x = load(", grad_reduce: deepspeed, zero: 2, reduce_bucket_size: 1");
    train_result r;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(train_run(x, NULL, &r, &e), CXL_ECONFIG);
    if (!strstr(e.msg, "training.reduce_bucket_size: 1 elements") || !strstr(e.msg, "use at least") || e.line != 5)
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    free(x);
    expect_error(", grad_reduce: horovod", "megatron", "deepspeed");
}

struct diffs {
    char text[4096];
    size_t len;
};

static void collect(void *ctx, const char *key, const char *value, const char *dflt)
{
    struct diffs *d = ctx;
    d->len += (size_t)snprintf(d->text + d->len, sizeof d->text - d->len, "%s=%s(%s);", key, value, dflt);
}

static void options_differing_from_defaults(void **state)
{
    (void)state;
    expcfg *x = load(", overlap_grad_reduce: true, collectives: ring");
    struct diffs d = { "", 0 };
    assert_int_equal(expcfg_options_diff(x, collect, &d), 0);
    /* in field order, derived values included (dp), required keys (global_batch) left out */
    assert_string_equal(d.text, "training.micro_batch=2(1);training.dp=16(1);training.overlap_grad_reduce=true(false);"
                                "training.collectives=ring(auto);");
    free(x);
    /* nothing of the cxl section without CXL memory; with it, its keys against the section's defaults */
    char text[2048];
    snprintf(text, sizeof text, "%straining: { global_batch: 64 }\ncxl: { memory: per-node, device: asic }\n", head);
    x = malloc(sizeof *x);
    cxl_err e;
    if (expcfg_load_text("c.yaml", text, NULL, x, &e))
        fail_msg("%s", e.msg);
    d.len = 0;
    d.text[0] = '\0';
    assert_int_equal(expcfg_options_diff(x, collect, &d), 0);
    assert_non_null(strstr(d.text, "cxl.memory=per-node(none);cxl.device=\"asic\"(\"\");"));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(megatron_defaults),
        cmocka_unit_test(deepspeed_overlap_comm),
        cmocka_unit_test(keys_of_the_other_framework),
        cmocka_unit_test(options_differing_from_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
