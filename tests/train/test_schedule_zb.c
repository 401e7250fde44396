/* test_schedule_zb.c - the schedules that split the backward: ZB-H1 (schedule_zb_h1; Qi et al., "Zero
 * Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241, Sec. 3.1) and DualPipeV (schedule_dualpipev;
 * deepseek-ai/DualPipe): exact orders written out from the paper's figure and from DualPipeV.step, every
 * pass once and in order, the in-flight bounds they state, a whole-pipeline simulation with separate F, B
 * and W times (ZB-H1 meets the paper's bubble formula), the kind dispatcher and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/schedule.h"

#include "schedule_sim.h"

#define F(mb) {(mb), 0, 0, SCHEDULE_BW}
#define B(mb) {(mb), 0, 1, SCHEDULE_B}
#define W(mb) {(mb), 0, 1, SCHEDULE_W}

/* The order of `kind` (v chunks per rank) for rank `rank`, allocated; its length in *n, checked against
 * want_len unless that is 0. */
static schedule_item *build_kind(int kind, uint32_t pp, uint32_t rank, uint32_t m, uint32_t v, size_t want_len,
                                 size_t *n)
{
    cxl_err e;
    size_t need = 0;
    assert_int_equal(schedule_build_kind(kind, pp, rank, m, v, NULL, 0, &need, &e), CXL_ELIMIT);
    if (want_len)
        assert_int_equal(need, want_len);
    schedule_item *s = calloc(need, sizeof *s);
    assert_non_null(s);
    if (schedule_build_kind(kind, pp, rank, m, v, s, need, n, &e))
        fail_msg("schedule kind %d (pp %u, rank %u, m %u, v %u): %s", kind, pp, rank, m, v, e.msg);
    assert_int_equal(*n, need);
    return s;
}

static schedule_item *build(uint32_t pp, uint32_t rank, uint32_t m, size_t *n)
{
    return build_kind(SCHEDULE_ZB_H1, pp, rank, m, 1, 3 * (size_t)m, n);
}

static char kind_of(const schedule_item *it) { return !it->backward ? 'F' : it->part == SCHEDULE_W ? 'W' : 'B'; }

/* got[0..n) against want[0..n_want), naming the schedule and the first difference; frees got */
static void assert_items(const char *what, uint32_t pp, uint32_t rank, uint32_t m, schedule_item *got, size_t n,
                         const schedule_item *want, size_t n_want)
{
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n; i++)
        if (got[i].microbatch != want[i].microbatch || got[i].chunk != want[i].chunk ||
            got[i].backward != want[i].backward || got[i].part != want[i].part)
            fail_msg("%s pp %u rank %u m %u, pass %zu: got %c%u chunk %u, want %c%u chunk %u", what, pp, rank, m, i,
                     kind_of(&got[i]), got[i].microbatch, got[i].chunk, kind_of(&want[i]), want[i].microbatch,
                     want[i].chunk);
    free(got);
}

static void assert_order(uint32_t pp, uint32_t rank, uint32_t m, const schedule_item *want, size_t n_want)
{
    size_t n;
    schedule_item *s = build(pp, rank, m, &n);
    assert_items("zb-h1", pp, rank, m, s, n, want, n_want);
}

#define ASSERT_ORDER(pp, rank, m, ...)                                                                            \
    do {                                                                                                       \
        const schedule_item want_[] = {__VA_ARGS__};                                                           \
        assert_order((pp), (rank), (m), want_, sizeof want_ / sizeof *want_);                                  \
    } while (0)

/* pp 4, m 8, the paper's Fig. 3 (top) read as rounds x = 0..10 of (F x, B x-(3-i), W x-3) on stage i. */
static void figure_orders(void **state)
{
    (void)state;
    /* stage 0: three forwards alone, then F B W rounds with B and W of the same micro-batch (no W
     * deferred: stage 0 has no cool-down bubble to fill), then B W */
    ASSERT_ORDER(4, 0, 8, F(0), F(1), F(2), F(3), B(0), W(0), F(4), B(1), W(1), F(5), B(2), W(2), F(6), B(3), W(3),
                 F(7), B(4), W(4), B(5), W(5), B(6), W(6), B(7), W(7));
    /* stage 1: two forwards, one F B round, then W one behind; ends with one W */
    ASSERT_ORDER(4, 1, 8, F(0), F(1), F(2), B(0), F(3), B(1), W(0), F(4), B(2), W(1), F(5), B(3), W(2), F(6), B(4),
                 W(3), F(7), B(5), W(4), B(6), W(5), B(7), W(6), W(7));
    /* stage 3 (last): F B from the start, every W three behind; ends with three W's */
    ASSERT_ORDER(4, 3, 8, F(0), B(0), F(1), B(1), F(2), B(2), F(3), B(3), W(0), F(4), B(4), W(1), F(5), B(5), W(2),
                 F(6), B(6), W(3), F(7), B(7), W(4), W(5), W(6), W(7));
    /* fewer micro-batches than stages still gives every pass once */
    ASSERT_ORDER(4, 0, 2, F(0), F(1), B(0), W(0), B(1), W(1));
    ASSERT_ORDER(4, 3, 2, F(0), B(0), F(1), B(1), W(0), W(1));
}

/* ---- invariants ---- */

static void check_invariants(uint32_t pp, uint32_t m)
{
    for (uint32_t r = 0; r < pp; r++) {
        size_t n;
        schedule_item *s = build(pp, r, m, &n);
        long *pos[3];
        uint32_t next[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            pos[k] = malloc(sizeof(long) * m);
            assert_non_null(pos[k]);
            for (uint32_t i = 0; i < m; i++)
                pos[k][i] = -1;
        }
        uint32_t nf = 0, nb = 0, nw = 0, lead = 0, max_fb = 0, max_fw = 0;
        for (size_t i = 0; i < n; i++) {
            const schedule_item *it = &s[i];
            int k = !it->backward ? 0 : it->part == SCHEDULE_B ? 1 : 2;
            assert_true(it->backward ? it->part == SCHEDULE_B || it->part == SCHEDULE_W : it->part == 0);
            assert_int_equal(it->chunk, 0);
            assert_true(it->microbatch < m);
            assert_int_equal(pos[k][it->microbatch], -1); /* once */
            assert_int_equal(it->microbatch, next[k]);    /* in order, each kind */
            next[k]++;
            pos[k][it->microbatch] = (long)i;
            nf += k == 0;
            nb += k == 1;
            nw += k == 2;
            if (nb == 0)
                lead = nf;
            /* micro-batches held: between F and B (full activations), between F and W (what W needs) */
            if (nf - nb > max_fb)
                max_fb = nf - nb;
            if (nf - nw > max_fw)
                max_fw = nf - nw;
        }
        for (uint32_t mb = 0; mb < m; mb++) {
            assert_true(pos[0][mb] >= 0 && pos[0][mb] < pos[1][mb]); /* F before B */
            assert_true(pos[1][mb] < pos[2][mb]);                    /* B before W */
        }
        /* as 1F1B: p - r forwards before the first B, at most p - r awaiting B; and at most p awaiting W
         * (Sec. 3.1: ZB-H1 keeps 1F1B's peak activation memory) */
        uint32_t cap_fb = pp - r < m ? pp - r : m, cap_fw = pp < m ? pp : m;
        assert_int_equal(lead, cap_fb);
        assert_int_equal(max_fb, cap_fb);
        assert_int_equal(max_fw, cap_fw);
        for (int k = 0; k < 3; k++)
            free(pos[k]);
        free(s);
    }
}

static void invariants(void **state)
{
    (void)state;
    for (uint32_t pp = 2; pp <= 8; pp++)
        for (uint32_t m = 1; m <= 4 * pp; m++)
            check_invariants(pp, m);
    check_invariants(16, 100);
}

/* ---- whole-pipeline simulation ---- */

/* The pipeline of `kind` (v chunks per rank) under schedule_sim_run. */
static long simulate(int kind, uint32_t pp, uint32_t m, uint32_t v, long tf, long tb, long tw)
{
    schedule_item **list = calloc(pp, sizeof *list);
    size_t *len = calloc(pp, sizeof *len);
    assert_true(list && len);
    for (uint32_t r = 0; r < pp; r++)
        list[r] = build_kind(kind, pp, r, m, v, 0, &len[r]);
    long t = schedule_sim_run(kind, pp, m, v, list, len, tf, tb, tw);
    for (uint32_t r = 0; r < pp; r++)
        free(list[r]);
    free(list);
    free(len);
    return t;
}

static void bubble_is_the_papers(void **state)
{
    (void)state;
    /* Sec. 3.1: 1F1B's bubble (p-1)(T_F + T_B + T_W), ZB-H1's (p-1)(T_F + T_B - T_W), over an ideal
     * m (T_F + T_B + T_W). The ZB-H1 figure holds exactly with m >= p and T_W no longer than T_F and T_B
     * (the paper's setting: W fills a gap of F + B); checked for every p <= 8, m in p..4p, and several
     * unequal times. */
    const long times[][3] = {{1, 1, 1}, {2, 2, 1}, {1, 2, 1}, {2, 1, 1}, {3, 3, 2}, {1, 3, 1}};
    for (size_t c = 0; c < sizeof times / sizeof *times; c++) {
        long tf = times[c][0], tb = times[c][1], tw = times[c][2];
        for (uint32_t pp = 2; pp <= 8; pp++)
            for (uint32_t m = pp; m <= 4 * pp; m++) {
                long zb = simulate(SCHEDULE_ZB_H1, pp, m, 1, tf, tb, tw);
                long ob = simulate(SCHEDULE_1F1B, pp, m, 1, tf, tb, tw);
                long ideal = (long)m * (tf + tb + tw);
                if (zb != ideal + (long)(pp - 1) * (tf + tb - tw) || ob != ideal + (long)(pp - 1) * (tf + tb + tw))
                    fail_msg("pp %u m %u times %ld %ld %ld: zb-h1 %ld, 1f1b %ld, ideal %ld", pp, m, tf, tb, tw, zb, ob,
                             ideal);
            }
    }
    /* pp 4, m 8, unit passes: 24 + 3 against 24 + 9 */
    assert_int_equal(simulate(SCHEDULE_ZB_H1, 4, 8, 1, 1, 1, 1), 27);
    assert_int_equal(simulate(SCHEDULE_1F1B, 4, 8, 1, 1, 1, 1), 33);
    /* m < p: no deadlock, and never slower than 1F1B */
    for (uint32_t pp = 2; pp <= 8; pp++)
        for (uint32_t m = 1; m < pp; m++) {
            long zb = simulate(SCHEDULE_ZB_H1, pp, m, 1, 1, 1, 1);
            assert_true(zb > 0);
            assert_true(zb <= simulate(SCHEDULE_1F1B, pp, m, 1, 1, 1, 1));
        }
}

static void simulator_detects_deadlock(void **state)
{
    (void)state;
    /* pp 2, m 1, rank 0 running W before its B can never proceed */
    schedule_item r0[] = {F(0), W(0), B(0)};
    schedule_item r1[] = {F(0), B(0), W(0)};
    schedule_item *const bad[2] = {r0, r1};
    const size_t len[2] = {3, 3};
    assert_int_equal(schedule_sim_run(SCHEDULE_ZB_H1, 2, 1, 1, bad, len, 1, 1, 1), -1);
}

/* ---- DualPipeV ---- */

#define Fa(mb) {(mb), 0, 0, SCHEDULE_BW}
#define Fb(mb) {(mb), 1, 0, SCHEDULE_BW}
#define Ba(mb) {(mb), 0, 1, SCHEDULE_BW}
#define Bb(mb) {(mb), 1, 1, SCHEDULE_BW}
#define Ia(mb) {(mb), 0, 1, SCHEDULE_B}
#define Ib(mb) {(mb), 1, 1, SCHEDULE_B}
#define Wa(mb) {(mb), 0, 1, SCHEDULE_W}
#define Wb(mb) {(mb), 1, 1, SCHEDULE_W}

static schedule_item *build_dpv(uint32_t pp, uint32_t rank, uint32_t m, size_t *n)
{
    return build_kind(SCHEDULE_DUALPIPEV, pp, rank, m, 2, 4 * (size_t)m + 2 * pp - rank - 1, n);
}

static void assert_dpv(uint32_t pp, uint32_t rank, uint32_t m, const schedule_item *want, size_t n_want)
{
    size_t n;
    schedule_item *s = build_dpv(pp, rank, m, &n);
    assert_items("dualpipev", pp, rank, m, s, n, want, n_want);
}

/* pp 2, m 4, written out from DualPipeV.step's eight steps (schedule.h); a = chunk 0, b = chunk 1, I a
 * backward's input gradient alone, W the weight gradient of the oldest I. */
static void dualpipev_orders(void **state)
{
    (void)state;
    /* rank 0: 1. F0a F1a  2. F2a F0b  3. I0b W0b F1b  4. F3a B1b F2b B0a  5. B2b F3b B1a
     *         6. B3b, then (r even) B2a split  7. W2a I3a  8. W3a */
    const schedule_item r0[] = {Fa(0), Fa(1), Fa(2), Fb(0), Ib(0), Wb(0), Fb(1), Fa(3), Bb(1), Fb(2), Ba(0),
                                Bb(2), Fb(3), Ba(1), Bb(3), Ia(2), Wa(2), Ia(3), Wa(3)};
    assert_dpv(2, 0, 4, r0, sizeof r0 / sizeof *r0);
    /* rank 1 (the turn of the V): 2. F0a F0b F1a F1b  4. F2a B0b F2b B0a F3a B1b F3b B1a
     *         6. B2b B2a, then (r odd) I3b I3a  8. W3b W3a */
    const schedule_item r1[] = {Fa(0), Fb(0), Fa(1), Fb(1), Fa(2), Bb(0), Fb(2), Ba(0), Fa(3), Bb(1), Fb(3),
                                Ba(1), Bb(2), Ba(2), Ib(3), Ia(3), Wb(3), Wa(3)};
    assert_dpv(2, 1, 4, r1, sizeof r1 / sizeof *r1);
}

static void dualpipev_invariants_and_makespan(void **state)
{
    (void)state;
    for (uint32_t pp = 2; pp <= 8; pp++)
        for (uint32_t m = 2 * pp; m <= 2 * pp + 9; m++) {
            for (uint32_t r = 0; r < pp; r++) {
                size_t n;
                schedule_item *s = build_dpv(pp, r, m, &n);
                uint32_t next[2][2] = {{0}}, held = 0, peak = 0;
                schedule_item *fifo = calloc(n, sizeof *fifo); /* the B' awaiting their W */
                size_t head = 0, tail = 0;
                assert_non_null(fifo);
                for (size_t i = 0; i < n; i++) {
                    const schedule_item *it = &s[i];
                    assert_true(it->chunk < 2 && it->microbatch < m);
                    if (it->part == SCHEDULE_W) {
                        /* the weight gradient of the oldest B' (the code's FIFO WeightGradStore) */
                        assert_true(head < tail);
                        assert_int_equal(it->microbatch, fifo[head].microbatch);
                        assert_int_equal(it->chunk, fifo[head].chunk);
                        head++;
                        held--;
                        continue;
                    }
                    /* each chunk's F and B in micro-batch order */
                    assert_int_equal(it->microbatch, next[it->chunk][it->backward]);
                    next[it->chunk][it->backward]++;
                    if (it->part == SCHEDULE_B)
                        fifo[tail++] = *it;
                    /* chunk-passes held between a forward and its weight gradient */
                    if (!it->backward && ++held > peak)
                        peak = held;
                    if (it->part == SCHEDULE_BW && it->backward)
                        held--;
                }
                assert_int_equal(head, tail);
                free(fifo);
                for (int c = 0; c < 2; c++) {
                    assert_int_equal(next[c][0], m);
                    assert_int_equal(next[c][1], m);
                }
                assert_int_equal(held, 0);
                assert_int_equal(peak, 2 * pp + 1); /* the DualPipe README's PP + 1, PP = 2 pp stages */
                free(s);
            }
            /* no deadlock; under unit passes, F and B of a pair run back to back (no overlap), a bubble of
             * pp - 1 against the ideal 2 m (T_F + T_B + T_W); within the README's (PP/2 - 1)(F&B + B - 3W)
             * with F&B = F + B for every time mix below, and shorter than 1F1B of the same layers (two
             * chunks' worth per pass) */
            assert_int_equal(simulate(SCHEDULE_DUALPIPEV, pp, m, 2, 1, 1, 1), 6 * (long)m + pp - 1);
            const long times[][3] = {{1, 1, 1}, {2, 2, 1}, {1, 2, 1}, {3, 3, 2}};
            for (size_t c = 0; c < sizeof times / sizeof *times; c++) {
                long tf = times[c][0], tb = times[c][1], tw = times[c][2], full = tb + tw;
                long got = simulate(SCHEDULE_DUALPIPEV, pp, m, 2, tf, tb, tw), ideal = 2 * (long)m * (tf + full);
                assert_true(got - ideal <= (long)(pp - 1) * (tf + full + full - 3 * tw));
                assert_true(got < simulate(SCHEDULE_1F1B, pp, m, 1, 2 * tf, 2 * tb, 2 * tw));
            }
        }
}

/* ---- the kind dispatcher and errors ---- */

static void assert_same(const schedule_item *a, const schedule_item *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].microbatch, b[i].microbatch);
        assert_int_equal(a[i].chunk, b[i].chunk);
        assert_int_equal(a[i].backward, b[i].backward);
        assert_int_equal(a[i].part, b[i].part);
    }
}

static void kinds_and_errors(void **state)
{
    (void)state;
    cxl_err e;
    schedule_item out[64], ref[64];
    size_t n = 0, nr = 0;
    /* auto, 1f1b and interleaved are schedule_build's orders */
    assert_int_equal(schedule_build_kind(SCHEDULE_1F1B, 4, 1, 8, 1, out, 64, &n, &e), 0);
    assert_int_equal(schedule_build(4, 1, 8, 1, ref, 64, &nr, &e), 0);
    assert_int_equal(n, nr);
    assert_same(out, ref, n);
    assert_int_equal(schedule_build_kind(SCHEDULE_INTERLEAVED, 2, 0, 4, 2, out, 64, &n, &e), 0);
    assert_int_equal(schedule_build_kind(SCHEDULE_AUTO, 2, 0, 4, 2, ref, 64, &nr, &e), 0);
    assert_same(out, ref, n);
    assert_int_equal(schedule_build_kind(SCHEDULE_1F1B, 2, 0, 4, 2, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "virtual_stages is 2"));
    assert_int_equal(schedule_build_kind(SCHEDULE_INTERLEAVED, 2, 0, 4, 1, out, 64, &n, &e), CXL_ECONFIG);
    assert_int_equal(schedule_build_kind(SCHEDULE_ZB_H1, 2, 0, 4, 2, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "zb-h1"));
    assert_int_equal(schedule_build_kind(99, 2, 0, 4, 1, out, 64, &n, &e), CXL_ECONFIG);
    /* zb-h1: a pipeline, a rank in it, micro-batches, room */
    assert_int_equal(schedule_zb_h1(1, 0, 4, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "pp is 1"));
    assert_int_equal(schedule_zb_h1(4, 4, 4, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "rank 4"));
    assert_int_equal(schedule_zb_h1(4, 0, 0, out, 64, &n, NULL), CXL_ECONFIG);
    assert_int_equal(schedule_zb_h1(4, 0, 8, out, 23, &n, &e), CXL_ELIMIT);
    assert_int_equal(n, 24);
    assert_non_null(strstr(e.msg, "holds 23"));
    assert_int_equal(schedule_zb_h1(4, 0, 8, out, 24, &n, &e), 0);
    /* dualpipev: a pipeline, two chunks, m >= 2 pp */
    assert_int_equal(schedule_build_kind(SCHEDULE_DUALPIPEV, 4, 0, 8, 1, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "virtual_stages is 1"));
    assert_int_equal(schedule_dualpipev(1, 0, 8, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "pp is 1"));
    assert_int_equal(schedule_dualpipev(4, 0, 7, out, 64, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "at least 2 x pp = 8"));
    assert_int_equal(schedule_dualpipev(4, 9, 8, out, 64, &n, &e), CXL_ECONFIG);
    assert_int_equal(schedule_dualpipev(4, 0, 8, out, 38, &n, &e), CXL_ELIMIT);
    assert_int_equal(n, 39); /* 4 m + 2 pp - rank - 1 */
    assert_int_equal(schedule_build_kind(SCHEDULE_DUALPIPEV, 4, 3, 8, 2, out, 64, &n, &e), 0);
    assert_int_equal(n, 36);
    /* the V: rank r holds stages r and 2 pp - 1 - r, and the inverse gives them back */
    for (uint32_t st = 0; st < 8; st++) {
        uint32_t r, c;
        schedule_stage_owner(SCHEDULE_DUALPIPEV, 4, st, &r, &c);
        assert_int_equal(schedule_stage_of(SCHEDULE_DUALPIPEV, 4, r, c), st);
        assert_int_equal(r, st < 4 ? st : 7 - st);
        schedule_stage_owner(SCHEDULE_INTERLEAVED, 4, st, &r, &c);
        assert_int_equal(r * 1 + c * 4, st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(figure_orders),
        cmocka_unit_test(invariants),
        cmocka_unit_test(bubble_is_the_papers),
        cmocka_unit_test(simulator_detects_deadlock),
        cmocka_unit_test(dualpipev_orders),
        cmocka_unit_test(dualpipev_invariants_and_makespan),
        cmocka_unit_test(kinds_and_errors),
    };
    return cmocka_run_group_tests_name("schedule_zb", tests, NULL, NULL);
}
