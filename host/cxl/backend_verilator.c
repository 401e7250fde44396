/* backend_verilator.c - the RTL backend: hw/rtl/cxl_kernel.v simulated by Verilator, driven the way a host
 * drives the FPGA kernel (sim/verilator/vdev.h: buffers in card memory, argument registers over
 * AXI4-Lite, ap_start, wait for ap_done). Each advance is one kernel call with the descriptors submitted
 * since the previous one (as backend_csim.c); the model state lives in the RTL. What the host cannot see
 * on chip (the cycle, idleness, each requester's free descriptor slots) comes back in the kernel's result
 * record (cxl_kernel_result) after every call, so space/now/idle answer exactly as csim's do.
 * Statistics are a kernel call with want_stats and nothing to submit or run (until = 0). */
#include <stdlib.h>
#include <string.h>

#include "../hw/hls/cxl_kernel.h"
#include "../hw/hls/cxl_kernel_regs.h"
#include "../sim/verilator/vdev.h"
#include "cxl/backend.h"
#include "cxl/comp_ring.h"

#define VBK_BATCH (CXL_MAX_REQ * CXL_DESCQ)
/* card memory: the buffers below, each rounded up to 4 KiB */
#define VBK_MEM_BYTES (1024u * 1024u)

typedef struct vbk {
    vdev *d;
    uint64_t a_params, a_descs, a_comps, a_result, a_stats; /* device addresses */
    cxl_desc batch[VBK_BATCH];
    uint32_t nbatch;
    uint32_t pending[CXL_MAX_REQ];
    cxl_comp_ring ring;
    cxl_kernel_result last;        /* the result record of the latest call */
} vbk;

static int vdev_err(const vbk *v, int rc, cxl_err *err)
{
    return cxl_errf(err, rc == VK_ENOMEM ? CXL_ENOMEM : CXL_EINTERNAL, "verilator backend: %s", vdev_error(v->d));
}

/* One cxl_kernel() call on the card. The descriptors, if any, are already in the descs buffer. */
static int kernel_call(vbk *v, uint32_t init, uint32_t n_descs, uint64_t until, uint32_t stop, uint64_t comps,
                       uint32_t max_comps, uint32_t want_stats, cxl_err *err)
{
    static const uint32_t reg32[] = { CXLK_INIT, CXLK_N_DESCS, CXLK_STOP, CXLK_MAX_COMPS, CXLK_WANT_STATS };
    const uint32_t val32[] = { init, n_descs, stop, max_comps, want_stats };
    const uint32_t reg64[] = { CXLK_PARAMS, CXLK_STATE, CXLK_DESCS, CXLK_UNTIL, CXLK_COMPS, CXLK_RESULT, CXLK_STATS };
    const uint64_t val64[] = { v->a_params, 0, v->a_descs, until, comps, v->a_result, v->a_stats };
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof reg32 / sizeof reg32[0]; i++)
        rc = vdev_reg_write(v->d, reg32[i], val32[i]);
    for (size_t i = 0; !rc && i < sizeof reg64 / sizeof reg64[0]; i++)
        rc = vdev_reg_write64(v->d, reg64[i], val64[i]);
    if (!rc)
        rc = vdev_run(v->d, 0);
    if (rc)
        return vdev_err(v, rc, err);
    memcpy(&v->last, vdev_map(v->d, v->a_result, sizeof v->last), sizeof v->last);
    if (v->last.n_comps > max_comps)
        return cxl_errf(err, CXL_EINTERNAL, "RTL kernel reported %u completions for room %u", v->last.n_comps,
                        max_comps);
    return 0;
}

static int status_err(const vbk *v, cxl_err *err)
{
    switch (v->last.status) {
    case CXL_KST_OK:
        return 0;
    case CXL_KST_DESC_REFUSED:
        return cxl_errf(err, CXL_EINTERNAL, "RTL model refused a descriptor (queue full)");
    case CXL_KST_MODEL_ERROR:
        if (v->last.model_error == 4)   /* a build named in the options that is too small (vbk_open) */
            return cxl_errf(err, CXL_ELIMIT, "the RTL kernel build (%s) has fewer host ports, devices or DRAM "
                            "channels than the configuration, or no switch where it has one", vdev_build(v->d));
        return cxl_errf(err, CXL_EINTERNAL, "RTL model internal bound exceeded (code %u) at cycle %llu",
                        v->last.model_error, (unsigned long long)v->last.now);
    default:
        return cxl_errf(err, CXL_EINTERNAL, "RTL kernel status %u (AXI bus error) at cycle %llu", v->last.status,
                        (unsigned long long)v->last.now);
    }
}

static void vbk_free(vbk *v)
{
    vdev_close(v->d);
    free(v);
}

static int vbk_open(cxl_backend *b, const cxl_params *p, cxl_err *err)
{
    vbk *v = calloc(1, sizeof *v);
    if (!v)
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the verilator backend");
    char msg[1024];
    /* the smallest kernel build compiled in that fits the configuration (vkernel.h); none: CXL_ELIMIT */
    const vkernel_opts ko = { .trace_fst = b->opts.trace_fst, .trace_from = b->opts.trace_from,
                              .trace_to = b->opts.trace_to, .hosts = p->hosts, .devices = p->devices,
                              .channels = p->dram.channels, .banks = vkernel_banks(p->dram.ranks, p->dram.bankgroups,
                                                                                   p->dram.banks),
                              .queue = p->dram.read_queue > p->dram.write_queue ? p->dram.read_queue
                                                                                : p->dram.write_queue,
                              .sw = p->sw.present != 0, .build = b->opts.rtl_build };
    int rc = vdev_open(&ko, VBK_MEM_BYTES, &v->d, msg, sizeof msg);
    if (rc) {
        free(v);
        int code = rc == VK_ENOMEM ? CXL_ENOMEM : rc == VK_EIO ? CXL_EIO : rc == VK_ENOTRACE ? CXL_EBACKEND
                 : rc == VK_ENOFIT ? CXL_ELIMIT : CXL_EINTERNAL;
        return cxl_errf(err, code, "verilator backend: %s", msg);
    }
    v->a_params = vdev_alloc(v->d, sizeof(cxl_params));
    v->a_descs = vdev_alloc(v->d, sizeof v->batch);
    v->a_comps = vdev_alloc(v->d, sizeof v->ring.c);
    v->a_result = vdev_alloc(v->d, sizeof(cxl_kernel_result));
    v->a_stats = vdev_alloc(v->d, sizeof(cxl_stats));
    if (!v->a_params || !v->a_descs || !v->a_comps || !v->a_result || !v->a_stats) {
        vbk_free(v);
        return cxl_errf(err, CXL_EINTERNAL, "verilator backend: card memory too small for the buffers");
    }
    memcpy(vdev_map(v->d, v->a_params, sizeof *p), p, sizeof *p);
    rc = kernel_call(v, 1, 0, 0, 0, v->a_comps, 0, 0, err);
    if (!rc)
        rc = status_err(v, err);
    if (rc) {
        vbk_free(v);
        return rc;
    }
    b->impl = v;
    return 0;
}

static int vbk_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err)
{
    vbk *v = b->impl;
    if (v->nbatch + n > VBK_BATCH)
        return cxl_errf(err, CXL_ELIMIT, "too many descriptors between advances");
    for (size_t i = 0; i < n; i++) {
        v->batch[v->nbatch++] = d[i];
        v->pending[d[i].requester]++;
    }
    return 0;
}

static uint32_t vbk_space(cxl_backend *b, uint32_t r)
{
    vbk *v = b->impl;
    if (r >= CXL_MAX_REQ)
        return 0;
    uint32_t s = v->last.space[r];
    return s > v->pending[r] ? s - v->pending[r] : 0;
}

static int vbk_advance(cxl_backend *b, uint64_t until, int stop, cxl_err *err)
{
    vbk *v = b->impl;
    if (v->ring.count && (stop || v->ring.count >= CXL_COMP_RING))
        return 0;
    uint32_t room = cxl_comp_ring_make_room(&v->ring), tail = cxl_comp_ring_tail(&v->ring);
    memcpy(vdev_map(v->d, v->a_descs, sizeof v->batch), v->batch, v->nbatch * sizeof v->batch[0]);
    int rc = kernel_call(v, 0, v->nbatch, until, (uint32_t)stop, v->a_comps + (uint64_t)tail * sizeof(cxl_completion),
                         room, 0, err);
    if (rc)
        return rc;
    v->nbatch = 0;
    memset(v->pending, 0, sizeof v->pending);
    memcpy(&v->ring.c[tail], vdev_map(v->d, v->a_comps + (uint64_t)tail * sizeof(cxl_completion), room * sizeof(cxl_completion)),
           v->last.n_comps * sizeof(cxl_completion));
    cxl_comp_ring_added(&v->ring, v->last.n_comps);
    return status_err(v, err);
}

static uint64_t vbk_now(cxl_backend *b) { return ((vbk *)b->impl)->last.now; }

static size_t vbk_poll(cxl_backend *b, cxl_completion *out, size_t max)
{
    return cxl_comp_ring_poll(&((vbk *)b->impl)->ring, out, max);
}

static int vbk_stats(cxl_backend *b, cxl_stats *out, cxl_err *err)
{
    vbk *v = b->impl;
    /* nothing submitted (the batch waits for the next advance), no cycle run, nothing drained */
    int rc = kernel_call(v, 0, 0, 0, 0, v->a_comps, 0, 1, err);
    if (rc)
        return rc;
    memcpy(out, vdev_map(v->d, v->a_stats, sizeof *out), sizeof *out);
    /* a model error was reported by the advance that met it; like csim, the statistics are still read */
    return v->last.status == CXL_KST_BUS_ERROR ? status_err(v, err) : 0;
}

static int vbk_idle(cxl_backend *b)
{
    vbk *v = b->impl;
    return v->nbatch == 0 && v->last.idle;
}

static void vbk_close(cxl_backend *b) { vbk_free(b->impl); }

/* for cxl_backend_rtl_builds (backend.c) */
const char *cxl_backend_verilator_builds(void);
const char *cxl_backend_verilator_builds(void) { return vkernel_builds(); }
int cxl_backend_verilator_can_trace(void);
int cxl_backend_verilator_can_trace(void) { return vkernel_can_trace(); }
uint64_t cxl_backend_verilator_clocks(cxl_backend *b);
uint64_t cxl_backend_verilator_clocks(cxl_backend *b) { return vdev_clocks(((const vbk *)b->impl)->d); }

const cxl_backend_ops cxl_backend_verilator_ops = {
    "verilator", "verilator", vbk_open, vbk_submit, vbk_space, vbk_advance, vbk_now, vbk_poll, vbk_stats, vbk_idle,
    vbk_close, NULL,
};
