/* cxl_kernel.h - the kernel: one call processes a batch of descriptors, advances the model to a cycle,
 * and returns completions (and, on request, statistics). The model state lives in the kernel's on-chip
 * memory (cxl_kernel_mem) and persists between calls, so a long simulation is many calls without
 * re-initialisation; no card-memory buffer holds it.
 *
 * Two entry points, one body:
 *   - cxl_kernel(): the Vitis HLS top, the function an FPGA runs through XRT. Its arguments are the
 *     register map of cxl_kernel_regs.h (shared with hw/rtl/cxl_kernel.v and the xrt backend). It keeps
 *     its on-chip memory in a function-local static, one per compute unit, and is therefore defined only
 *     under synthesis (__SYNTHESIS__): C library code holds no mutable global.
 *   - cxl_kernel_onchip(): the body, with the on-chip memory as a parameter. cxl_kernel() calls it with
 *     its static; the csim backend calls it with the memory of its own instance, so one process may hold
 *     several independent models (probe opens a device and a local-DDR reference at once).
 *
 * One call is three phases, in this order; only load and store touch the m_axi buffers:
 *   load  - init: read the parameters into the on-chip state and reset the model from them;
 *           then read the n_descs descriptors and queue them;
 *   run   - the cycle loop (cxl_model_run) on the on-chip state alone: no m_axi argument is read or
 *           written, so the loop runs at on-chip memory speed on a card;
 *   store - write the completions, then (want_stats) the statistics, then the result record.
 * tests/hw/test_kernel.c enforces this in gcc builds: it puts every buffer in pages of their own and
 * revokes access to them while the run phase runs (the phase hook below).
 *
 * `state` (a cxl_model * on an m_axi port) is accepted for the register map and never accessed, as by
 * the RTL kernel: the state is on chip in both kernels. */
#ifndef CXL_KERNEL_H
#define CXL_KERNEL_H

#include <stdint.h>

#include "cxl_model.h"

enum cxl_kernel_status {
    CXL_KST_OK = 0,
    CXL_KST_DESC_REFUSED = 1,   /* a requester's descriptor queue was full (host contract broken) */
    CXL_KST_MODEL_ERROR = 2,    /* an internal bound was exceeded: see result->model_error */
    CXL_KST_BUS_ERROR = 3       /* RTL kernel only: an AXI master access answered SLVERR/DECERR */
};

/* What a call leaves for the host besides completions and statistics, written through the kernel's AXI
 * master (an RTL/FPGA kernel's scalar return and its on-chip state are not otherwise visible to the
 * host). 40 bytes, little endian; hw/rtl/cxl_layout.vh gives the offsets (CXL_R_*). */
typedef struct cxl_kernel_result {
    uint32_t n_comps;            /* completions written to comps */
    uint32_t status;             /* enum cxl_kernel_status, as returned */
    uint32_t model_error;        /* the model's model_error (cxl_model.h) */
    uint32_t idle;               /* cxl_model_idle() after the run */
    uint64_t now;                /* the model's cycle after the run */
    uint8_t space[CXL_MAX_REQ];  /* requester_space() of each requester after the run */
} cxl_kernel_result;

/* The phases of one call, as the phase hook reports them. */
enum cxl_kernel_phase {
    CXL_KPH_LOAD = 0,   /* entering load: params (init) and descs are read */
    CXL_KPH_RUN = 1,    /* entering run: no m_axi access until CXL_KPH_STORE */
    CXL_KPH_STORE = 2,  /* entering store: comps, stats (want_stats) and result are written */
    CXL_KPH_DONE = 3    /* the call is about to return */
};

#ifndef __SYNTHESIS__
/* Test only, gcc builds only: called at the start of each phase of every call of one kernel instance. */
typedef void (*cxl_kernel_phase_fn)(void *ctx, enum cxl_kernel_phase phase);
#endif

/* The kernel's on-chip memory: the whole model state. On a card it is a static inside cxl_kernel()
 * (block and ultra RAM, partitioned per requester, port, link and device by the pragmas there); in C it is
 * whatever the caller allocates, zeroed (calloc) before the first call, which must have init = 1. */
typedef struct cxl_kernel_mem {
    cxl_model m;
#ifndef __SYNTHESIS__
    cxl_kernel_phase_fn phase_hook; /* test only (cxl_kernel_set_phase_hook); NULL: none */
    void *phase_ctx;
#endif
} cxl_kernel_mem;

/* init: reset the state from params first (params is read only then). until: advance to this cycle
 * (exclusive). stop: return once a completion is buffered. Completions (at most max_comps) are written
 * to comps, their count and the model's state after the run to *result; stats are copied when
 * want_stats (stats is not touched otherwise). Returns an enum cxl_kernel_status (also result->status).
 * `state` is unused (see above). Defined under __SYNTHESIS__ only; C callers use cxl_kernel_onchip(). */
uint32_t cxl_kernel(const cxl_params *params, cxl_model *state, uint32_t init, const cxl_desc *descs,
                    uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps, uint32_t max_comps,
                    cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats);

/* The body of cxl_kernel() on the on-chip memory `mem`: the same arguments and results, less `state`. */
uint32_t cxl_kernel_onchip(cxl_kernel_mem *mem, const cxl_params *params, uint32_t init, const cxl_desc *descs,
                           uint32_t n_descs, uint64_t until, uint32_t stop, cxl_completion *comps,
                           uint32_t max_comps, cxl_kernel_result *result, cxl_stats *stats, uint32_t want_stats);

#ifndef __SYNTHESIS__
/* Test only: install (fn non-NULL) or remove the phase hook of one instance. The hook runs inside the
 * call; it may change page protections or siglongjmp out of the call (the instance must then be
 * re-initialised before further use). Never compiled for synthesis. */
void cxl_kernel_set_phase_hook(cxl_kernel_mem *mem, cxl_kernel_phase_fn fn, void *ctx);
#endif

#endif
