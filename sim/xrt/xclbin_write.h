/* xclbin_write.h - writes an xclbin (XRT's "axlf" container) that describes the cxl_kernel interface and
 * nothing else: no bitstream. It is what XRT's no-op shim (XCL_EMULATION_MODE=noop) needs to open the
 * kernel, so the xrt backend's call sequence, argument indices, register offsets and memory groups can be
 * exercised without a card or a Vitis installation. A real card needs the xclbin that v++ links.
 *
 * Content (layouts of xrt/xclbin.h, XRT 2.13; every value little endian, every section 8-byte aligned):
 *   MEM_TOPOLOGY       one used DDR4 bank "bank0", 16 GiB at device address 0
 *   IP_LAYOUT          one IP_KERNEL "<kernel>:<kernel>_1" at 0x1800000, interrupt enabled, control
 *                      protocol ap_ctrl_chain (HLS) or ap_ctrl_hs (RTL)
 *   CONNECTIVITY       every pointer argument of that IP -> bank 0 (so xrtKernelArgGroupId is 0 for a
 *                      pointer; ask it of pointers only: XRT 2.13 answers -1 for a scalar, and for one
 *                      past the last pointer, want_stats, also prints "[XRT] ERROR: vector::_M_range_check")
 *   EMBEDDED_METADATA  the XML that v++ embeds: the kernel, its ports and arguments (offsets and indices
 *                      from hw/hls/cxl_kernel_regs.h) and its instance
 * The header's timestamp is 0 and its uuid a hash of everything else, so the same options give a
 * byte-identical file, and different options a different uuid (XRT tells xclbins apart by uuid).
 *
 * Errors: functions return 0 or -1 and put a one-line reason in msg (msg_size bytes, may be 0); they print
 * nothing. No state outside the arguments. */
#ifndef CXLSIM_XCLBIN_WRITE_H
#define CXLSIM_XCLBIN_WRITE_H

#include <stddef.h>

/* Which kernel the xclbin describes. Both have the same register map and argument indices. */
typedef enum cxl_xclbin_variant {
    CXL_XCLBIN_HLS = 0, /* hw/hls/cxl_kernel.c: master M_AXI_GMEM0 (every pointer), ap_ctrl_chain */
    CXL_XCLBIN_RTL = 1  /* hw/rtl/cxl_kernel.v: one master M_AXI_GMEM, ap_ctrl_hs */
} cxl_xclbin_variant;

/* NULL options, or a zeroed struct, mean: kernel "cxl_kernel", HLS variant. */
typedef struct cxl_xclbin_opts {
    const char *kernel_name;    /* NULL: CXL_XCLBIN_DEFAULT_KERNEL; else a C identifier, at most
                                 * CXL_XCLBIN_MAX_NAME characters */
    cxl_xclbin_variant variant;
} cxl_xclbin_opts;

#define CXL_XCLBIN_DEFAULT_KERNEL "cxl_kernel"
/* The IP_LAYOUT name "<kernel>:<kernel>_1" must fit in 63 characters. */
#define CXL_XCLBIN_MAX_NAME 30
/* Where the instance's s_axi_control lies, as v++ places a first compute unit. */
#define CXL_XCLBIN_CU_BASE 0x1800000u

/* 0 if the options are valid, else -1 and what would be valid (the only error of cxl_xclbin_build other
 * than running out of memory, and of cxl_xclbin_write other than I/O). */
int cxl_xclbin_check_opts(const cxl_xclbin_opts *o, char *msg, size_t msg_size);

/* Build the xclbin in memory: on success *out (free() it) holds *out_len bytes. */
int cxl_xclbin_build(const cxl_xclbin_opts *o, unsigned char **out, size_t *out_len, char *msg,
                     size_t msg_size);

/* Build it and write it to `path`: through a temporary file in the same folder, renamed over `path` once
 * complete, so `path` is either untouched or the whole xclbin. */
int cxl_xclbin_write(const char *path, const cxl_xclbin_opts *o, char *msg, size_t msg_size);

#endif
