/* schedule_sim.h - the whole-pipeline simulation the schedule tests share (test_schedule.c,
 * test_schedule_zb.c): every rank runs its list of passes strictly in order, each pass as soon as its rank
 * is free and its input is there, with no communication cost. Include after cmocka.h. */
#ifndef CXLSIM_TESTS_SCHEDULE_SIM_H
#define CXLSIM_TESTS_SCHEDULE_SIM_H

#include <stdint.h>
#include <stdlib.h>

#include "train/schedule.h"

/* Every rank runs its list strictly in order; with s the virtual stage of the item's chunk
 * (schedule_stage_of), F (mb, s) needs F (mb, s-1), B (mb, s) needs B (mb, s+1) or on the last stage its own
 * F, W (mb, s) its own B; a split-free backward (SCHEDULE_BW) takes tb + tw. Returns the makespan, -1 on
 * deadlock; a rank that completes was busy exactly m v (tf + tb + tw). */
static long schedule_sim_run(int kind, uint32_t pp, uint32_t m, uint32_t v, schedule_item *const *list,
                             const size_t *len, long tf, long tb, long tw)
{
    uint32_t S = pp * v;
    size_t *next = calloc(pp, sizeof *next);
    long *clock = calloc(pp, sizeof *clock), *busy = calloc(pp, sizeof *busy);
    long *done_f = malloc(sizeof(long) * S * m), *done_b = malloc(sizeof(long) * S * m);
    assert_true(next && clock && busy && done_f && done_b);
    for (size_t i = 0; i < (size_t)S * m; i++)
        done_f[i] = done_b[i] = -1;
    for (int progress = 1; progress;) {
        progress = 0;
        for (uint32_t r = 0; r < pp; r++)
            while (next[r] < len[r]) {
                const schedule_item *it = &list[r][next[r]];
                uint32_t st = schedule_stage_of(kind, pp, r, it->chunk);
                size_t at = (size_t)st * m + it->microbatch;
                long dep, d;
                if (!it->backward) {
                    dep = st == 0 ? 0 : done_f[at - m];
                    d = tf;
                } else if (it->part == SCHEDULE_W) {
                    dep = done_b[at];
                    d = tw;
                } else {
                    dep = st == S - 1 ? done_f[at] : done_b[at + m];
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
        assert_int_equal(busy[r], (long)m * v * (tf + tb + tw));
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

#endif
