#include "cxl_kernel.h"

#include <string.h>

uint32_t cxl_kernel(const cxl_params *params, cxl_model *state, uint32_t init, const cxl_desc *descs,
                    uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps, uint32_t max_comps,
                    cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats)
{
#pragma HLS INTERFACE m_axi port = params offset = slave bundle = gmem0
#pragma HLS INTERFACE m_axi port = state offset = slave bundle = gmem1
#pragma HLS INTERFACE m_axi port = descs offset = slave bundle = gmem0
#pragma HLS INTERFACE m_axi port = comps offset = slave bundle = gmem0
#pragma HLS INTERFACE m_axi port = result offset = slave bundle = gmem0
#pragma HLS INTERFACE m_axi port = stats offset = slave bundle = gmem0
#pragma HLS INTERFACE s_axilite port = init
#pragma HLS INTERFACE s_axilite port = n_descs
#pragma HLS INTERFACE s_axilite port = until
#pragma HLS INTERFACE s_axilite port = stop
#pragma HLS INTERFACE s_axilite port = max_comps
#pragma HLS INTERFACE s_axilite port = want_stats
#pragma HLS INTERFACE s_axilite port = return
#pragma HLS INTERFACE ap_ctrl_chain port = return
    uint32_t status = CXL_KST_OK;
    if (init)
        cxl_model_init(state, params);
kernel_submit:
    for (uint32_t i = 0; i < n_descs; i++)
        if (cxl_model_submit(state, &descs[i]))
            status = CXL_KST_DESC_REFUSED;
    cxl_model_run(state, until, (int)stop);
    uint32_t n = cxl_model_drain(state, comps, max_comps);
    if (want_stats)
        memcpy(stats, &state->st, sizeof *stats);
    if (state->model_error)
        status = CXL_KST_MODEL_ERROR;
    cxl_kernel_result r;
    r.n_comps = n;
    r.status = status;
    r.model_error = state->model_error;
    r.idle = (uint32_t)cxl_model_idle(state);
    r.now = state->now;
kernel_space:
    for (uint32_t i = 0; i < CXL_MAX_REQ; i++)
        r.space[i] = (uint8_t)requester_space(&state->req[i]);
    *result = r;
    return status;
}
