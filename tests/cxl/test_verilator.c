/* test_verilator.c - the verilator backend (hw/rtl/cxl_kernel.v through sim/verilator) against csim:
 * the same calls on both give the same completions in the same order, the same cycle, free descriptor
 * slots and idleness after every call, and byte-identical statistics. Scenarios cover the three
 * topologies (direct, switch/pool, local-DDR path), every pattern, mixes, gaps, not_before, stop and
 * non-stop advances, refills as slots free up, and advances that end with completions left in the
 * backend (the 1024-entry buffer's wrap). Each configuration runs on the smallest kernel build compiled
 * in that fits it (hw/rtl/builds.txt: asic, cz120, local-ddr5 on card-1x1; asic-switch, pool-2x2 on
 * card-pool); one scenario runs asic on card-pool as well, and one checks that a configuration larger
 * than every compiled build is refused. Skipped (reported as such) where the backend is not built.
 * Cost: tens of thousands of model cycles per scenario, seconds on the verilated RTL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cxl/backend.h"
#include "config/devcfg.h"

typedef struct pair {
    cxl_backend *c, *v;  /* csim, verilator */
    cxl_params p;
} pair;

static void load_preset(const char *name, cxl_params *p)
{
    devcfg c;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(name, &c, &e) || devcfg_to_params(&c, p, &e))
        fail_msg("%s: %s", name, e.msg);
}

/* build: the kernel build the verilator backend runs even if a smaller one fits (NULL: the smallest
 * that fits, hw/rtl/builds.txt) */
static void open_pair(pair *x, const char *preset, const char *build)
{
    cxl_err e;
    cxl_err_clear(&e);
    load_preset(preset, &x->p);
    if (cxl_backend_open("csim", &x->p, &x->c, &e))
        fail_msg("csim: %s", e.msg);
    const cxl_backend_opts o = { .rtl_build = build };
    if (cxl_backend_open_opts("verilator", &x->p, &o, &x->v, &e))
        fail_msg("verilator: %s", e.msg);
}

static void close_pair(pair *x)
{
    cxl_backend_close(x->c);
    cxl_backend_close(x->v);
}

/* what the host can see without a poll */
static void same_view(pair *x, const char *when)
{
    if (cxl_backend_now(x->c) != cxl_backend_now(x->v))
        fail_msg("%s: now csim %llu verilator %llu", when, (unsigned long long)cxl_backend_now(x->c),
                 (unsigned long long)cxl_backend_now(x->v));
    for (uint32_t r = 0; r < CXL_MAX_REQ; r++)
        if (cxl_backend_space(x->c, r) != cxl_backend_space(x->v, r))
            fail_msg("%s: requester %u space csim %u verilator %u", when, r, cxl_backend_space(x->c, r),
                     cxl_backend_space(x->v, r));
    if (cxl_backend_idle(x->c) != cxl_backend_idle(x->v))
        fail_msg("%s: idle csim %d verilator %d at cycle %llu", when, cxl_backend_idle(x->c), cxl_backend_idle(x->v),
                 (unsigned long long)cxl_backend_now(x->c));
}

static void same_stats(pair *x, const char *when)
{
    cxl_stats *a = test_malloc(sizeof *a), *b = test_malloc(sizeof *b);
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_stats(x->c, a, &e), 0);
    if (cxl_backend_stats(x->v, b, &e))
        fail_msg("%s: verilator stats: %s", when, e.msg);
    if (memcmp(a, b, sizeof *a)) {
        const uint64_t *wa = (const uint64_t *)a, *wb = (const uint64_t *)b;
        for (size_t i = 0; i < sizeof *a / 8; i++)
            if (wa[i] != wb[i])
                fail_msg("%s: stats word %zu (cxl_layout.vh CXL_S_*) csim %llu verilator %llu", when, i,
                         (unsigned long long)wa[i], (unsigned long long)wb[i]);
    }
    test_free(a);
    test_free(b);
}

static void advance_both(pair *x, uint64_t until, int stop, const char *when)
{
    cxl_err e;
    cxl_err_clear(&e);
    int rc = cxl_backend_advance(x->c, until, stop, &e);
    if (rc)
        fail_msg("%s: csim advance: %s", when, e.msg);
    rc = cxl_backend_advance(x->v, until, stop, &e);
    if (rc)
        fail_msg("%s: verilator advance: %s", when, e.msg);
    same_view(x, when);
}

/* poll up to max from both; they must agree entry by entry */
static size_t poll_both(pair *x, size_t max, const char *when)
{
    cxl_completion a[64], b[64];
    if (max > 64)
        max = 64;
    size_t na = cxl_backend_poll(x->c, a, max), nb = cxl_backend_poll(x->v, b, max);
    if (na != nb)
        fail_msg("%s: polled csim %zu verilator %zu", when, na, nb);
    for (size_t i = 0; i < na; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]))
            fail_msg("%s: completion %zu: csim id %llu [%llu, %llu] req %u lines %u, verilator id %llu [%llu, %llu] "
                     "req %u lines %u",
                     when, i, (unsigned long long)a[i].id, (unsigned long long)a[i].start_cycle,
                     (unsigned long long)a[i].end_cycle, a[i].requester, a[i].lines, (unsigned long long)b[i].id,
                     (unsigned long long)b[i].start_cycle, (unsigned long long)b[i].end_cycle, b[i].requester,
                     b[i].lines);
    return na;
}

static void submit_both(pair *x, const cxl_desc *d, size_t n)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (cxl_backend_submit(x->c, d, n, &e))
        fail_msg("csim submit: %s", e.msg);
    if (cxl_backend_submit(x->v, d, n, &e))
        fail_msg("verilator submit: %s", e.msg);
}

/* descriptor k of requester r: every pattern, mixes, gaps and start times vary with (r, k) */
static cxl_desc mk(const cxl_params *p, uint16_t r, uint32_t k, uint64_t now)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = 1000u * r + k;
    d.requester = r;
    d.base = ((uint64_t)r << 26) + ((uint64_t)(k % 7) << 14);
    d.bytes = (uint64_t)(1 + (r * 5 + k * 3) % 23) * CXL_LINE_BYTES;
    d.pattern = (uint8_t)((r + k) % 3);
    d.footprint = (uint64_t)64 << 10;
    d.stride = CXL_LINE_BYTES * (1 + (k % 5));
    d.seed = 7u * r + k;
    d.gap_cycles = (k % 4 == 3) ? 20u + r : 0;
    d.not_before = (k % 5 == 4) ? now + 300 : 0;
    d.max_outstanding = (uint16_t)(1 + (r * 11 + k * 13) % (p->tags < 48 ? p->tags : 48));
    d.rd_weight = (uint8_t)((k % 3) ? 1 + k % 2 : 1);
    d.wr_weight = (uint8_t)(k % 3 == 2 ? 1 : k % 4 == 1 ? 2 : 0);
    return d;
}

/* Under the sanitizers the verilated model runs several times slower: fewer rounds, same coverage of
 * call sequences. */
#ifdef CXLSIM_SANITIZED
#define ROUNDS(n) ((n) / 3 + 2)
#else
#define ROUNDS(n) (n)
#endif

/* Keep every requester's queue topped up for `rounds` advances of `step` cycles, polling `poll` per
 * round (less than arrives, so completions pile up in the backend and its buffer wraps). */
static void workload_on(const char *preset, const char *build, uint32_t nreq, uint32_t rounds, uint64_t step, size_t poll,
                        int stop)
{
    if (!cxl_backend_available("verilator"))
        skip();
    pair x;
    open_pair(&x, preset, build);
    same_view(&x, "after open");
    if (nreq > x.p.requesters)
        nreq = x.p.requesters;
    uint32_t next[CXL_MAX_REQ] = { 0 };
    char when[96];
    for (uint32_t i = 0; i < rounds; i++) {
        snprintf(when, sizeof when, "%s round %u", preset, i);
        cxl_desc d[CXL_MAX_REQ * CXL_DESCQ];
        size_t n = 0;
        for (uint16_t r = 0; r < nreq; r++) {
            uint32_t room = cxl_backend_space(x.c, r);
            /* leave some rounds short so the queues also run dry */
            if (i % 7 == 5)
                room = room > 1 ? 1 : room;
            for (uint32_t k = 0; k < room; k++)
                d[n++] = mk(&x.p, r, next[r]++, cxl_backend_now(x.c));
        }
        if (n)
            submit_both(&x, d, n);
        same_view(&x, when);
        advance_both(&x, cxl_backend_now(x.c) + step, stop && (i % 3 == 0), when);
        poll_both(&x, poll, when);
        if (i % 8 == 7)
            same_stats(&x, when);
    }
    /* drain: run until both are idle */
    for (uint32_t guard = 0; !cxl_backend_idle(x.c) && guard < 1000; guard++) {
        snprintf(when, sizeof when, "%s drain %u", preset, guard);
        advance_both(&x, cxl_backend_now(x.c) + 4 * step, 0, when);
        while (poll_both(&x, 64, when))
            ;
    }
    assert_true(cxl_backend_idle(x.c));
    same_stats(&x, "end");
    close_pair(&x);
}

static void workload(const char *preset, uint32_t nreq, uint32_t rounds, uint64_t step, size_t poll, int stop)
{
    workload_on(preset, NULL, nreq, rounds, step, poll, stop);
}

static void test_direct(void **state)
{
    (void)state;
    workload("asic", 4, ROUNDS(40), 700, 8, 1);
}

/* the same on card-pool, which has a switch, two host ports and two devices (test_direct ran card-1x1):
 * the units a configuration leaves unused change nothing */
static void test_direct_pool_build(void **state)
{
    (void)state;
    workload_on("asic", "card-pool", 4, ROUNDS(40), 700, 8, 1);
}

/* a configuration that needs more than every build compiled in (pool-4x4: four host ports and devices;
 * the default builds card-1x1 and card-pool have at most two) is refused at open with the sizes' error
 * (exit 7 from the command line, tests/cli/verilator.sh); with the optional build `full` it runs */
static void test_too_big(void **state)
{
    (void)state;
    if (!cxl_backend_available("verilator"))
        skip();
    cxl_params p;
    load_preset("pool-4x4", &p);
    cxl_backend *v = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    int rc = cxl_backend_open("verilator", &p, &v, &e);
    if (rc == 0) {
        printf("  pool-4x4 runs (the build full is compiled in)\n");
        cxl_backend_close(v);
        return;
    }
    printf("  reported: %s\n", e.msg);
    assert_int_equal(rc, CXL_ELIMIT);
    assert_int_equal(e.code, CXL_ELIMIT);
    assert_non_null(strstr(e.msg, "have fewer host ports, devices, DRAM channels, banks or DRAM queue entries than the configuration"));
    assert_non_null(strstr(e.msg, "card-1x1"));
}

/* four DRAM channels (two DDR5 DIMM channels): card-1x1 */
static void test_two_channels(void **state)
{
    (void)state;
    workload("cz120", 4, ROUNDS(20), 700, 8, 1);
}

static void test_switch(void **state)
{
    (void)state;
    workload("asic-switch", 4, ROUNDS(20), 700, 8, 1);
}

static void test_pool(void **state)
{
    (void)state;
    workload("pool-2x2", 8, ROUNDS(30), 900, 12, 1);
}

static void test_local(void **state)
{
    (void)state;
    workload("local-ddr5", 4, ROUNDS(30), 500, 6, 0);
}

/* many completions in one advance: the backend buffer fills and wraps, advance returns early */
static void test_full_buffer(void **state)
{
    (void)state;
    workload("asic", 16, 6, 20000, 3, 0);
}

int main(void)
{
    if (!cxl_backend_available("verilator")) {
        printf("SKIPPED: the verilator backend is not in this build (%s)\n", cxl_backend_status("verilator"));
        return 77; /* ctest: SKIP_RETURN_CODE */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct),
        cmocka_unit_test(test_direct_pool_build),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_two_channels),
        cmocka_unit_test(test_switch),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_full_buffer),
    };
    return cmocka_run_group_tests_name("verilator", tests, NULL, NULL);
}
