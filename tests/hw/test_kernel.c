/* test_kernel.c - the kernel's phases (hw/hls/cxl_kernel.h): the run phase, the cycle loop, reads and
 * writes no m_axi argument; load reads only params and descs; store writes only comps, stats and
 * result; `state` is never touched. And the kernel's answers are those of the model driven directly.
 *
 * How: every m_axi buffer lives in pages of its own (mmap), and the kernel's test-only phase hook
 * (cxl_kernel_set_phase_hook) sets their protections on entering each phase: PROT_NONE for every buffer
 * the phase must not touch. A touch is a SIGSEGV, which the handler turns (siglongjmp) into a failure
 * that names the phase and the buffer. The mechanism checks itself: a hook that touches descs during the
 * run phase must be caught (test_detector_catches_a_touch).
 *
 * Parameters: the shipped presets asic (direct), asic-switch and pool-2x2 (switch), and the local-DDR
 * path of tests/hw_fixture.h, so that every branch of the cycle loop runs with the buffers revoked. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, and POSIX: sigaction, sigsetjmp, mprotect */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../hw/hls/cxl_kernel.h"
#include "config/devcfg.h"
#include "hw_fixture.h"
#include "preset_fixture.h"

enum { B_PARAMS, B_STATE, B_DESCS, B_COMPS, B_RESULT, B_STATS, NBUF };
static const char *const buf_name[NBUF] = { "params", "state", "descs", "comps", "result", "stats" };
static const char *const phase_name[] = { "load", "run", "store", "done" };

#define NDESCS (CXL_MAX_REQ * CXL_DESCQ)
#define NCOMPS 64u /* completion room per call: small, so that some calls leave completions buffered */

/* The kernel's buffers, each in pages of its own. */
typedef struct bufs {
    void *p[NBUF];
    size_t len[NBUF];
    int touch_in_run; /* the detector's self-test: the hook reads descs in the run phase */
} bufs;

/* What the SIGSEGV handler needs: a signal handler has no context argument, so this one is file-scope
 * (test code only; the kernel has none). */
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t cur_phase = -1;
static void *volatile fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    fault_addr = si->si_addr;
    siglongjmp(fault_jmp, 1);
}

static void *pages(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static void bufs_new(bufs *b)
{
    static const size_t size[NBUF] = { sizeof(cxl_params), sizeof(cxl_model), NDESCS * sizeof(cxl_desc),
                                       NCOMPS * sizeof(cxl_completion), sizeof(cxl_kernel_result),
                                       sizeof(cxl_stats) };
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    memset(b, 0, sizeof *b);
    for (int i = 0; i < NBUF; i++) {
        b->len[i] = (size[i] + pg - 1) / pg * pg;
        b->p[i] = pages(b->len[i]);
    }
}

static void bufs_free(bufs *b)
{
    for (int i = 0; i < NBUF; i++)
        munmap(b->p[i], b->len[i]);
}

static void protect(bufs *b, int i, int prot)
{
    if (mprotect(b->p[i], b->len[i], prot))
        fail_msg("mprotect(%s): failed", buf_name[i]);
}

/* Which buffers each phase may touch, and how. */
static int allowed(enum cxl_kernel_phase ph, int i)
{
    switch (ph) {
    case CXL_KPH_LOAD: return i == B_PARAMS || i == B_DESCS ? PROT_READ : PROT_NONE;
    case CXL_KPH_RUN: return PROT_NONE;
    case CXL_KPH_STORE: return i == B_COMPS || i == B_RESULT || i == B_STATS ? PROT_READ | PROT_WRITE : PROT_NONE;
    default: return i == B_STATE ? PROT_NONE : PROT_READ | PROT_WRITE;
    }
}

static void hook(void *ctx, enum cxl_kernel_phase ph)
{
    bufs *b = ctx;
    for (int i = 0; i < NBUF; i++)
        protect(b, i, allowed(ph, i));
    cur_phase = (sig_atomic_t)ph;
    if (ph == CXL_KPH_RUN && b->touch_in_run) /* stands for a cycle loop that reads a descriptor */
        (void)*(volatile uint64_t *)b->p[B_DESCS];
}

/* One kernel call with the buffers guarded; fails naming the phase and buffer of any touch. */
static uint32_t guarded_call(cxl_kernel_mem *mem, bufs *b, uint32_t init, uint32_t n_descs, uint64_t until,
                             uint32_t stop, uint32_t max_comps, uint32_t want_stats)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
    cur_phase = -1;
    uint32_t st = 0;
    int faulted = 0;
    cxl_kernel_set_phase_hook(mem, hook, b);
    if (sigsetjmp(fault_jmp, 1) == 0)
        st = cxl_kernel_onchip(mem, b->p[B_PARAMS], init, b->p[B_DESCS], n_descs, until, stop, b->p[B_COMPS],
                               max_comps, b->p[B_RESULT], b->p[B_STATS], want_stats);
    else
        faulted = 1;
    cxl_kernel_set_phase_hook(mem, NULL, NULL);
    sigaction(SIGSEGV, &old, NULL);
    for (int i = 0; i < NBUF; i++)
        protect(b, i, PROT_READ | PROT_WRITE);
    if (faulted) {
        const char *which = "no kernel buffer";
        for (int i = 0; i < NBUF; i++)
            if ((char *)fault_addr >= (char *)b->p[i] && (char *)fault_addr < (char *)b->p[i] + b->len[i])
                which = buf_name[i];
        fail_msg("kernel %s phase touched m_axi buffer '%s' (address %p), which that phase may not access",
                 cur_phase >= 0 && cur_phase <= CXL_KPH_DONE ? phase_name[cur_phase] : "?", which,
                 (void *)fault_addr);
    }
    assert_int_equal(cur_phase, CXL_KPH_DONE);
    return st;
}

static cxl_desc desc(uint64_t id, uint16_t req, uint64_t base, uint64_t lines, uint8_t pattern, int mix)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.requester = req;
    d.base = base;
    d.bytes = lines * CXL_LINE_BYTES;
    d.footprint = 1ull << 24;
    d.pattern = pattern;
    d.stride = 4096;
    d.seed = (uint32_t)id * 7u + 1u;
    d.max_outstanding = 32;
    d.rd_weight = mix == 1 ? 0 : 2;
    d.wr_weight = mix == 0 ? 0 : 1;
    d.not_before = id * 50;
    return d;
}

/* A busy run of p through the guarded kernel, checked call for call against the model driven directly:
 * several requesters, reads, writes, mixes and every pattern; some calls stop at a completion, some have
 * less completion room than completions; a statistics call at the end. */
static void busy_run(const cxl_params *p)
{
    bufs b;
    bufs_new(&b);
    cxl_kernel_mem *mem = calloc(1, sizeof *mem);
    cxl_model *ref = calloc(1, sizeof *ref);
    cxl_completion *rc = calloc(NCOMPS, sizeof *rc);
    assert_non_null(mem);
    assert_non_null(ref);
    assert_non_null(rc);

    memcpy(b.p[B_PARAMS], p, sizeof *p);
    assert_int_equal(guarded_call(mem, &b, 1, 0, 0, 0, 0, 0), CXL_KST_OK);
    cxl_model_init(ref, p);

    uint64_t until = 0, id = 1, done = 0;
    for (int call = 0; call < 60; call++) {
        uint32_t n = 0;
        if (call % 3 == 0) {
            cxl_desc *d = b.p[B_DESCS];
            for (uint32_t r = 0; r < p->requesters && n < 4; r++, id++) {
                d[n] = desc(id, (uint16_t)r, (id * 0x13000u) % (1u << 24) & ~63ull, 8 + id % 24,
                            (uint8_t)(id % 3), (int)(id % 3));
                assert_int_equal(cxl_model_submit(ref, &d[n]), 0);
                n++;
            }
        }
        uint32_t stop = call % 4 == 1;
        uint32_t room = call % 5 == 2 ? 1 : NCOMPS;
        until += 400;
        uint32_t st = guarded_call(mem, &b, 0, n, until, stop, room, 0);
        assert_int_equal(st, CXL_KST_OK);
        cxl_model_run(ref, until, (int)stop);
        uint32_t rn = cxl_model_drain(ref, rc, room);
        const cxl_kernel_result *res = b.p[B_RESULT];
        assert_int_equal(res->status, CXL_KST_OK);
        assert_int_equal(res->n_comps, rn);
        assert_memory_equal(b.p[B_COMPS], rc, rn * sizeof *rc);
        assert_int_equal(res->now, ref->now);
        assert_int_equal(res->idle, (uint32_t)cxl_model_idle(ref));
        for (uint32_t r = 0; r < CXL_MAX_REQ; r++)
            assert_int_equal(res->space[r], requester_space(&ref->req[r]));
        done += rn;
    }
    assert_true(done > 0);
    assert_int_equal(guarded_call(mem, &b, 0, 0, 0, 0, 0, 1), CXL_KST_OK);
    assert_memory_equal(b.p[B_STATS], &ref->st, sizeof ref->st);

    free(rc);
    free(ref);
    free(mem);
    bufs_free(&b);
}

/* a busy run on the preset named by the test's initial state (direct, switch, pool topologies) */
static void test_preset(void **state)
{
    cxl_params p;
    pfx_preset((const char *)*state, &p);
    busy_run(&p);
}

static void test_local(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    p.requesters = 3;
    busy_run(&p);
}

/* Two instances in one process are independent (the csim backend's case: probe's device and its
 * local-DDR reference): stepping one leaves the other where it was. */
static void test_two_instances(void **state)
{
    (void)state;
    cxl_params p, q;
    pfx_preset("asic", &p);
    hwfx_local(&q);
    cxl_kernel_mem *a = calloc(1, sizeof *a), *c = calloc(1, sizeof *c);
    assert_non_null(a);
    assert_non_null(c);
    cxl_kernel_result ra, rc;
    cxl_completion comp[4];
    cxl_kernel_onchip(a, &p, 1, NULL, 0, 0, 0, comp, 0, &ra, NULL, 0);
    cxl_kernel_onchip(c, &q, 1, NULL, 0, 0, 0, comp, 0, &rc, NULL, 0);
    cxl_desc d = desc(1, 0, 0, 4, CXL_PAT_SEQ, 0);
    d.not_before = 0;
    assert_int_equal(cxl_kernel_onchip(a, NULL, 0, &d, 1, 100000, 1, comp, 4, &ra, NULL, 0), CXL_KST_OK);
    assert_int_equal(ra.n_comps, 1);
    assert_int_equal(cxl_kernel_onchip(c, NULL, 0, NULL, 0, 0, 0, comp, 4, &rc, NULL, 0), CXL_KST_OK);
    assert_int_equal(rc.now, 0);
    assert_int_equal(rc.idle, 1);
    assert_int_equal(rc.space[0], CXL_DESCQ);
    free(a);
    free(c);
}

/* The detector itself: a touch of descs during the run phase must be caught, in the run phase, at the
 * address of descs (the same handler and hook as guarded_call, without its failure report). */
static void test_detector_catches_a_touch(void **state)
{
    (void)state;
    cxl_params p;
    pfx_preset("asic", &p);
    bufs b;
    bufs_new(&b);
    cxl_kernel_mem *mem = calloc(1, sizeof *mem);
    assert_non_null(mem);
    memcpy(b.p[B_PARAMS], &p, sizeof p);
    guarded_call(mem, &b, 1, 0, 0, 0, 0, 0);

    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
    b.touch_in_run = 1;
    cxl_kernel_set_phase_hook(mem, hook, &b);
    int caught = 0;
    if (sigsetjmp(fault_jmp, 1) == 0)
        cxl_kernel_onchip(mem, b.p[B_PARAMS], 0, b.p[B_DESCS], 0, 1000, 0, b.p[B_COMPS], NCOMPS, b.p[B_RESULT],
                          b.p[B_STATS], 0);
    else
        caught = 1;
    sigaction(SIGSEGV, &old, NULL);
    for (int i = 0; i < NBUF; i++)
        protect(&b, i, PROT_READ | PROT_WRITE);
    assert_true(caught);
    assert_int_equal(cur_phase, CXL_KPH_RUN);
    assert_ptr_equal(fault_addr, b.p[B_DESCS]);
    free(mem);
    bufs_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        {"test_direct (asic)", test_preset, NULL, NULL, "asic"},
        {"test_switch (asic-switch)", test_preset, NULL, NULL, "asic-switch"},
        {"test_pool (pool-2x2)", test_preset, NULL, NULL, "pool-2x2"},
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_two_instances),  cmocka_unit_test(test_detector_catches_a_touch),
    };
    return cmocka_run_group_tests_name("kernel", tests, NULL, NULL);
}
