/* test_vdev.c - the simulated card (vdev.h) below the verilator backend: the kernel's control register map
 * as the host sees it over AXI4-Lite, and what becomes of a run that goes wrong: an RTL assertion (the
 * kernel's AXI checks, fired by a memory told to break the protocol) is an error naming the model cycle
 * and the unit, never an abort, and the handle refuses further use; a buffer outside card memory is a
 * bus error; a kernel that does not finish in time is an error with the cycle it reached; the kernel
 * build follows the configuration's size (every shipped preset on the build hw/rtl/builds.txt names),
 * sizes no compiled build has are refused before any run, and parameters larger than a build named
 * explicitly end every run with model_error 4. Built only with the verilator backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../hw/hls/cxl_kernel.h"
#include "../../hw/hls/cxl_kernel_regs.h"
#include "config/devcfg.h"
#include "config/presets.h"
#include "vdev.h"

#define MEM (1024u * 1024u)

typedef struct card {
    vdev *d;
    uint64_t params, result, comps;
} card;

/* a card running the kernel build chosen by o (NULL: the largest compiled in) with the parameters of a
 * device preset */
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
    /* a run with a bound shorter than any run: loading the parameters alone takes dozens of clocks (an
     * idle model crosses 10^6 cycles in a few hundred clocks, skipping them: cxl_model.v) */
    assert_int_equal(vdev_reg_write(c.d, CXLK_INIT, 0), 0);
    assert_int_equal(vdev_reg_write64(c.d, CXLK_UNTIL, 1000000), 0);
    int rc = vdev_run(c.d, 10);
    assert_int_not_equal(rc, 0);
    printf("  reported: %s\n", vdev_error(c.d));
    assert_non_null(strstr(vdev_error(c.d), "did not finish within 10 clocks"));
    vdev_close(c.d);
}

/* the sizes of a device preset, as the verilator backend gives them (backend_verilator.c) */
static vkernel_opts opts_of(const char *preset)
{
    devcfg dev;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(preset, &dev, &e) || devcfg_to_params(&dev, &p, &e))
        fail_msg("%s: %s", preset, e.msg);
    const vkernel_opts o = { .hosts = p.hosts, .devices = p.devices, .channels = p.dram.channels,
                             .banks = vkernel_banks(p.dram.ranks, p.dram.bankgroups, p.dram.banks),
                             .queue = p.dram.read_queue > p.dram.write_queue ? p.dram.read_queue : p.dram.write_queue,
                             .sw = p.sw.present != 0 };
    return o;
}

/* 1 when the build `name` is compiled in (vkernel_builds: "card-1x1, card-pool") */
static int compiled(const char *name)
{
    size_t n = strlen(name);
    for (const char *s = vkernel_builds(); (s = strstr(s, name)) != NULL; s += n)
        if ((s == vkernel_builds() || s[-1] == ' ') && (s[n] == ',' || s[n] == '\0'))
            return 1;
    return 0;
}

/* open a card for preset with o, with the preset's DRAM ranks and read queue entries replaced where
 * ranks is not 0, run the init call; return its status (model_error in *merr) */
static uint32_t init_status_edit(const vkernel_opts *o, const char *preset, const char *want_build, uint32_t ranks,
                                 uint32_t rq, uint32_t *merr)
{
    card c;
    open_card_with(&c, o, preset);
    if (want_build && strcmp(vdev_build(c.d), want_build))
        fail_msg("%s: runs on build %s, want %s", preset, vdev_build(c.d), want_build);
    if (ranks) {
        cxl_params *p = vdev_map(c.d, c.params, sizeof *p);
        p->dram.ranks = ranks;
        p->dram.read_queue = rq;
    }
    init_args(&c, c.params);
    assert_int_equal(vdev_run(c.d, 0), 0);
    const cxl_kernel_result *r = vdev_map(c.d, c.result, sizeof *r);
    uint32_t st = r->status;
    *merr = r->model_error;
    vdev_close(c.d);
    return st;
}

static uint32_t init_status(const vkernel_opts *o, const char *preset, const char *want_build, uint32_t *merr)
{
    return init_status_edit(o, preset, want_build, 0, 0, merr);
}

/* Every shipped device preset runs on the build hw/rtl/builds.txt names for it, where that build is
 * compiled in; every preset is named by exactly one build. */
static void test_preset_builds(void **state)
{
    (void)state;
    FILE *f = fopen(CXLSIM_SOURCE_DIR "/hw/rtl/builds.txt", "r");
    assert_non_null(f);
    char line[512], listed[2048] = " ";
    unsigned checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char name[64];
        int used = 0;
        unsigned nh, nd, nch, nb, nq, sw;
        assert_int_equal(sscanf(line, "%63s %u %u %u %u %u %u %n", name, &nh, &nd, &nch, &nb, &nq, &sw, &used), 7);
        for (char *tok = strtok(line + used, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
            char key[80];
            snprintf(key, sizeof key, " %s ", tok);
            if (strstr(listed, key))
                fail_msg("builds.txt: preset %s is listed twice", tok);
            strncat(listed, key + 1, sizeof listed - strlen(listed) - 1);
            const vkernel_opts o = opts_of(tok);
            /* the preset fits its build */
            if (o.hosts > nh || o.devices > nd || o.channels > nch || o.banks > nb || o.queue > nq || (o.sw && !sw))
                fail_msg("builds.txt: preset %s (%u hosts, %u devices, %u channels, %u banks, %u queue entries, "
                         "switch %d) does not fit %s", tok, o.hosts, o.devices, o.channels, o.banks, o.queue, o.sw, name);
            if (!compiled(name))
                continue;
            uint32_t merr;
            if (init_status(&o, tok, name, &merr) != CXL_KST_OK)
                fail_msg("%s on %s: status not OK, model_error %u", tok, name, merr);
            printf("  %-12s runs on %s\n", tok, name);
            checked++;
        }
    }
    fclose(f);
    for (const char *const *n = presets_device_names(); *n; n++) {
        char key[80];
        snprintf(key, sizeof key, " %s ", *n);
        if (!strstr(listed, key))
            fail_msg("device preset %s is not in hw/rtl/builds.txt", *n);
    }
    assert_true(checked > 0);
}

static void test_builds(void **state)
{
    (void)state;
    uint32_t merr;
    /* a named build runs whatever the sizes: asic on card-pool, as on card-1x1 */
    const vkernel_opts on_pool = { .hosts = 1, .devices = 1, .channels = 2, .build = "card-pool" };
    if (compiled("card-pool"))
        assert_int_equal(init_status(&on_pool, "asic", "card-pool", &merr), CXL_KST_OK);
    /* no sizes known: the largest compiled in (the last of vkernel_builds) */
    const char *last = strrchr(vkernel_builds(), ' ');
    last = last ? last + 1 : vkernel_builds();
    assert_int_equal(init_status(NULL, "asic", last, &merr), CXL_KST_OK);
    /* a named build smaller than the parameters (pool-2x2: two hosts and devices; cz120: four channels;
     * asic-switch: a switch, which card-1x1 leaves out): every call ends with status 2, model_error 4 */
    if (compiled("card-1x1")) {
        const vkernel_opts on_1x1 = { .build = "card-1x1" };
        const char *big[] = { "pool-2x2", "asic-switch" };
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            assert_int_equal(init_status(&on_1x1, big[i], "card-1x1", &merr), CXL_KST_MODEL_ERROR);
            assert_int_equal(merr, 4);
        }
    }
    if (compiled("card-pool")) {
        assert_int_equal(init_status(&on_pool, "cz120", "card-pool", &merr), CXL_KST_MODEL_ERROR);
        assert_int_equal(merr, 4);
        /* more banks per channel (two ranks: 64) or DRAM queue entries than the build has (32 each) */
        assert_int_equal(init_status_edit(&on_pool, "asic", "card-pool", 2, 32, &merr), CXL_KST_MODEL_ERROR);
        assert_int_equal(merr, 4);
        assert_int_equal(init_status_edit(&on_pool, "asic", "card-pool", 1, 64, &merr), CXL_KST_MODEL_ERROR);
        assert_int_equal(merr, 4);
        assert_int_equal(init_status_edit(&on_pool, "asic", "card-pool", 1, 32, &merr), CXL_KST_OK);
    }
    /* ... and a configuration with them runs on a build that has them, or is refused before any run */
    {
        vkernel_opts o = opts_of("asic");
        o.banks = 64;
        o.queue = 64;
        char m[512];
        vdev *dd = NULL;
        int rc = vdev_open(&o, MEM, &dd, m, sizeof m);
        if (compiled("full")) {
            assert_int_equal(rc, 0);
            assert_string_equal(vdev_build(dd), "full");
            vdev_close(dd);
        } else {
            assert_int_equal(rc, VK_ENOFIT);
            printf("  reported: %s\n", m);
            assert_non_null(strstr(m, "DRAM channels of 64 banks and 64-entry queues"));
        }
    }
    /* a build that is not compiled in, and sizes no compiled build has: refused before any run, naming
     * the builds there are */
    char msg[512];
    vdev *d = NULL;
    const vkernel_opts nope = { .build = "card-9x9" };
    assert_int_equal(vdev_open(&nope, MEM, &d, msg, sizeof msg), VK_ENOFIT);
    assert_null(d);
    printf("  reported: %s\n", msg);
    assert_non_null(strstr(msg, "no RTL kernel build 'card-9x9'"));
    assert_non_null(strstr(msg, vkernel_builds()));
    if (!compiled("full")) {
        const vkernel_opts o = opts_of("pool-4x4");
        assert_int_equal(vdev_open(&o, MEM, &d, msg, sizeof msg), VK_ENOFIT);
        assert_null(d);
        printf("  reported: %s\n", msg);
        assert_non_null(strstr(msg, "have fewer host ports, devices, DRAM channels, banks or DRAM queue entries"));
        assert_non_null(strstr(msg, vkernel_builds()));
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
        cmocka_unit_test(test_preset_builds),
    };
    return cmocka_run_group_tests_name("vdev", tests, NULL, NULL);
}
