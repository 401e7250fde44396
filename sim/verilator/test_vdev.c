/* test_vdev.c - the simulated card (vdev.h) below the verilator backend: the kernel's control register map
 * as the host sees it over AXI4-Lite, and what becomes of a run that goes wrong: an RTL assertion (the
 * kernel's AXI checks, fired by a memory told to break the protocol) is an error naming the model cycle
 * and the unit, never an abort, and the handle refuses further use; a buffer outside card memory is a
 * bus error; a kernel that does not finish in time is an error with the cycle it reached; the kernel
 * build follows the configuration's size, and parameters larger than the build are refused (model_error
 * 4). Built only with the verilator backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../hw/hls/cxl_kernel.h"
#include "../../hw/hls/cxl_kernel_regs.h"
#include "devcfg.h"
#include "vdev.h"

#define MEM (1024u * 1024u)

typedef struct card {
    vdev *d;
    uint64_t params, result, comps;
} card;

/* a card running the kernel build chosen by o (NULL: the full build) with the parameters of a device preset */
static void open_card_with(card *c, const vkernel_opts *o, const char *preset)
{
    char msg[512];
    int rc = vdev_open(o, MEM, &c->d, msg, sizeof msg);
    if (rc)
        fail_msg("vdev_open: %d %s", rc, msg);
    devcfg dev;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(preset, &dev, &e) || devcfg_to_params(&dev, &p, &e))
        fail_msg("%s: %s", preset, e.msg);
    c->params = vdev_alloc(c->d, sizeof p);
    c->result = vdev_alloc(c->d, sizeof(cxl_kernel_result));
    c->comps = vdev_alloc(c->d, 64 * sizeof(cxl_completion));
    assert_true(c->params && c->result && c->comps);
    memcpy(vdev_map(c->d, c->params, sizeof p), &p, sizeof p);
}

static void open_card(card *c) { open_card_with(c, NULL, "asic"); }

/* the arguments of an init call (cxl_kernel(params, -, init = 1, ...)) */
static void init_args(card *c, uint64_t params)
{
    assert_int_equal(vdev_reg_write64(c->d, CXLK_PARAMS, params), 0);
    assert_int_equal(vdev_reg_write(c->d, CXLK_INIT, 1), 0);
    assert_int_equal(vdev_reg_write(c->d, CXLK_N_DESCS, 0), 0);
    assert_int_equal(vdev_reg_write64(c->d, CXLK_UNTIL, 0), 0);
    assert_int_equal(vdev_reg_write64(c->d, CXLK_COMPS, c->comps), 0);
    assert_int_equal(vdev_reg_write(c->d, CXLK_MAX_COMPS, 0), 0);
    assert_int_equal(vdev_reg_write64(c->d, CXLK_RESULT, c->result), 0);
    assert_int_equal(vdev_reg_write(c->d, CXLK_WANT_STATS, 0), 0);
}

static void test_control_map(void **state)
{
    (void)state;
    card c;
    open_card(&c);
    uint32_t v;
    assert_int_equal(vdev_reg_read(c.d, CXLK_CTRL, &v), 0);
    assert_int_equal(v & (CXLK_CTRL_START | CXLK_CTRL_DONE | CXLK_CTRL_IDLE), CXLK_CTRL_IDLE);
    /* every argument reads back what was written; the word after each is reserved and reads 0 */
    const uint32_t regs[] = { CXLK_PARAMS, CXLK_STATE, CXLK_INIT, CXLK_DESCS, CXLK_N_DESCS, CXLK_UNTIL,
                              CXLK_STOP, CXLK_COMPS, CXLK_MAX_COMPS, CXLK_RESULT, CXLK_STATS, CXLK_WANT_STATS };
    const int wide[] = { 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0 };
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
        uint64_t val = 0x0123456789abcdefull ^ ((uint64_t)i * 0x1111111111111111ull);
        if (wide[i])
            assert_int_equal(vdev_reg_write64(c.d, regs[i], val), 0);
        else
            assert_int_equal(vdev_reg_write(c.d, regs[i], (uint32_t)val), 0);
        assert_int_equal(vdev_reg_read(c.d, regs[i], &v), 0);
        assert_int_equal(v, (uint32_t)val);
        if (wide[i]) {
            assert_int_equal(vdev_reg_read(c.d, regs[i] + 4, &v), 0);
            assert_int_equal(v, (uint32_t)(val >> 32));
        }
        assert_int_equal(vdev_reg_read(c.d, regs[i] + (wide[i] ? 8 : 4), &v), 0);
        assert_int_equal(v, 0);
    }
    /* a correct init call: ap_done, status 0 in ap_return and the result record, the kernel idle again */
    init_args(&c, c.params);
    assert_int_equal(vdev_run(c.d, 0), 0);
    assert_int_equal(vdev_reg_read(c.d, CXLK_RETURN, &v), 0);
    assert_int_equal(v, CXL_KST_OK);
    const cxl_kernel_result *r = vdev_map(c.d, c.result, sizeof *r);
    assert_int_equal(r->status, CXL_KST_OK);
    assert_int_equal(r->now, 0);
    assert_int_equal(r->idle, 1);
    assert_int_equal(vdev_reg_read(c.d, CXLK_CTRL, &v), 0);
    assert_int_equal(v & CXLK_CTRL_IDLE, CXLK_CTRL_IDLE);
    vdev_close(c.d);
}

static void test_rtl_assertion(void **state)
{
    (void)state;
    card c;
    open_card(&c);
    init_args(&c, c.params);
    vdev_inject(c.d, AXI_FAULT_RLAST); /* RLAST on the first beat of the parameter burst */
    assert_int_equal(vdev_run(c.d, 0), VK_ERTL);
    const char *m = vdev_error(c.d);
    printf("  reported: %s\n", m);
    assert_non_null(strstr(m, "RTL assertion failed at model cycle 0"));
    assert_non_null(strstr(m, "cxl_kernel"));
    assert_non_null(strstr(m, "RLAST"));
    /* the handle is spent: later calls fail the same way, nothing aborts */
    uint32_t v;
    assert_int_equal(vdev_reg_read(c.d, CXLK_CTRL, &v), VK_ERTL);
    vdev_close(c.d);
}

static void test_bus_error(void **state)
{
    (void)state;
    card c;
    open_card(&c);
    init_args(&c, 0x8); /* outside card memory: SLVERR */
    int rc = vdev_run(c.d, 0);
    assert_int_not_equal(rc, 0);
    printf("  reported: %s\n", vdev_error(c.d));
    assert_non_null(strstr(vdev_error(c.d), "outside its buffers"));
    uint32_t v;
    assert_int_equal(vdev_reg_read(c.d, CXLK_RETURN, &v), 0);
    assert_int_equal(v, CXL_KST_BUS_ERROR);
    vdev_close(c.d);
}

static void test_timeout(void **state)
{
    (void)state;
    card c;
    open_card(&c);
    init_args(&c, c.params);
    assert_int_equal(vdev_run(c.d, 0), 0);
    /* a long run with a short bound */
    assert_int_equal(vdev_reg_write(c.d, CXLK_INIT, 0), 0);
    assert_int_equal(vdev_reg_write64(c.d, CXLK_UNTIL, 1000000), 0);
    int rc = vdev_run(c.d, 500);
    assert_int_not_equal(rc, 0);
    printf("  reported: %s\n", vdev_error(c.d));
    assert_non_null(strstr(vdev_error(c.d), "did not finish within 500 clocks"));
    vdev_close(c.d);
}

static void test_builds(void **state)
{
    (void)state;
    /* the build follows the sizes given: one host port and device and up to two channels run on the small
     * build (asic: one DDR5 DIMM channel, two controller channels) */
    const vkernel_opts small = { .hosts = 1, .devices = 1, .channels = 2 };
    const vkernel_opts forced = { .hosts = 1, .devices = 1, .channels = 2, .full = 1 };
    const vkernel_opts two = { .hosts = 2, .devices = 2, .channels = 2 };
    const vkernel_opts twoch = { .hosts = 1, .devices = 1, .channels = 4 };
    const vkernel_opts unknown = { 0 };
    const struct {
        const vkernel_opts *o;
        const char *build;
    } cases[] = { { &small, "small" }, { &forced, "full" }, { &two, "full" }, { &twoch, "full" },
                  { &unknown, "full" }, { NULL, "full" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        card c;
        open_card_with(&c, cases[i].o, "asic");
        assert_string_equal(vdev_build(c.d), cases[i].build);
        init_args(&c, c.params);
        assert_int_equal(vdev_run(c.d, 0), 0);
        const cxl_kernel_result *r = vdev_map(c.d, c.result, sizeof *r);
        if (r->status != CXL_KST_OK)
            fail_msg("case %zu (%s): status %u model_error %u", i, cases[i].build, r->status, r->model_error);
        vdev_close(c.d);
    }
    /* more host ports and devices (pool-2x2), or channels (cz120: four), than the small build has: every
     * call ends with status 2, model_error 4 */
    const char *big[] = { "pool-2x2", "cz120" };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        card c;
        open_card_with(&c, &small, big[i]);
        init_args(&c, c.params);
        assert_int_equal(vdev_run(c.d, 0), 0);
        const cxl_kernel_result *r = vdev_map(c.d, c.result, sizeof *r);
        assert_int_equal(r->status, CXL_KST_MODEL_ERROR);
        assert_int_equal(r->model_error, 4);
        vdev_close(c.d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_map),
        cmocka_unit_test(test_rtl_assertion),
        cmocka_unit_test(test_bus_error),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_builds),
    };
    return cmocka_run_group_tests_name("vdev", tests, NULL, NULL);
}
