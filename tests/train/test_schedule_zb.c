/* test_schedule_zb.c - the zero-bubble schedule ZB-H1 (schedule_zb_h1; Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024, arXiv 2401.10241, Sec. 3.1): exact orders written out from the paper's figure,
 * every pass once and in order, the in-flight bounds the paper states, a whole-pipeline simulation with
 * separate F, B and W times that meets the paper's bubble formula, the kind dispatcher and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/schedule.h"

#define F(mb) {(mb), 0, 0, SCHEDULE_BW}
#define B(mb) {(mb), 0, 1, SCHEDULE_B}
#define W(mb) {(mb), 0, 1, SCHEDULE_W}

static schedule_item *build(uint32_t pp, uint32_t rank, uint32_t m, size_t *n)
{
    cxl_err e;
    size_t need = 0;
    assert_int_equal(schedule_zb_h1(pp, rank, m, NULL, 0, &need, &e), CXL_ELIMIT);
    assert_int_equal(need, 3 * (size_t)m);
    schedule_item *s = calloc(need, sizeof *s);
    assert_non_null(s);
    if (schedule_zb_h1(pp, rank, m, s, need, n, &e))
        fail_msg("schedule_zb_h1(pp %u, rank %u, m %u): %s", pp, rank, m, e.msg);
    assert_int_equal(*n, need);
    return s;
}

static char kind_of(const schedule_item *it) { return !it->backward ? 'F' : it->part == SCHEDULE_W ? 'W' : 'B'; }

static void assert_order(uint32_t pp, uint32_t rank, uint32_t m, const schedule_item *want, size_t n_want)
{
    size_t n;
    schedule_item *s = build(pp, rank, m, &n);
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n; i++)
        if (s[i].microbatch != want[i].microbatch || s[i].chunk != want[i].chunk ||
            s[i].backward != want[i].backward || s[i].part != want[i].part)
            fail_msg("pp %u rank %u m %u, pass %zu: got %c%u, want %c%u", pp, rank, m, i, kind_of(&s[i]),
                     s[i].microbatch, kind_of(&want[i]), want[i].microbatch);
    free(s);
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

/* Every rank runs its list strictly in order; F (mb, r) needs F (mb, r-1), B (mb, r) needs B (mb, r+1) or on
 * the last stage its own F, W (mb, r) its own B (the list order gives that); a split-free backward
 * (SCHEDULE_BW) takes tb + tw. Returns the makespan, -1 on deadlock; a rank that completes was busy exactly
 * m (tf + tb + tw). */
static long simulate_lists(uint32_t pp, uint32_t m, schedule_item *const *list, const size_t *len, long tf, long tb,
                           long tw)
{
    size_t *next = calloc(pp, sizeof *next);
    long *clock = calloc(pp, sizeof *clock), *busy = calloc(pp, sizeof *busy);
    long *done_f = malloc(sizeof(long) * pp * m), *done_b = malloc(sizeof(long) * pp * m);
    assert_true(next && clock && busy && done_f && done_b);
    for (size_t i = 0; i < (size_t)pp * m; i++)
        done_f[i] = done_b[i] = -1;
    for (int progress = 1; progress;) {
        progress = 0;
        for (uint32_t r = 0; r < pp; r++)
            while (next[r] < len[r]) {
                const schedule_item *it = &list[r][next[r]];
                size_t at = (size_t)r * m + it->microbatch;
                long dep, d;
                if (!it->backward) {
                    dep = r == 0 ? 0 : done_f[at - m];
                    d = tf;
                } else if (it->part == SCHEDULE_W) {
                    dep = done_b[at];
                    d = tw;
                } else {
                    dep = r == pp - 1 ? done_f[at] : done_b[at + m];
                    d = it->part == SCHEDULE_B ? tb : tb + tw;
                }
                if (dep < 0)
                    break;
                clock[r] = (clock[r] > dep ? clock[r] : dep) + d;
                busy[r] += d;
                if (!it->backward)
                    done_f[at] = clock[r];
                else if (it->part != SCHEDULE_W)
                    done_b[at] = clock[r];
                next[r]++;
                progress = 1;
            }
    }
    long makespan = 0;
    for (uint32_t r = 0; r < pp; r++) {
        if (next[r] < len[r]) {
            makespan = -1;
            continue;
        }
        assert_int_equal(busy[r], (long)m * (tf + tb + tw));
        if (makespan >= 0 && clock[r] > makespan)
            makespan = clock[r];
    }
    free(next);
    free(clock);
    free(busy);
    free(done_f);
    free(done_b);
    return makespan;
}

/* The pipeline of `kind` (SCHEDULE_ZB_H1 or SCHEDULE_1F1B) under the simulation above. */
static long simulate(int kind, uint32_t pp, uint32_t m, long tf, long tb, long tw)
{
    schedule_item **list = calloc(pp, sizeof *list);
    size_t *len = calloc(pp, sizeof *len);
    assert_true(list && len);
    for (uint32_t r = 0; r < pp; r++) {
        size_t need = 0;
        assert_int_equal(schedule_build_kind(kind, pp, r, m, 1, NULL, 0, &need, NULL), CXL_ELIMIT);
        list[r] = calloc(need, sizeof **list);
        assert_non_null(list[r]);
        assert_int_equal(schedule_build_kind(kind, pp, r, m, 1, list[r], need, &len[r], NULL), 0);
    }
    long t = simulate_lists(pp, m, list, len, tf, tb, tw);
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
                long zb = simulate(SCHEDULE_ZB_H1, pp, m, tf, tb, tw);
                long ob = simulate(SCHEDULE_1F1B, pp, m, tf, tb, tw);
                long ideal = (long)m * (tf + tb + tw);
                if (zb != ideal + (long)(pp - 1) * (tf + tb - tw) || ob != ideal + (long)(pp - 1) * (tf + tb + tw))
                    fail_msg("pp %u m %u times %ld %ld %ld: zb-h1 %ld, 1f1b %ld, ideal %ld", pp, m, tf, tb, tw, zb, ob,
                             ideal);
            }
    }
    /* pp 4, m 8, unit passes: 24 + 3 against 24 + 9 */
    assert_int_equal(simulate(SCHEDULE_ZB_H1, 4, 8, 1, 1, 1), 27);
    assert_int_equal(simulate(SCHEDULE_1F1B, 4, 8, 1, 1, 1), 33);
    /* m < p: no deadlock, and never slower than 1F1B */
    for (uint32_t pp = 2; pp <= 8; pp++)
        for (uint32_t m = 1; m < pp; m++) {
            long zb = simulate(SCHEDULE_ZB_H1, pp, m, 1, 1, 1);
            assert_true(zb > 0);
            assert_true(zb <= simulate(SCHEDULE_1F1B, pp, m, 1, 1, 1));
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
    assert_int_equal(simulate_lists(2, 1, bad, len, 1, 1, 1), -1);
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(figure_orders),
        cmocka_unit_test(invariants),
        cmocka_unit_test(bubble_is_the_papers),
        cmocka_unit_test(simulator_detects_deadlock),
        cmocka_unit_test(kinds_and_errors),
    };
    return cmocka_run_group_tests_name("schedule_zb", tests, NULL, NULL);
}
