/* backend_csim.c - the C-model backend: hw/hls compiled with gcc, driven only through the kernel body
 * cxl_kernel_onchip() (the code path an FPGA runs: cxl_kernel() is that body on a static), with this
 * instance's own "on-chip" memory in host memory, so several instances live in one process. Like the
 * xrt backend, it learns the model's cycle, idleness and free descriptor slots only from the result
 * record of the latest call. Descriptors submitted between advances are handed to the kernel as one
 * batch. */
#include <stdlib.h>
#include <string.h>

#include "../hw/hls/cxl_kernel.h"
#include "cxl/backend.h"
#include "cxl/comp_ring.h"

#define CSIM_BATCH (CXL_MAX_REQ * CXL_DESCQ)

typedef struct csim {
    cxl_kernel_mem mem;              /* the kernel's on-chip memory (the model state) */
    cxl_kernel_result last;          /* the result record of the latest call */
    cxl_desc batch[CSIM_BATCH];
    uint32_t nbatch;
    uint32_t pending[CXL_MAX_REQ];   /* per requester, in the batch not yet handed over */
    cxl_comp_ring ring;
} csim;

static int csim_open(cxl_backend *b, const cxl_params *p, cxl_err *err)
{
    csim *c = calloc(1, sizeof *c);
    if (!c)
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the C model (%zu bytes)", sizeof *c);
    b->impl = c;
    cxl_kernel_onchip(&c->mem, p, 1, NULL, 0, 0, 0, c->ring.c, 0, &c->last, NULL, 0);
    return 0;
}

static int csim_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err)
{
    csim *c = b->impl;
    if (c->nbatch + n > CSIM_BATCH)
        return cxl_errf(err, CXL_ELIMIT, "too many descriptors between advances");
    for (size_t i = 0; i < n; i++) {
        c->batch[c->nbatch++] = d[i];
        c->pending[d[i].requester]++;
    }
    return 0;
}

static uint32_t csim_space(cxl_backend *b, uint32_t r)
{
    csim *c = b->impl;
    if (r >= CXL_MAX_REQ)
        return 0;
    uint32_t s = c->last.space[r];
    return s > c->pending[r] ? s - c->pending[r] : 0;
}

static int csim_advance(cxl_backend *b, uint64_t until, int stop, cxl_err *err)
{
    csim *c = b->impl;
    if (c->ring.count && (stop || c->ring.count >= CXL_COMP_RING))
        return 0;
    uint32_t room = cxl_comp_ring_make_room(&c->ring), tail = cxl_comp_ring_tail(&c->ring);
    uint32_t st = cxl_kernel_onchip(&c->mem, &b->params, 0, c->batch, c->nbatch, until, (uint32_t)stop,
                                    &c->ring.c[tail], room, &c->last, NULL, 0);
    c->nbatch = 0;
    memset(c->pending, 0, sizeof c->pending);
    cxl_comp_ring_added(&c->ring, c->last.n_comps);
    if (st == CXL_KST_DESC_REFUSED)
        return cxl_errf(err, CXL_EINTERNAL, "C model refused a descriptor (queue full)");
    if (st == CXL_KST_MODEL_ERROR)
        return cxl_errf(err, CXL_EINTERNAL, "C model internal bound exceeded (code %u) at cycle %llu",
                        c->last.model_error, (unsigned long long)c->last.now);
    return 0;
}

static uint64_t csim_now(cxl_backend *b) { return ((csim *)b->impl)->last.now; }

static size_t csim_poll(cxl_backend *b, cxl_completion *out, size_t max)
{
    return cxl_comp_ring_poll(&((csim *)b->impl)->ring, out, max);
}

static int csim_stats(cxl_backend *b, cxl_stats *out, cxl_err *err)
{
    (void)err;
    /* through the kernel, as the FPGA is asked: nothing submitted (the batch waits for the next advance),
     * no cycle run (until 0), nothing drained, want_stats */
    csim *c = b->impl;
    cxl_kernel_onchip(&c->mem, &b->params, 0, NULL, 0, 0, 0, NULL, 0, &c->last, out, 1);
    return 0;
}

static int csim_idle(cxl_backend *b)
{
    csim *c = b->impl;
    return c->nbatch == 0 && c->last.idle;
}

static void csim_close(cxl_backend *b) { free(b->impl); }

const cxl_backend_ops cxl_backend_csim_ops = {
    "csim", "", csim_open, csim_submit, csim_space, csim_advance, csim_now, csim_poll, csim_stats, csim_idle, csim_close,
    NULL,
};
