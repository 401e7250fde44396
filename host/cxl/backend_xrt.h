/* backend_xrt.h - what the xrt backend (backend_xrt.c) adds to backend.h: its defaults, the XRT
 * environment check, and a fault it can be told to simulate so that tests reach error paths that need a
 * misbehaving card. Built only with XRT (CXLSIM_HAVE_XRT). */
#ifndef CXLSIM_BACKEND_XRT_H
#define CXLSIM_BACKEND_XRT_H

#include "util/err.h"

/* Wall-clock limit of one kernel run when cxl_backend_opts.xrt_timeout_ms is 0. A run covers at most
 * 2^24 model cycles (backend_xrt.c): 67 ms at one model cycle per 4 ns clock, so 10 s leaves a wide margin
 * for a slower kernel; a design knob, not a published figure. */
#define CXL_XRT_TIMEOUT_MS 10000u

/* cxl_backend_opts.xrt_fault: misbehaviour to simulate (tests only; 0 in normal use). */
enum cxl_xrt_fault {
    CXL_XRT_FAULT_NONE = 0,
    CXL_XRT_FAULT_HANG = 1    /* every run after the first looks still running when its timeout expires */
};

/* Check, without calling XRT, that XRT can be loaded without aborting the process: XCL_EMULATION_MODE
 * unset or one XRT knows, XILINX_XRT set, and $XILINX_XRT/lib holding the shim library of that mode.
 * 0, or CXL_EBACKEND with err saying what to set. */
int cxl_xrt_env_check(cxl_err *err);

#endif
