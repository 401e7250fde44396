/* cxl_kernel_regs.h - the interface of the kernel top cxl_kernel() (cxl_kernel.h) as a host sees it on a
 * card: the s_axi_control register map that Vitis HLS gives the function and hw/rtl/cxl_kernel.v
 * reproduces (control block, then ap_return, then one register per argument in order; a 64-bit argument
 * takes two words, low first, and each is followed by one reserved word), and each argument's index as
 * XRT numbers them (xrtRunSetArg, xrtKernelArgOffset). Used by the verilator and xrt backends and by the
 * xclbin that sim/xrt writes for XRT's no-op shim. */
#ifndef CXLSIM_CXL_KERNEL_REGS_H
#define CXLSIM_CXL_KERNEL_REGS_H

#define CXLK_CTRL 0x00u        /* bit 0 ap_start, 1 ap_done (clear on read), 2 ap_idle, 3 ap_ready, 7 auto_restart */
#define CXLK_GIE 0x04u         /* bit 0: global interrupt enable */
#define CXLK_IER 0x08u         /* bit 0: ap_done, bit 1: ap_ready */
#define CXLK_ISR 0x0Cu         /* same bits; toggle on write */
#define CXLK_RETURN 0x10u      /* ap_return: enum cxl_kernel_status (read only) */
#define CXLK_PARAMS 0x18u      /* const cxl_params * (64-bit) */
#define CXLK_STATE 0x24u       /* cxl_model * (64-bit; unused by the RTL, whose state is on chip) */
#define CXLK_INIT 0x30u
#define CXLK_DESCS 0x38u       /* const cxl_desc * (64-bit) */
#define CXLK_N_DESCS 0x44u
#define CXLK_UNTIL 0x4Cu       /* uint64_t */
#define CXLK_STOP 0x58u
#define CXLK_COMPS 0x60u       /* cxl_completion * (64-bit) */
#define CXLK_MAX_COMPS 0x6Cu
#define CXLK_RESULT 0x74u      /* cxl_kernel_result * (64-bit) */
#define CXLK_STATS 0x80u       /* cxl_stats * (64-bit) */
#define CXLK_WANT_STATS 0x8Cu

/* argument indices (the order of cxl_kernel()'s parameters) */
enum cxlk_arg {
    CXLK_ARG_PARAMS, CXLK_ARG_STATE, CXLK_ARG_INIT, CXLK_ARG_DESCS, CXLK_ARG_N_DESCS, CXLK_ARG_UNTIL,
    CXLK_ARG_STOP, CXLK_ARG_COMPS, CXLK_ARG_MAX_COMPS, CXLK_ARG_RESULT, CXLK_ARG_STATS, CXLK_ARG_WANT_STATS,
    CXLK_NARGS
};

#define CXLK_CTRL_START 0x01u
#define CXLK_CTRL_DONE 0x02u
#define CXLK_CTRL_IDLE 0x04u
#define CXLK_CTRL_READY 0x08u
#define CXLK_CTRL_AUTO_RESTART 0x80u

#endif
