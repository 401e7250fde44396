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
    CXL_KST_MODEL_ERROR = 2     /* an internal bound was exceeded: see state->model_error */
};

/* init: reset the state from params first. until: advance to this cycle (exclusive). stop: return once a
 * completion is buffered. Completions (at most max_comps) are written to comps, their count to
 * *n_comps; stats are copied when want_stats. Returns an enum cxl_kernel_status. */
uint32_t cxl_kernel(const cxl_params *params, cxl_model *state, uint32_t init, const cxl_desc *descs,
                    uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps, uint32_t max_comps,
                    uint32_t *n_comps, cxl_stats *stats, uint32_t want_stats);

#endif
