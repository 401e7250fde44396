/* cxl_kernel.c - the kernel top and its three phases (cxl_kernel.h): load from the m_axi buffers into
 * the on-chip state, run the cycle loop on chip, store the outputs. Each phase is its own function so
 * that Vitis HLS schedules the m_axi bursts apart from the cycle loop. */
#include "cxl_kernel.h"

#include <string.h>

/* LOOP_TRIPCOUNT takes literals; these tie the kernel's to the constants they stand for (the units' name
 * theirs in a comment next to each). */
_Static_assert(CXL_MAX_REQ * CXL_DESCQ == 256, "kernel_load_descs tripcount");
_Static_assert(CXL_COMPQ == 1024, "cxl_model_drain tripcount");

static void kernel_phase(cxl_kernel_mem *mem, enum cxl_kernel_phase phase)
{
#ifndef __SYNTHESIS__
    if (mem->phase_hook)
        mem->phase_hook(mem->phase_ctx, phase);
#else
    (void)mem;
    (void)phase;
#endif
}

#ifndef __SYNTHESIS__
void cxl_kernel_set_phase_hook(cxl_kernel_mem *mem, cxl_kernel_phase_fn fn, void *ctx)
{
    mem->phase_hook = fn;
    mem->phase_ctx = fn ? ctx : NULL;
}
#endif

/* Load: the parameters, read once into a local copy (one burst) and reset from it, so that the model
 * never refers to the m_axi buffer afterwards (cxl_model_init copies them into the state). */
static void kernel_load_params(cxl_model *m, const cxl_params *params)
{
    cxl_params p = *params;
    cxl_model_init(m, &p);
}

/* Load: queue each descriptor (one burst read of 64 B each). CXL_KST_DESC_REFUSED when a requester's
 * queue was full; the rest are still queued, as before the split into phases. */
static uint32_t kernel_load_descs(cxl_model *m, const cxl_desc *descs, uint32_t n_descs)
{
    uint32_t status = CXL_KST_OK;
kernel_load_descs:
    for (uint32_t i = 0; i < n_descs; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 256
        cxl_desc d = descs[i];
        if (cxl_model_submit(m, &d))
            status = CXL_KST_DESC_REFUSED;
    }
    return status;
}

/* Store: the result record, assembled on chip and written as one burst. */
static void kernel_store_result(const cxl_model *m, uint32_t status, uint32_t n_comps, cxl_kernel_result *result)
{
    cxl_kernel_result r;
    r.n_comps = n_comps;
    r.status = status;
    r.model_error = m->model_error;
    r.idle = (uint32_t)cxl_model_idle(m);
    r.now = m->now;
kernel_space:
    for (uint32_t i = 0; i < CXL_MAX_REQ; i++) {
#pragma HLS UNROLL
        r.space[i] = (uint8_t)requester_space(&m->req[i]);
    }
    *result = r;
}

uint32_t cxl_kernel_onchip(cxl_kernel_mem *mem, const cxl_params *params, uint32_t init, const cxl_desc *descs,
                           uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps,
                           uint32_t max_comps, cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats)
{
    cxl_model *m = &mem->m;

    kernel_phase(mem, CXL_KPH_LOAD);
    if (init)
        kernel_load_params(m, params);
    uint32_t status = kernel_load_descs(m, descs, n_descs);

    kernel_phase(mem, CXL_KPH_RUN);
    cxl_model_run(m, until, (int)stop);

    kernel_phase(mem, CXL_KPH_STORE);
    uint32_t n = cxl_model_drain(m, comps, max_comps);
    if (want_stats)
        memcpy(stats, &m->st, sizeof *stats);
    if (m->model_error)
        status = CXL_KST_MODEL_ERROR;
    kernel_store_result(m, status, n, result);

    kernel_phase(mem, CXL_KPH_DONE);
    return status;
}

#ifdef __SYNTHESIS__
/* The Vitis top. `mem` is the on-chip state of this compute unit: a static keeps it across calls
 * (ap_ctrl_chain runs one call after another on the same unit). The partitions give each requester,
 * host port, link direction, device and switch port its own memories, so that the units of one model
 * cycle do not queue on one RAM port. The per-bank tables (dram_timing.h, dram.h hits_r / hits_w) sit
 * in arrays of structs (dev[].dram.ch[]), which a struct path cannot name element by element: they
 * follow their device's partition and stay one RAM per table until a synthesis report says the DRAM
 * scheduler's scan needs more ports (docs/xrt.md, "HLS kernel"). */
uint32_t cxl_kernel(const cxl_params *params, cxl_model *state, uint32_t init, const cxl_desc *descs,
                    uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps, uint32_t max_comps,
                    cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats)
{
#pragma HLS INTERFACE m_axi port = params offset = slave bundle = gmem0
#pragma HLS INTERFACE m_axi port = state offset = slave bundle = gmem0
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
    static cxl_kernel_mem mem;
#pragma HLS ARRAY_PARTITION variable = mem.m.req type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.host_req type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.host_rsp type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.up_m2s type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.up_s2m type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.dn_m2s type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.dn_s2m type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.dev type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.sw.up_in type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.sw.dn_out type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.sw.dn_in type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.sw.up_out type = complete dim = 1
#pragma HLS ARRAY_PARTITION variable = mem.m.host_nreq type = complete dim = 1
    (void)state; /* the state is on chip; the argument keeps the register map (cxl_kernel_regs.h) */
    return cxl_kernel_onchip(&mem, params, init, descs, n_descs, until, stop, comps, max_comps, result, stats,
                             want_stats);
}
#endif
