/* xclbin_tool.c - cxlsim-xclbin: writes the interface-only xclbin of xclbin_write.h for XRT's no-op shim.
 *
 *   cxlsim-xclbin OUT.xclbin [--rtl] [--kernel NAME]
 *
 * Exit status: 0 written, 1 usage (bad option or kernel name), 5 the file could not be written. */
#include <stdio.h>
#include <string.h>

#include "xclbin_write.h"

static const char usage_text[] =
    "usage: cxlsim-xclbin OUT.xclbin [--rtl] [--kernel NAME]\n"
    "  writes an xclbin describing the cxl_kernel interface (no bitstream), loadable by XRT's no-op\n"
    "  shim (XCL_EMULATION_MODE=noop)\n"
    "  --rtl          the RTL kernel (hw/rtl): one master M_AXI_GMEM, ap_ctrl_hs\n"
    "                 (default: the HLS kernel, master M_AXI_GMEM0, ap_ctrl_chain)\n"
    "  --kernel NAME  kernel name (default " CXL_XCLBIN_DEFAULT_KERNEL "); the instance is NAME_1\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cxlsim-xclbin: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return 1;
}

int main(int argc, char **argv)
{
    cxl_xclbin_opts o = {CXL_XCLBIN_DEFAULT_KERNEL, CXL_XCLBIN_HLS};
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--rtl")) {
            o.variant = CXL_XCLBIN_RTL;
        } else if (!strcmp(a, "--kernel")) {
            if (i + 1 >= argc)
                return usage_error("%s needs a kernel name", a);
            o.kernel_name = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (out) {
            return usage_error("more than one output file ('%s')", a);
        } else {
            out = a;
        }
    }
    if (!out)
        return usage_error("%s", "no output file given");

    char msg[512];
    if (cxl_xclbin_check_opts(&o, msg, sizeof msg))
        return usage_error("%s", msg);
    if (cxl_xclbin_write(out, &o, msg, sizeof msg)) {
        fprintf(stderr, "cxlsim-xclbin: %s\n", msg);
        return 5;
    }
    return 0;
}
