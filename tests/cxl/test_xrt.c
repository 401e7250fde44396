/* test_xrt.c - the xrt backend without a card, through XRT's no-op shim (XCL_EMULATION_MODE=noop, which
 * CMake sets with XILINX_XRT=<build>/xrt-noop; scripts/xrt-env.sh --noop does the same by hand).
 *
 * The shim loads any well-formed xclbin, completes every run at once and computes nothing, so what it can
 * check is the host side: the xclbin that sim/xrt writes from hw/hls/cxl_kernel_regs.h describes
 * cxl_kernel() as hw/hls has it (argument names and order from cxl_kernel.h, pointers on m_axi and scalars
 * on s_axilite from the pragmas of cxl_kernel.c); the backend opens it (device, xclbin, kernel, each
 * argument's register offset checked against cxl_kernel_regs.h, one buffer per pointer argument in the
 * bank XRT names, two runs) and goes through the whole call sequence (init run, statistics run, an
 * advance) for the HLS and the RTL kernel's xclbin; and every error a user can meet gives its code and a
 * message: no xclbin, unreadable or malformed xclbin, a kernel of another name, a card that does not
 * exist, XRT's environment missing or wrong, and a run that does not finish (simulated: the shim never
 * hangs). Exit 77 (skipped) where the backend is not built or the shim is absent. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../hw/hls/cxl_kernel_regs.h"
#include "cxl/backend.h"
#include "cxl/backend_xrt.h"
#include "config/devcfg.h"
#include "xclbin_write.h"

static char tmpdir[256];
static cxl_params params;

static void path_in_tmp(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", tmpdir, name); }

static void write_xclbin(const char *name, cxl_xclbin_variant v, const char *kernel, char *path, size_t n)
{
    path_in_tmp(path, n, name);
    cxl_xclbin_opts o = { kernel, v };
    char msg[256];
    if (cxl_xclbin_write(path, &o, msg, sizeof msg))
        fail_msg("cxl_xclbin_write: %s", msg);
}

static int open_xrt(const char *xclbin, const char *card, unsigned fault, unsigned timeout_ms, cxl_backend **b,
                    cxl_err *e)
{
    cxl_backend_opts o = { .xclbin = xclbin, .xrt_card = card, .xrt_timeout_ms = timeout_ms, .xrt_fault = fault };
    cxl_err_clear(e);
    return cxl_backend_open_opts("xrt", &params, &o, b, e);
}

static void expect_error(int rc, const cxl_err *e, int code, const char *text)
{
    if (rc != code || !strstr(e->msg, text))
        fail_msg("got %d '%s', want %d with '%s'", rc, e->msg, code, text);
}

/* ---- the interface in the xclbin against hw/hls ---- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* the parameter names of cxl_kernel(...) in hw/hls/cxl_kernel.h, in order */
static int prototype_names(char names[][32], int max)
{
    char *s = slurp(CXLSIM_SOURCE_DIR "/hw/hls/cxl_kernel.h");
    char *p = strstr(s, "uint32_t cxl_kernel(");
    assert_non_null(p);
    p = strchr(p, '(') + 1;
    char *end = strchr(p, ')');
    int n = 0;
    while (p < end && n < max) {
        char *comma = memchr(p, ',', (size_t)(end - p));
        char *stop = comma ? comma : end;
        char *q = stop; /* the name: the last identifier before the comma */
        while (q > p && (q[-1] == ' ' || q[-1] == '\n'))
            q--;
        char *r = q;
        while (r > p && (r[-1] == '_' || (r[-1] >= 'a' && r[-1] <= 'z') || (r[-1] >= '0' && r[-1] <= '9')))
            r--;
        snprintf(names[n++], 32, "%.*s", (int)(q - r), r);
        p = stop + 1;
    }
    return n;
}

/* value of attribute `attr` in the element starting at `el` */
static int attr(const char *el, const char *attr, char *out, size_t n)
{
    char key[48];
    snprintf(key, sizeof key, " %s=\"", attr);
    const char *gt = strchr(el, '>');
    const char *a = strstr(el, key);
    if (!a || (gt && a > gt))
        return -1;
    a += strlen(key);
    const char *q = strchr(a, '"');
    snprintf(out, n, "%.*s", (int)(q - a), a);
    return 0;
}

static void test_interface_matches_hls(void **state)
{
    (void)state;
    char names[16][32];
    assert_int_equal(prototype_names(names, 16), CXLK_NARGS);
    static const uint32_t off[CXLK_NARGS] = { CXLK_PARAMS, CXLK_STATE,     CXLK_INIT,   CXLK_DESCS,
                                              CXLK_N_DESCS, CXLK_UNTIL,    CXLK_STOP,   CXLK_COMPS,
                                              CXLK_MAX_COMPS, CXLK_RESULT, CXLK_STATS,  CXLK_WANT_STATS };
    const char *hls = slurp(CXLSIM_SOURCE_DIR "/hw/hls/cxl_kernel.c");
    char *pragmas = strdup(hls);
    for (int v = 0; v < 2; v++) {
        cxl_xclbin_opts o = { NULL, (cxl_xclbin_variant)v };
        unsigned char *bin;
        size_t len;
        char msg[256];
        assert_int_equal(cxl_xclbin_build(&o, &bin, &len, msg, sizeof msg), 0);
        assert_memory_equal(bin, "xclbin2", 8);
        const char *xml = NULL;
        for (size_t i = 0; i + 8 < len && !xml; i++)
            if (!memcmp(bin + i, "<project", 8))
                xml = (const char *)bin + i;
        assert_non_null(xml);
        int seen = 0;
        for (const char *a = strstr(xml, "<arg "); a; a = strstr(a + 1, "<arg ")) {
            char name[64], id[16], offset[16], aq[8], port[32];
            assert_int_equal(attr(a, "name", name, sizeof name), 0);
            assert_int_equal(attr(a, "id", id, sizeof id), 0);
            assert_int_equal(attr(a, "offset", offset, sizeof offset), 0);
            assert_int_equal(attr(a, "addressQualifier", aq, sizeof aq), 0);
            assert_int_equal(attr(a, "port", port, sizeof port), 0);
            int i = atoi(id);
            assert_in_range(i, 0, CXLK_NARGS - 1);
            /* index i is the i-th parameter of cxl_kernel(), at the offset the RTL and HLS have */
            assert_string_equal(name, names[i]);
            assert_int_equal(strtoul(offset, NULL, 16), off[i]);
            /* a pointer on an m_axi port exactly when cxl_kernel.c puts it on m_axi */
            char pragma[192];
            snprintf(pragma, sizeof pragma, "#pragma HLS INTERFACE m_axi port = %s ", name);
            int is_ptr = strstr(pragmas, pragma) != NULL;
            snprintf(pragma, sizeof pragma, "#pragma HLS INTERFACE s_axilite port = %s\n", name);
            int is_scalar = strstr(pragmas, pragma) != NULL;
            assert_int_equal(is_ptr + is_scalar, 1);
            assert_int_equal(atoi(aq), is_ptr);
            assert_int_equal(strncmp(port, "M_AXI_GMEM", 10) == 0, is_ptr);
            if (v == CXL_XCLBIN_HLS && is_ptr) { /* the bundle of the pragma names the port */
                snprintf(pragma, sizeof pragma, "#pragma HLS INTERFACE m_axi port = %s offset = slave bundle = gmem%c\n",
                         name, port[10]);
                assert_non_null(strstr(pragmas, pragma));
            }
            seen |= 1 << i;
        }
        assert_int_equal(seen, (1 << CXLK_NARGS) - 1);
        /* the control protocol: ap_ctrl_chain for HLS (its pragma), ap_ctrl_hs for the RTL */
        assert_non_null(strstr(xml, v == CXL_XCLBIN_HLS ? "ap_ctrl_chain" : "ap_ctrl_hs"));
        free(bin);
    }
    assert_non_null(strstr(pragmas, "#pragma HLS INTERFACE ap_ctrl_chain port = return"));
    free(pragmas);
}

/* ---- the call sequence through the shim ---- */

static void sequence(cxl_xclbin_variant v)
{
    char xclbin[512];
    write_xclbin(v == CXL_XCLBIN_HLS ? "hls.xclbin" : "rtl.xclbin", v, NULL, xclbin, sizeof xclbin);
    cxl_backend *b, *b2;
    cxl_err e;
    int rc = open_xrt(xclbin, NULL, 0, 0, &b, &e);
    if (rc)
        fail_msg("open: %s", e.msg);
    /* a second instance on the same card (cxlmem opens one per CXL domain) */
    rc = open_xrt(xclbin, "0", 0, 0, &b2, &e);
    if (rc)
        fail_msg("second open: %s", e.msg);
    assert_string_equal(cxl_backend_name(b), "xrt");
    /* statistics: a run with want_stats; the shim leaves the buffer as allocated */
    cxl_stats st;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_stats(b, &st, &e), 0);
    assert_int_equal(cxl_backend_now(b), 0);
    /* an advance starts a run and returns; the next call that needs its outcome waits for it, and the
     * shim, which runs nothing, leaves the cycle where it was: the backend reports that instead of being
     * asked again and again */
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_advance(b, 1000, 0, &e), 0);
    assert_int_equal(cxl_backend_now(b), 0);
    cxl_err_clear(&e);
    rc = cxl_backend_advance(b, 1000, 0, &e);
    expect_error(rc, &e, CXL_EDEVICE, "ran no cycle");
    assert_non_null(strstr(e.msg, "XCL_EMULATION_MODE=noop"));
    /* descriptors go into the mapped buffer and to the card with the run; the shim reports no free slot
     * (its result record stays as allocated, zero), so they go to the backend's submit directly, and the
     * run asks for no cycle */
    cxl_desc d[4];
    memset(d, 0, sizeof d);
    for (int i = 0; i < 4; i++) {
        d[i].id = (uint64_t)i + 1;
        d[i].requester = (uint16_t)i;
        d[i].bytes = 4096;
        d[i].max_outstanding = 1;
        d[i].rd_weight = 1;
    }
    assert_int_equal(cxl_backend_space(b2, 0), 0);
    cxl_err_clear(&e);
    assert_int_equal(b2->ops->submit(b2, d, 4, &e), 0);
    assert_int_equal(cxl_backend_idle(b2), 0); /* four descriptors wait for the next run */
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_advance(b2, 0, 1, &e), 0);
    assert_int_equal(cxl_backend_now(b2), 0);
    cxl_completion c[4];
    assert_int_equal(cxl_backend_poll(b2, c, 4), 0);
    cxl_backend_close(b2);
    cxl_backend_close(b);
}

static void test_sequence_hls(void **state)
{
    (void)state;
    sequence(CXL_XCLBIN_HLS);
}

static void test_sequence_rtl(void **state)
{
    (void)state;
    sequence(CXL_XCLBIN_RTL);
}

static void test_run_timeout(void **state)
{
    (void)state;
    char xclbin[512];
    write_xclbin("hls.xclbin", CXL_XCLBIN_HLS, NULL, xclbin, sizeof xclbin);
    cxl_backend *b;
    cxl_err e;
    int rc = open_xrt(xclbin, NULL, CXL_XRT_FAULT_HANG, 50, &b, &e);
    if (rc)
        fail_msg("open: %s", e.msg);
    cxl_stats st;
    cxl_err_clear(&e);
    rc = cxl_backend_stats(b, &st, &e);
    expect_error(rc, &e, CXL_EDEVICE, "did not finish within 50 ms");
    assert_non_null(strstr(e.msg, "xbutil reset"));
    /* nothing more is started on a card that may still be running */
    cxl_err_clear(&e);
    rc = cxl_backend_advance(b, 100, 0, &e);
    expect_error(rc, &e, CXL_EDEVICE, "did not finish");
    cxl_backend_close(b);
}

static void test_xclbin_errors(void **state)
{
    (void)state;
    cxl_backend *b;
    cxl_err e;
    char path[512];
    /* none given */
    expect_error(open_xrt(NULL, NULL, 0, 0, &b, &e), &e, CXL_EUSAGE, "no xclbin");
    /* missing */
    path_in_tmp(path, sizeof path, "missing.xclbin");
    expect_error(open_xrt(path, NULL, 0, 0, &b, &e), &e, CXL_EIO, "cannot read xclbin");
    /* not an xclbin */
    path_in_tmp(path, sizeof path, "junk.xclbin");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("not an xclbin\n", f);
    fclose(f);
    expect_error(open_xrt(path, NULL, 0, 0, &b, &e), &e, CXL_EDEVICE, "refused xclbin");
    /* a kernel of another name */
    write_xclbin("other.xclbin", CXL_XCLBIN_HLS, "other_kernel", path, sizeof path);
    expect_error(open_xrt(path, NULL, 0, 0, &b, &e), &e, CXL_EDEVICE, "has no kernel 'cxl_kernel'");
    /* options for another backend */
    cxl_backend_opts o = { .xclbin = path };
    cxl_err_clear(&e);
    expect_error(cxl_backend_open_opts("csim", &params, &o, &b, &e), &e, CXL_EUSAGE, "need --backend xrt");
}

static void test_card_errors(void **state)
{
    (void)state;
    char xclbin[512];
    write_xclbin("hls.xclbin", CXL_XCLBIN_HLS, NULL, xclbin, sizeof xclbin);
    cxl_backend *b;
    cxl_err e;
    expect_error(open_xrt(xclbin, "first", 0, 0, &b, &e), &e, CXL_EUSAGE, "give an index");
    expect_error(open_xrt(xclbin, "0000:3b:00", 0, 0, &b, &e), &e, CXL_EUSAGE, "PCIe BDF");
    /* the shim opens any index but knows no PCIe address (without it: tests/cli/xrt.sh) */
    expect_error(open_xrt(xclbin, "0000:3b:00.1", 0, 0, &b, &e), &e, CXL_EDEVICE, "no FPGA card at PCIe 0000:3b:00.1");
}

/* XRT aborts the process when its environment is wrong: the backend checks it first */
static void test_environment(void **state)
{
    (void)state;
    char xclbin[512];
    write_xclbin("hls.xclbin", CXL_XCLBIN_HLS, NULL, xclbin, sizeof xclbin);
    char *root = strdup(getenv("XILINX_XRT"));
    cxl_backend *b;
    cxl_err e;
    setenv("XCL_EMULATION_MODE", "fast", 1);
    expect_error(open_xrt(xclbin, NULL, 0, 0, &b, &e), &e, CXL_EBACKEND, "valid: unset (a card), noop, hw_emu, sw_emu");
    setenv("XCL_EMULATION_MODE", "noop", 1);
    unsetenv("XILINX_XRT");
    expect_error(open_xrt(xclbin, NULL, 0, 0, &b, &e), &e, CXL_EBACKEND, "XILINX_XRT is not set");
    setenv("XILINX_XRT", tmpdir, 1);
    expect_error(open_xrt(xclbin, NULL, 0, 0, &b, &e), &e, CXL_EBACKEND, "/lib/libxrt_noop.so.2");
    setenv("XCL_EMULATION_MODE", "hw_emu", 1);
    expect_error(open_xrt(xclbin, NULL, 0, 0, &b, &e), &e, CXL_EBACKEND, "libxrt_hwemu.so.2");
    setenv("XILINX_XRT", root, 1);
    setenv("XCL_EMULATION_MODE", "noop", 1);
    if (open_xrt(xclbin, NULL, 0, 0, &b, &e))
        fail_msg("open after restoring the environment: %s", e.msg);
    cxl_backend_close(b);
    free(root);
}

int main(void)
{
    if (!cxl_backend_available("xrt")) {
        printf("SKIPPED: xrt backend not built (libxrt-dev missing)\n");
        return 77;
    }
    const char *root = getenv("XILINX_XRT");
    char shim[1024];
    snprintf(shim, sizeof shim, "%s/lib/libxrt_noop.so.2", root ? root : "");
    const char *mode = getenv("XCL_EMULATION_MODE");
    if (!root || !mode || strcmp(mode, "noop") || access(shim, R_OK)) {
        printf("SKIPPED: XRT's no-op shim is not available (%s; XCL_EMULATION_MODE=%s)\n", shim, mode ? mode : "");
        return 77;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cxlsim-test-xrt-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    devcfg d;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load("asic", &d, &e) || devcfg_to_params(&d, &params, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interface_matches_hls), cmocka_unit_test(test_sequence_hls),
        cmocka_unit_test(test_sequence_rtl),          cmocka_unit_test(test_run_timeout),
        cmocka_unit_test(test_xclbin_errors),         cmocka_unit_test(test_card_errors),
        cmocka_unit_test(test_environment),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) {
        /* the folder is left behind; the result stands */
    }
    return rc;
}
