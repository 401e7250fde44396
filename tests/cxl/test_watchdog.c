/* test_watchdog.c - the progress watchdog of cxl_backend_advance (host/cxl/backend.h, CXL_WATCHDOG_CYCLES):
 * a model that cannot make progress ends with CXL_ELIMIT instead of running forever, and legitimate
 * silence (an idle backend, a far not_before, long gaps between issues) does not trip it.
 *
 * The starving parameters bypass devcfg (whose timing relations refuse them at load, as `check` does):
 * all-bank refresh with tRFC = tREFI keeps the rank refreshing, so no access ever completes; `probe`
 * and `train` hung on such a device before issue 28. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cxl/backend.h"
#include "preset_fixture.h"

static cxl_desc read_desc(uint64_t id, uint64_t lines, uint64_t not_before, uint32_t gap)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.bytes = lines * CXL_LINE_BYTES;
    d.not_before = not_before;
    d.gap_cycles = gap;
    d.max_outstanding = 1;
    d.rd_weight = 1;
    return d;
}

/* Advance to `until` in steps, collecting completions; the return code of the first failing advance. */
static int run_to(cxl_backend *b, uint64_t until, uint64_t *done, cxl_err *e)
{
    while (cxl_backend_now(b) < until) {
        int rc = cxl_backend_advance(b, until, 0, e);
        if (rc)
            return rc;
        cxl_completion c[64];
        *done += cxl_backend_poll(b, c, 64);
    }
    return 0;
}

static void test_starved_model_stops(void **state)
{
    (void)state;
    cxl_params p;
    pfx_preset("asic", &p);
    p.dram.refresh = CXL_REF_ALL_BANK;
    p.dram.tREFI = 100;
    p.dram.tRFC = 100;
    cxl_backend *b = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_open("csim", &p, &b, &e), 0);
    cxl_desc d = read_desc(1, 4, 0, 0);
    assert_int_equal(cxl_backend_submit(b, &d, 1, &e), 0);
    uint64_t done = 0;
    assert_int_equal(run_to(b, 4 * CXL_WATCHDOG_CYCLES, &done, &e), CXL_ELIMIT);
    assert_int_equal(done, 0);
    assert_non_null(strstr(e.msg, "made no progress"));
    assert_true(cxl_backend_now(b) >= CXL_WATCHDOG_CYCLES && cxl_backend_now(b) < 2 * CXL_WATCHDOG_CYCLES);
    cxl_backend_close(b);
}

static void test_legitimate_silence(void **state)
{
    (void)state;
    cxl_params p;
    pfx_preset("asic", &p);
    cxl_backend *b = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_open("csim", &p, &b, &e), 0);
    uint64_t done = 0;
    /* idle for three watchdog periods, then one read held back by not_before for three more, then
     * two reads 1.5 periods apart (gap_cycles) */
    assert_int_equal(run_to(b, 3 * CXL_WATCHDOG_CYCLES, &done, &e), 0);
    cxl_desc d[2] = { read_desc(1, 1, 6 * CXL_WATCHDOG_CYCLES, 0),
                      read_desc(2, 2, 0, (uint32_t)(3 * CXL_WATCHDOG_CYCLES / 2)) };
    assert_int_equal(cxl_backend_submit(b, &d[0], 1, &e), 0);
    if (run_to(b, 6 * CXL_WATCHDOG_CYCLES + 100000, &done, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(done, 1);
    assert_int_equal(cxl_backend_submit(b, &d[1], 1, &e), 0);
    assert_int_equal(run_to(b, 9 * CXL_WATCHDOG_CYCLES, &done, &e), 0);
    assert_int_equal(done, 2);
    cxl_backend_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_starved_model_stops),
        cmocka_unit_test(test_legitimate_silence),
    };
    return cmocka_run_group_tests_name("watchdog", tests, NULL, NULL);
}
