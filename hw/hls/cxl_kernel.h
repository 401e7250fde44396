/* cxl_kernel.h - the kernel top function: one call processes a batch of descriptors, advances the model
 * to a cycle, and returns completions (and, on request, statistics). The model state persists between
 * calls (on a card it stays in device memory), so a long simulation is many calls without
 * re-initialisation. The csim backend calls exactly this function; an FPGA runs it through XRT. */
#ifndef CXL_KERNEL_H
#define CXL_KERNEL_H

#include <stdint.h>

#include "cxl_model.h"

enum cxl_kernel_status {
    CXL_KST_OK = 0,
    CXL_KST_DESC_REFUSED = 1,   /* a requester's descriptor queue was full (host contract broken) */
    CXL_KST_MODEL_ERROR = 2,    /* an internal bound was exceeded: see state->model_error */
    CXL_KST_BUS_ERROR = 3       /* RTL kernel only: an AXI master access answered SLVERR/DECERR */
};

/* What a call leaves for the host besides completions and statistics, written through the kernel's AXI
 * master (an RTL/FPGA kernel's scalar return and its on-chip state are not otherwise visible to the
 * host). 40 bytes, little endian; hw/rtl/cxl_layout.vh gives the offsets (CXL_R_*). */
typedef struct cxl_kernel_result {
    uint32_t n_comps;            /* completions written to comps */
    uint32_t status;             /* enum cxl_kernel_status, as returned */
    uint32_t model_error;        /* state->model_error */
    uint32_t idle;               /* cxl_model_idle(state) after the run */
    uint64_t now;                /* state->now after the run */
    uint8_t space[CXL_MAX_REQ];  /* requester_space() of each requester after the run */
} cxl_kernel_result;

/* init: reset the state from params first. until: advance to this cycle (exclusive). stop: return once a
 * completion is buffered. Completions (at most max_comps) are written to comps, their count and the
 * model's state after the run to *result; stats are copied when want_stats. Returns an enum
 * cxl_kernel_status (also result->status). */
uint32_t cxl_kernel(const cxl_params *params, cxl_model *state, uint32_t init, const cxl_desc *descs,
                    uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps, uint32_t max_comps,
                    cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats);

#endif
