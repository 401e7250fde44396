/* test_schedule.c - pipeline schedules: exact orders derived by hand from Megatron-LM's algorithms
 * (megatron/core/pipeline_parallel/schedules.py), invariants over many (pp, m, v), a whole-pipeline
 * simulation that checks every order completes and meets the textbook makespan, the layer split, and every
 * error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/schedule.h"

#include "schedule_sim.h"

/* Shorthands for expected orders: forward / backward of micro-batch mb on model chunk c. */
#define F(mb, c) {(mb), (c), 0, 0}
#define B(mb, c) {(mb), (c), 1, 0}

static schedule_item *build(uint32_t pp, uint32_t rank, uint32_t m, uint32_t v, size_t *n)
{
    cxl_err e;
    size_t need = schedule_len(m, v);
    schedule_item *s = calloc(need, sizeof *s);
    assert_non_null(s);
    int rc = schedule_build(pp, rank, m, v, s, need, n, &e);
    if (rc)
        fail_msg("schedule_build(pp %u, rank %u, m %u, v %u): %s", pp, rank, m, v, e.msg);
    assert_int_equal(*n, need);
    return s;
}

static void assert_order(uint32_t pp, uint32_t rank, uint32_t m, uint32_t v, const schedule_item *want, size_t n_want)
{
    size_t n;
    schedule_item *s = build(pp, rank, m, v, &n);
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n; i++)
        if (s[i].microbatch != want[i].microbatch || s[i].chunk != want[i].chunk ||
            s[i].backward != want[i].backward)
            fail_msg("pp %u rank %u m %u v %u, pass %zu: got %c(mb %u, chunk %u), want %c(mb %u, chunk %u)", pp,
                     rank, m, v, i, s[i].backward ? 'B' : 'F', s[i].microbatch, s[i].chunk,
                     want[i].backward ? 'B' : 'F', want[i].microbatch, want[i].chunk);
    free(s);
}

#define ASSERT_ORDER(pp, rank, m, v, ...)                                                                         \
    do {                                                                                                       \
        const schedule_item want_[] = {__VA_ARGS__};                                                           \
        assert_order((pp), (rank), (m), (v), want_, sizeof want_ / sizeof *want_);                             \
    } while (0)

/* ---- exact orders ---- */

static void no_pipelining(void **state)
{
    (void)state;
    /* forward_backward_no_pipelining: forward then backward of each micro-batch in turn */
    ASSERT_ORDER(1, 0, 3, 1, F(0, 0), B(0, 0), F(1, 0), B(1, 0), F(2, 0), B(2, 0));
    ASSERT_ORDER(1, 0, 1, 1, F(0, 0), B(0, 0));
}

static void one_f_one_b(void **state)
{
    (void)state;
    /* pp 4, m 8. Rank 0: warm-up min(4 - 0 - 1, 8) = 3 forwards (0, 1, 2); 5 steady pairs
     * (F3 B0, F4 B1, F5 B2, F6 B3, F7 B4); cool-down B5 B6 B7. */
    ASSERT_ORDER(4, 0, 8, 1, F(0, 0), F(1, 0), F(2, 0), F(3, 0), B(0, 0), F(4, 0), B(1, 0), F(5, 0), B(2, 0),
                 F(6, 0), B(3, 0), F(7, 0), B(4, 0), B(5, 0), B(6, 0), B(7, 0));
    /* rank 1: warm-up 2 */
    ASSERT_ORDER(4, 1, 8, 1, F(0, 0), F(1, 0), F(2, 0), B(0, 0), F(3, 0), B(1, 0), F(4, 0), B(2, 0), F(5, 0),
                 B(3, 0), F(6, 0), B(4, 0), F(7, 0), B(5, 0), B(6, 0), B(7, 0));
    /* rank 3 (last): warm-up 0, strict alternation */
    ASSERT_ORDER(4, 3, 8, 1, F(0, 0), B(0, 0), F(1, 0), B(1, 0), F(2, 0), B(2, 0), F(3, 0), B(3, 0), F(4, 0),
                 B(4, 0), F(5, 0), B(5, 0), F(6, 0), B(6, 0), F(7, 0), B(7, 0));
    /* fewer micro-batches than stages: rank 0 warm-up min(3, 2) = 2, no steady phase */
    ASSERT_ORDER(4, 0, 2, 1, F(0, 0), F(1, 0), B(0, 0), B(1, 0));
    ASSERT_ORDER(4, 2, 2, 1, F(0, 0), F(1, 0), B(0, 0), B(1, 0));
    ASSERT_ORDER(4, 3, 2, 1, F(0, 0), B(0, 0), F(1, 0), B(1, 0));
}

static void interleaved_pp2_v2_m4(void **state)
{
    (void)state;
    /* Derived by hand from forward_backward_pipelining_with_interleaving, pp 2, v 2, m 4: total 8 virtual
     * iterations; m != pp so warm-up = min((2 - rank - 1) x 2 + (2 - 1) x 2, 8): rank 0 4, rank 1 2.
     * get_model_chunk_id(k, fwd) = (k mod 4) / 2: k 0..7 -> 0 0 1 1 0 0 1 1; backward: 1 - that
     * -> 1 1 0 0 1 1 0 0. Micro-batch (k / 4) x 2 + k mod 2: 0 1 0 1 2 3 2 3 (each chunk's forwards in
     * order, each chunk's backwards popping its oldest forward).
     * Rank 0: warm-up F(0..3) = F0c0 F1c0 F0c1 F1c1; steady k 0..3: F(k+4) B(k) = F2c0 B0c1, F3c0 B1c1,
     *         F2c1 B0c0, F3c1 B1c0; cool-down B(4..7) = B2c1 B3c1 B2c0 B3c0.
     * Rank 1: warm-up F0c0 F1c0; steady k 0..5: F(k+2) B(k) = F0c1 B0c1, F1c1 B1c1, F2c0 B0c0, F3c0 B1c0,
     *         F2c1 B2c1, F3c1 B3c1; cool-down B(6) B(7) = B2c0 B3c0. */
    ASSERT_ORDER(2, 0, 4, 2, F(0, 0), F(1, 0), F(0, 1), F(1, 1), F(2, 0), B(0, 1), F(3, 0), B(1, 1), F(2, 1),
                 B(0, 0), F(3, 1), B(1, 0), B(2, 1), B(3, 1), B(2, 0), B(3, 0));
    ASSERT_ORDER(2, 1, 4, 2, F(0, 0), F(1, 0), F(0, 1), B(0, 1), F(1, 1), B(1, 1), F(2, 0), B(0, 0), F(3, 0),
                 B(1, 0), F(2, 1), B(2, 1), F(3, 1), B(3, 1), B(2, 0), B(3, 0));
}

static void interleaved_all_warmup(void **state)
{
    (void)state;
    /* m == pp: Megatron sets all_warmup_microbatches, every rank runs all 4 forwards then all 4 backwards
     * (2 x 2 virtual iterations), whatever its rank. */
    for (uint32_t r = 0; r < 2; r++)
        ASSERT_ORDER(2, r, 2, 2, F(0, 0), F(1, 0), F(0, 1), F(1, 1), B(0, 1), B(1, 1), B(0, 0), B(1, 0));
    assert_int_equal(schedule_warmup(4, 3, 4, 3), 12);
    /* m = 2 pp: rank 3 of 4 with 3 chunks warms up (3 - 1) x 4 = 8 of 24 */
    assert_int_equal(schedule_warmup(4, 3, 8, 3), 8);
    assert_int_equal(schedule_warmup(4, 0, 8, 3), 14);
    /* pp 8 rank 0, m 16: 2 x 7 + (v - 1) x 8 = 22 (v 2, of 32) and 38 (v 4, of 64). With m >= 2 pp the
     * formula never reaches m v, so the cap at m x v only matters for v = 1. */
    assert_int_equal(schedule_warmup(8, 0, 16, 2), 22);
    assert_int_equal(schedule_warmup(8, 0, 16, 4), 38);
    /* v 1 caps at m; pp 1 has none */
    assert_int_equal(schedule_warmup(8, 0, 3, 1), 3);
    assert_int_equal(schedule_warmup(1, 0, 3, 1), 0);
}

/* ---- invariants ---- */

/* What the header promises for the warm-up, restated independently of the library. */
static uint64_t expected_warmup(uint32_t pp, uint32_t r, uint32_t m, uint32_t v)
{
    uint64_t total = (uint64_t)m * v, w;
    if (pp == 1)
        return 0;
    if (v == 1)
        w = pp - r - 1;
    else if (m == pp)
        w = total;
    else
        w = 2 * (uint64_t)(pp - r - 1) + (uint64_t)(v - 1) * pp;
    return w < total ? w : total;
}

/* Calls fn for every (pp, m, v) with pp <= 8, v <= 4: for v = 1 every m in 1..4pp, for v > 1 (needs pp > 1)
 * the multiples of pp up to 4pp. */
static void for_each_config(void (*fn)(uint32_t pp, uint32_t m, uint32_t v, void *ctx), void *ctx)
{
    for (uint32_t pp = 1; pp <= 8; pp++)
        for (uint32_t v = 1; v <= 4; v++) {
            if (v > 1 && pp == 1)
                continue;
            for (uint32_t m = (v == 1 ? 1 : pp); m <= 4 * pp; m += (v == 1 ? 1 : pp))
                fn(pp, m, v, ctx);
        }
}

static void check_invariants(uint32_t pp, uint32_t m, uint32_t v, void *ctx)
{
    (void)ctx;
    for (uint32_t r = 0; r < pp; r++) {
        size_t n;
        schedule_item *s = build(pp, r, m, v, &n);
        assert_int_equal(n, 2 * (size_t)m * v);
        /* position of each pass, -1 when absent; next expected micro-batch per chunk and direction */
        long *pos_f = malloc(sizeof(long) * m * v), *pos_b = malloc(sizeof(long) * m * v);
        uint32_t *next_f = calloc(v, sizeof *next_f), *next_b = calloc(v, sizeof *next_b);
        assert_true(pos_f && pos_b && next_f && next_b);
        for (size_t i = 0; i < (size_t)m * v; i++)
            pos_f[i] = pos_b[i] = -1;
        for (size_t i = 0; i < n; i++) {
            const schedule_item *it = &s[i];
            assert_true(it->microbatch < m);
            assert_true(it->chunk < v);
            assert_true(it->backward <= 1);
            long *pos = it->backward ? pos_b : pos_f;
            size_t key = (size_t)it->chunk * m + it->microbatch;
            if (pos[key] != -1)
                fail_msg("pp %u rank %u m %u v %u: %c(mb %u, chunk %u) twice", pp, r, m, v,
                         it->backward ? 'B' : 'F', it->microbatch, it->chunk);
            pos[key] = (long)i;
            /* each chunk sees its micro-batches in order, both ways (data iterator; FIFO of activations) */
            uint32_t *next = it->backward ? next_b : next_f;
            assert_int_equal(it->microbatch, next[it->chunk]);
            next[it->chunk]++;
        }
        for (size_t key = 0; key < (size_t)m * v; key++) {
            assert_true(pos_f[key] >= 0);
            assert_true(pos_b[key] > pos_f[key]); /* every backward after its own forward */
        }
        assert_int_equal(s[0].backward, 0);
        /* warm-up: the forwards before the first backward, less the forward that opens the steady phase
         * when there is one */
        uint64_t lead = 0;
        while (lead < n && !s[lead].backward)
            lead++;
        uint64_t total = (uint64_t)m * v, w = expected_warmup(pp, r, m, v);
        assert_int_equal(schedule_warmup(pp, r, m, v), w);
        assert_int_equal(lead, w == total ? total : w + 1);
        free(pos_f);
        free(pos_b);
        free(next_f);
        free(next_b);
        free(s);
    }
}

static void invariants(void **state)
{
    (void)state;
    for_each_config(check_invariants, NULL);
    /* and a few larger ones */
    check_invariants(16, 64, 1, NULL);
    check_invariants(16, 48, 3, NULL);
    check_invariants(3, 300, 5, NULL);
}

/* ---- whole-pipeline simulation ---- */

/* Runs pp ranks, rank r executing list[r] (len[r] passes) strictly in order, with passes of tf (forward)
 * and tb (backward) time units per chunk. Forward (mb, s) needs forward (mb, s-1) done; backward (mb, s)
 * needs backward (mb, s+1) done, and the last virtual stage's backward its own forward (s = chunk x pp +
 * rank). A pass starts as soon as its rank is free and its dependency is done (no communication cost).
 * Returns the makespan, or -1 when the ranks deadlock. A rank that completes is checked to have been busy
 * exactly m v (tf + tb). */
static long simulate_lists(uint32_t pp, uint32_t m, uint32_t v, schedule_item *const *list, const size_t *len,
                           long tf, long tb)
{
    return schedule_sim_run(SCHEDULE_AUTO, pp, m, v, list, len, tf, tb, 0); /* a whole backward: tb */
}

/* The same with every rank running its schedule_build order. */
static long simulate(uint32_t pp, uint32_t m, uint32_t v, long tf, long tb)
{
    schedule_item **list = calloc(pp, sizeof *list);
    size_t *len = calloc(pp, sizeof *len);
    assert_true(list && len);
    for (uint32_t r = 0; r < pp; r++)
        list[r] = build(pp, r, m, v, &len[r]);
    long t = simulate_lists(pp, m, v, list, len, tf, tb);
    for (uint32_t r = 0; r < pp; r++)
        free(list[r]);
    free(list);
    free(len);
    return t;
}

typedef struct sim_case {
    long tf, tb;
} sim_case;

static void check_makespan(uint32_t pp, uint32_t m, uint32_t v, void *ctx)
{
    const sim_case *c = ctx;
    long got = simulate(pp, m, v, c->tf, c->tb);
    if (got < 0)
        fail_msg("pp %u m %u v %u: the ranks deadlock", pp, m, v);
    /* 1F1B: (m + pp - 1)(tf + tb) (Narayanan et al. 2021 Sec. 2.2.1: bubble (p-1)(tf+tb) over an ideal
     * m(tf+tb)). Interleaved with per-chunk times tf, tb: ideal m v (tf + tb), bubble (pp - 1)(tf + tb),
     * i.e. (pp-1)/(v m) of the ideal (Sec. 2.2.2). v = 1 is the same formula. */
    long want = ((long)m * v + pp - 1) * (c->tf + c->tb);
    if (got != want)
        fail_msg("pp %u m %u v %u tf %ld tb %ld: makespan %ld, want (m v + pp - 1)(tf + tb) = %ld", pp, m, v,
                 c->tf, c->tb, got, want);
}

static void pipeline_completes_with_textbook_makespan(void **state)
{
    (void)state;
    sim_case unit = {1, 1};
    for_each_config(check_makespan, &unit); /* 2 (m v + pp - 1) */
    /* the figure holds for unequal passes too (here a backward twice a forward), so it comes from the
     * order and not from a coincidence of equal times */
    sim_case twice = {1, 2};
    for_each_config(check_makespan, &twice);
    assert_int_equal(simulate(4, 8, 1, 1, 1), 22);  /* 2 (8 + 3) */
    assert_int_equal(simulate(2, 4, 2, 1, 1), 18);  /* 2 (8 + 1) */
    assert_int_equal(simulate(1, 3, 1, 1, 1), 6);
}

static void simulator_detects_deadlock(void **state)
{
    (void)state;
    /* The check above means something only if the simulator can fail. pp 2, m 2: rank 1 running micro-batch
     * 1 first waits for rank 0's F1, which comes after rank 0's B0, which waits for rank 1's B0: a cycle. */
    schedule_item r0[] = {F(0, 0), B(0, 0), F(1, 0), B(1, 0)};
    schedule_item r1[] = {F(1, 0), B(1, 0), F(0, 0), B(0, 0)};
    schedule_item *const bad[2] = {r0, r1};
    const size_t len[2] = {4, 4};
    assert_int_equal(simulate_lists(2, 2, 1, bad, len, 1, 1), -1);
    /* with rank 1 in micro-batch order too, the pipeline runs one micro-batch at a time: F0 on rank 0 ends
     * at 1, on rank 1 at 2, B0 on rank 1 at 3, on rank 0 at 4; micro-batch 1 the same from 4 to 8 */
    schedule_item ok1[] = {F(0, 0), B(0, 0), F(1, 0), B(1, 0)};
    schedule_item *const good[2] = {r0, ok1};
    assert_int_equal(simulate_lists(2, 2, 1, good, len, 1, 1), 8);
}

/* ---- layers per chunk ---- */

static void chunk_layers_megatron_example(void **state)
{
    (void)state;
    uint32_t first, count;
    cxl_err e;
    /* Megatron's comment (ParallelTransformer): 8 layers, 2 stages, 2 virtual stages:
     * Stage 0: [0, 1] [4, 5]; Stage 1: [2, 3] [6, 7] */
    const uint32_t want2[2][2] = {{0, 4}, {2, 6}};
    for (uint32_t r = 0; r < 2; r++)
        for (uint32_t c = 0; c < 2; c++) {
            assert_int_equal(schedule_chunk_layers(2, 2, 8, r, c, &first, &count, &e), 0);
            assert_int_equal(first, want2[r][c]);
            assert_int_equal(count, 2);
        }
    /* 8 layers, 2 stages, 4 model chunks: Stage 0: [0] [2] [4] [6]; Stage 1: [1] [3] [5] [7] */
    for (uint32_t r = 0; r < 2; r++)
        for (uint32_t c = 0; c < 4; c++) {
            assert_int_equal(schedule_chunk_layers(2, 4, 8, r, c, &first, &count, &e), 0);
            assert_int_equal(first, 2 * c + r);
            assert_int_equal(count, 1);
        }
    /* no interleaving: contiguous stages of L / pp */
    assert_int_equal(schedule_chunk_layers(4, 1, 96, 3, 0, &first, &count, &e), 0);
    assert_int_equal(first, 72);
    assert_int_equal(count, 24);
}

static void chunk_layers_partition(void **state)
{
    (void)state;
    for (uint32_t pp = 1; pp <= 8; pp++)
        for (uint32_t v = 1; v <= 4; v++)
            for (uint32_t mult = 1; mult <= 3; mult++) {
                uint32_t L = pp * v * mult;
                unsigned char *owner = calloc(L, 1);
                assert_non_null(owner);
                for (uint32_t r = 0; r < pp; r++)
                    for (uint32_t c = 0; c < v; c++) {
                        uint32_t first = 0, count = 0;
                        assert_int_equal(schedule_chunk_layers(pp, v, L, r, c, &first, &count, NULL), 0);
                        assert_int_equal(count, mult);
                        /* virtual stage c pp + r holds the (c pp + r)-th block */
                        assert_int_equal(first, (c * pp + r) * mult);
                        for (uint32_t l = first; l < first + count; l++) {
                            assert_true(l < L);
                            assert_int_equal(owner[l], 0);
                            owner[l] = 1;
                        }
                    }
                for (uint32_t l = 0; l < L; l++)
                    assert_int_equal(owner[l], 1);
                free(owner);
            }
}

/* ---- errors ---- */

static void build_errors(void **state)
{
    (void)state;
    cxl_err e;
    schedule_item out[8];
    size_t n = 99;
    cxl_err_clear(&e);
    assert_int_equal(schedule_build(0, 0, 4, 1, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0 ranks"));
    assert_int_equal(schedule_build(4, 4, 4, 1, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "rank 4"));
    assert_non_null(strstr(e.msg, "0..3"));
    assert_int_equal(schedule_build(4, 0, 0, 1, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0 micro-batches"));
    assert_int_equal(schedule_build(4, 0, 4, 0, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0 virtual stages"));
    assert_int_equal(schedule_build(1, 0, 4, 2, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "2 virtual stages"));
    assert_non_null(strstr(e.msg, "pp is 1"));
    assert_int_equal(schedule_build(4, 0, 6, 2, out, 8, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "6 micro-batches"));
    assert_non_null(strstr(e.msg, "pp 4"));
    assert_int_equal(schedule_check(4, 0, 6, 2, NULL), CXL_ECONFIG);
    assert_int_equal(schedule_check(4, 3, 6, 1, NULL), 0); /* 1F1B takes any m */
    assert_int_equal(schedule_build(0, 0, 4, 1, out, 8, &n, NULL), CXL_ECONFIG);
    /* too small an output: the code, a message naming both counts, and the length needed */
    assert_int_equal(schedule_build(4, 0, 8, 1, out, 8, &n, &e), CXL_ELIMIT);
    assert_int_equal(n, 16);
    assert_non_null(strstr(e.msg, "16 passes"));
    assert_non_null(strstr(e.msg, "holds 8"));
    n = 0;
    assert_int_equal(schedule_build(2, 1, 4, 2, NULL, 0, &n, NULL), CXL_ELIMIT);
    assert_int_equal(n, 16);
    /* exactly enough is enough */
    assert_int_equal(schedule_build(2, 1, 2, 2, out, 8, &n, &e), 0);
    assert_int_equal(n, 8);
    /* a count that cannot fit in memory: 2 x (2^32 - 1)^2 passes */
    n = 0;
    assert_int_equal(schedule_build(1, 0, UINT32_MAX, 1, NULL, 0, &n, &e), CXL_ELIMIT);
    assert_int_equal(n, 2 * (size_t)UINT32_MAX);
    if (SIZE_MAX / 2 < (uint64_t)UINT32_MAX * UINT32_MAX) {
        assert_int_equal(schedule_len(UINT32_MAX, UINT32_MAX), SIZE_MAX);
        assert_int_equal(schedule_build(3, 0, 3 * (UINT32_MAX / 3), UINT32_MAX, NULL, 0, &n, &e), CXL_ELIMIT);
        assert_int_equal(n, SIZE_MAX);
        assert_non_null(strstr(e.msg, "do not fit"));
    }
}

static void len_counts_both_directions(void **state)
{
    (void)state;
    assert_int_equal(schedule_len(8, 1), 16);
    assert_int_equal(schedule_len(8, 3), 48);
    assert_int_equal(schedule_len(1, 1), 2);
    assert_int_equal(schedule_len(0, 4), 0);
}

static void chunk_layers_errors(void **state)
{
    (void)state;
    cxl_err e;
    uint32_t first = 77, count = 77;
    assert_int_equal(schedule_chunk_layers(0, 1, 8, 0, 0, &first, &count, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0 ranks"));
    assert_int_equal(schedule_chunk_layers(2, 0, 8, 0, 0, &first, &count, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0 virtual stages"));
    assert_int_equal(schedule_chunk_layers(2, 2, 8, 2, 0, &first, &count, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "rank 2"));
    assert_int_equal(schedule_chunk_layers(2, 2, 8, 1, 2, &first, &count, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "chunk 2"));
    assert_non_null(strstr(e.msg, "0..1"));
    assert_int_equal(schedule_chunk_layers(4, 2, 12, 0, 0, &first, &count, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "12 layers"));
    assert_non_null(strstr(e.msg, "= 8"));
    assert_int_equal(schedule_chunk_layers(4, 2, 0, 0, 0, &first, &count, NULL), CXL_ECONFIG);
    /* nothing written on error */
    assert_int_equal(first, 77);
    assert_int_equal(count, 77);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_pipelining),
        cmocka_unit_test(one_f_one_b),
        cmocka_unit_test(interleaved_pp2_v2_m4),
        cmocka_unit_test(interleaved_all_warmup),
        cmocka_unit_test(invariants),
        cmocka_unit_test(pipeline_completes_with_textbook_makespan),
        cmocka_unit_test(simulator_detects_deadlock),
        cmocka_unit_test(chunk_layers_megatron_example),
        cmocka_unit_test(chunk_layers_partition),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(len_counts_both_directions),
        cmocka_unit_test(chunk_layers_errors),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
