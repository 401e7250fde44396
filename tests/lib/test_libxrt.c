/* test_libxrt.c - the xrt backend as a module of libcxlsim (lib/backend_module.h): the library loads
 * <build>/lib/cxlsim/backend_xrt.so when asked for "xrt", opens it with its options on XRT's no-op shim
 * (as test_xrt: XILINX_XRT=<build>/xrt-noop, XCL_EMULATION_MODE=noop), refuses bad options, and reports
 * "not built into this library" when the module is not where it looks; probe takes the same options. Exit 77 (skipped) without XRT or
 * the shim. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cxl/backend.h"
#include "cxlsim/cxlsim.h"
#include "xclbin_write.h"

static char xclbin[256];

static void module_opens(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_backend *b;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    char opt[300];
    snprintf(opt, sizeof opt, "xclbin=%s", xclbin);
    const char *opts[] = { opt, "card=0", "timeout_ms=1000" };
    assert_true(cxlsim_backend_available("xrt"));
    int rc = cxlsim_backend_open_opts(d, "xrt", opts, 3, &b, &e);
    if (rc)
        fail_msg("%s", e.message);
    cxlsim_backend_close(b);
    /* the backend's own checks, through the module */
    assert_true(cxlsim_backend_open(d, "xrt", &b, &e) < 0);
    assert_non_null(strstr(e.message, "xclbin"));
    const char *bad[] = { "timeout_ms=0" };
    assert_int_equal(cxlsim_backend_open_opts(d, "xrt", bad, 1, &b, &e), CXLSIM_EUSAGE);
    const char *unknown[] = { "xclbim=x" };
    assert_int_equal(cxlsim_backend_open_opts(d, "csim", unknown, 1, &b, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "valid: xclbin=FILE"));
    cxlsim_device_free(d);
}

/* probe on xrt with the command's --xclbin and --card as backend options: on the shim, which runs no
 * kernel, it opens the card and stops where the command's probe stops (tests/cli/xrt.sh) */
static void probe_on_xrt(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_probe_result r;
    cxlsim_probe_result_init(&r);
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    char opt[300];
    snprintf(opt, sizeof opt, "xclbin=%s", xclbin);
    const char *opts[] = { opt, "card=0" };
    cxlsim_probe_options o = { .size = sizeof o, .backend = "xrt", .quick = 1, .seed = 1, .mixes = "1:0",
                               .backend_options = opts, .nbackend_options = 2 };
    assert_int_equal(cxlsim_probe(d, &o, &r, &e), CXLSIM_ELIMIT);
    assert_non_null(strstr(e.message, "room for 0"));
    o.nbackend_options = 0; /* no xclbin: the backend's own message */
    assert_true(cxlsim_probe(d, &o, &r, &e) < 0);
    assert_non_null(strstr(e.message, "xclbin"));
    const char *card[] = { opt, "card=first" };
    o.backend_options = card;
    o.nbackend_options = 2;
    assert_true(cxlsim_probe(d, &o, &r, &e) < 0);
    assert_non_null(strstr(e.message, "first"));
    cxlsim_device_free(d);
}

static void module_missing(void **state)
{
    (void)state;
    /* a fresh process: the loader keeps a module once loaded */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("CXLSIM_BACKEND_DIR", "/nonexistent", 1);
        cxlsim_error e;
        cxlsim_error_init(&e);
        cxlsim_device *d;
        cxlsim_backend *b;
        if (cxlsim_device_load("asic", NULL, 0, &d, &e))
            _exit(2);
        int rc = cxlsim_backend_open(d, "xrt", &b, &e);
        _exit(rc == CXLSIM_EBACKEND && strstr(e.message, "not built into this library") ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    if (!cxl_backend_available("xrt")) { /* the command's build has no XRT: no module either */
        printf("SKIPPED: xrt backend not built (libxrt-dev missing)\n");
        return 77;
    }
    const char *root = getenv("XILINX_XRT"), *mode = getenv("XCL_EMULATION_MODE");
    char shim[1024];
    snprintf(shim, sizeof shim, "%s/lib/libxrt_noop.so.2", root ? root : "");
    if (!root || !mode || strcmp(mode, "noop") || access(shim, R_OK)) {
        printf("SKIPPED: XRT's no-op shim is not available (%s)\n", shim);
        return 77;
    }
    char dir[] = "/tmp/cxlsim-test-libxrt-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(xclbin, sizeof xclbin, "%s/k.xclbin", dir);
    char msg[256];
    if (cxl_xclbin_write(xclbin, NULL, msg, sizeof msg)) {
        fprintf(stderr, "cxl_xclbin_write: %s\n", msg);
        return 1;
    }
    const struct CMUnitTest tests[] = { cmocka_unit_test(module_opens), cmocka_unit_test(probe_on_xrt),
                                        cmocka_unit_test(module_missing) };
    int rc = cmocka_run_group_tests_name("libxrt", tests, NULL, NULL);
    unlink(xclbin);
    rmdir(dir);
    return rc;
}
