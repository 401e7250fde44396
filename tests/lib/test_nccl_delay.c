/* test_nccl_delay.c - the NCCL delay plugin (include/cxlsim/cxlsim_nccl.h): its delays for ring/Simple on
 * one node equal the collective model's own figure for NCCL's message sequence (coll_ring_plan and
 * coll_ring_time_ps on the cluster's NVLink fabric) within the per-step rounding; the replay of a recorded
 * CSV (tests/data/nccl_replay.csv) gives, line by line, what the entry point gives; NCCL's byte rules
 * (count per rank for all-gather and reduce-scatter); errors name the line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/clustercfg.h"
#include "train/coll.h"
#include "train/collmodel.h"
#include "cxlsim/cxlsim_nccl.h"
#include "config/gpucfg.h"

#ifndef CXLSIM_SOURCE_DIR
#define CXLSIM_SOURCE_DIR "."
#endif

/* The collective model's time of one rank's all-reduce/all-gather/reduce-scatter of `bytes` on one node:
 * NCCL's message sequence on the NVLink fabric of dgx-h100 / h100-sxm, each step a message latency. */
static int64_t ring_figure(uint32_t passes, uint32_t ranks, uint32_t channels, uint64_t bytes, int64_t *steps_out)
{
    clustercfg c;
    gpucfg g;
    collmodel m;
    cxl_err e;
    assert_int_equal(clustercfg_load("dgx-h100", &c, &e), 0);
    assert_int_equal(gpucfg_load("h100-sxm", &g, &e), 0);
    assert_int_equal(collmodel_init(&m, &c, &g, &e), 0);
    coll_ring_params p;
    coll_ring_params_default(&p, ranks, channels ? channels : m.channels);
    size_t n;
    assert_int_equal(coll_ring_plan_len(&p, bytes, &n, &e), 0);
    coll_step *s = calloc(n ? n : 1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(coll_ring_plan(&p, bytes, s, n, &n, &e), 0);
    size_t keep = n;
    if (passes == 1) { /* one pass: the reduce-scatter (or, alike in bytes, the all-gather) steps alone */
        keep = 0;
        for (size_t i = 0; i < n; i++)
            if (s[i].phase == COLL_REDUCE_SCATTER)
                s[keep++] = s[i];
    }
    int64_t t = coll_ring_time_ps(s, keep, p.n_channels, m.fab.intra_Bps, m.fab.intra_latency_ps, &e);
    *steps_out = (int64_t)(keep / p.n_channels);
    free(s);
    return t;
}

static cxlsim_nccl *open_plugin(void)
{
    cxlsim_nccl *p;
    cxlsim_error e;
    cxlsim_error_init(&e);
    assert_int_equal(cxlsim_nccl_open("dgx-h100", "h100-sxm", &p, &e), 0);
    return p;
}

static void ring_simple_matches_the_model(void **state)
{
    (void)state;
    cxlsim_nccl *p = open_plugin();
    const struct { int coll; uint64_t count; int type; uint32_t ranks, channels, passes; uint64_t bytes; } rows[] = {
        { 4, 268435456, 7, 8, 0, 2, 1073741824ull },   /* 1 GiB all-reduce, float32 */
        { 4, 1048576, 9, 8, 0, 2, 2097152 },           /* 2 MiB, bfloat16 */
        { 4, 12345677, 6, 8, 4, 2, 24691354 },         /* odd size, 4 channels */
        { 4, 1000, 7, 4, 2, 2, 4000 },
        { 2, 4194304, 9, 8, 0, 1, 8ull * 8388608 },    /* all-gather: count per rank */
        { 3, 4194304, 9, 8, 0, 1, 8ull * 8388608 },    /* reduce-scatter: count per rank */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t ps, steps;
        cxlsim_error e;
        cxlsim_error_init(&e);
        cxlsim_collective_result r;
        cxlsim_collective_result_init(&r);
        assert_int_equal(cxlsim_nccl_delay(p, rows[i].coll, rows[i].count, rows[i].type, (int)rows[i].ranks, 1, 1, 2,
                                           (int)rows[i].channels, &ps, &r, &e), 0);
        int64_t want = ring_figure(rows[i].passes, rows[i].ranks, rows[i].channels, rows[i].bytes, &steps);
        /* the model rounds each step up to a picosecond, the plugin the whole transfer once */
        assert_true(want > 0);
        assert_true(ps <= want && want - ps <= steps + 1);
        assert_int_equal(r.algo, CXLSIM_ALGO_RING);
        assert_int_equal(r.proto, CXLSIM_PROTO_SIMPLE);
    }
    cxlsim_nccl_close(p);
}

static void replay_matches_the_entry_point(void **state)
{
    (void)state;
    cxlsim_nccl *p = open_plugin();
    const char *path = CXLSIM_SOURCE_DIR "/tests/data/nccl_replay.csv";
    FILE *in = fopen(path, "r"), *out = tmpfile();
    assert_non_null(in);
    assert_non_null(out);
    int64_t total;
    cxlsim_error e;
    cxlsim_error_init(&e);
    assert_int_equal(cxlsim_nccl_replay(p, in, path, out, &total, &e), 0);
    fclose(in);
    rewind(out);
    char line[512];
    assert_non_null(fgets(line, sizeof line, out)); /* header */
    int64_t sum = 0;
    int rows = 0;
    static const char *const colls[] = { "broadcast", "reduce", "allgather", "reducescatter", "allreduce" };
    static const char *const types[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
                                         "float16", "float32", "float64", "bfloat16" };
    while (fgets(line, sizeof line, out)) {
        char coll[32], type[32], algo[32], proto[32];
        unsigned long long count;
        int ranks, nodes, ch;
        long long ps;
        assert_int_equal(sscanf(line, "%31[^,],%llu,%31[^,],%d,%d,%31[^,],%31[^,],%d,%lld", coll, &count, type, &ranks,
                                &nodes, algo, proto, &ch, &ps), 9);
        int c = -1, t = -1;
        for (int k = 0; k < 5; k++)
            c = strcmp(coll, colls[k]) ? c : k;
        for (int k = 0; k < 10; k++)
            t = strcmp(type, types[k]) ? t : k;
        int a = !strcmp(algo, "auto") ? -1 : !strcmp(algo, "tree") ? 0 : 1;
        int pr = !strcmp(proto, "auto") ? -1 : !strcmp(proto, "LL") ? 0 : !strcmp(proto, "LL128") ? 1 : 2;
        int64_t want;
        assert_int_equal(cxlsim_nccl_delay(p, c, count, t, ranks, nodes, a, pr, ch, &want, NULL, &e), 0);
        assert_int_equal(ps, want);
        assert_true(ps > 0);
        sum += ps;
        rows++;
    }
    fclose(out);
    assert_int_equal(rows, 9);
    assert_int_equal(sum, total);
    /* the delay in NeuronaBox's unit */
    double ms = cxlsim_nccl_delay_ms(p, 4, 268435456, 7, 8, 1, 1, 2, 0);
    int64_t ps;
    assert_int_equal(cxlsim_nccl_delay(p, 4, 268435456, 7, 8, 1, 1, 2, 0, &ps, NULL, &e), 0);
    assert_true(ms > 0 && ms == (double)ps * 1e-9);
    cxlsim_nccl_close(p);
}

static void errors(void **state)
{
    (void)state;
    cxlsim_nccl *p = open_plugin();
    cxlsim_error e;
    cxlsim_error_init(&e);
    int64_t ps;
    /* reduce (1): Broadcast's pipelined chain on the ring, the same nBytes (cxlsim_nccl.h) */
    int64_t bcast;
    assert_int_equal(cxlsim_nccl_delay(p, 1, 1 << 20, 7, 8, 1, 1, 2, 0, &ps, NULL, &e), 0);
    assert_int_equal(cxlsim_nccl_delay(p, 0, 1 << 20, 7, 8, 1, 1, 2, 0, &bcast, NULL, &e), 0);
    assert_true(ps > 0);
    assert_int_equal(ps, bcast);
    assert_int_equal(cxlsim_nccl_delay(p, 5, 1024, 7, 8, 1, 1, 2, 0, &ps, NULL, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "1 reduce"));
    assert_int_equal(cxlsim_nccl_delay(p, 4, 1024, 12, 8, 1, 1, 2, 0, &ps, NULL, &e), CXLSIM_EUSAGE);
    assert_int_equal(cxlsim_nccl_delay(p, 4, 1024, 7, 8, 3, 1, 2, 0, &ps, NULL, &e), CXLSIM_EUSAGE);
    assert_true(cxlsim_nccl_delay_ms(p, 4, 1024, 7, 0, 1, 1, 2, 0) < 0);
    assert_int_equal(cxlsim_nccl_delay(p, 2, UINT64_MAX / 4, 7, 8, 1, 1, 2, 0, &ps, NULL, &e), CXLSIM_ELIMIT);
    const char *bad = "coll,count,datatype,nranks,nnodes,algo,proto,nchannels\n"
                      "allreduce,1024,float32,8,1,ring,Simple,0\n"
                      "allreduce,1024,floot32,8,1,ring,Simple,0\n";
    FILE *in = tmpfile();
    fputs(bad, in);
    rewind(in);
    int64_t total;
    assert_int_equal(cxlsim_nccl_replay(p, in, "rec.csv", NULL, &total, &e), CXLSIM_ECONFIG);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.column, 16);
    assert_non_null(strstr(e.message, "floot32"));
    fclose(in);
    cxlsim_nccl_close(p);
    assert_int_equal(cxlsim_nccl_open("no-such-cluster", "h100-sxm", &p, &e) < 0, 1);
    assert_null(p);
    cxlsim_nccl_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_simple_matches_the_model),
        cmocka_unit_test(replay_matches_the_entry_point),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests_name("nccl_delay", tests, NULL, NULL);
}
