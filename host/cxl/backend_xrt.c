/* backend_xrt.c - the FPGA backend: the kernel top cxl_kernel() (hw/hls/cxl_kernel.c built by v++, or the
 * RTL kernel hw/rtl/cxl_kernel.v packaged by hw/fpga/package_xo.tcl) on an Alveo card through XRT's C API.
 * This is the only file of cxlsim that calls XRT.
 *
 * Calls and buffers follow backend_verilator.c, which drives the RTL the same way through a simulated card:
 * parameters, `state` and statistics in one buffer each; descriptors, completions and the result
 * record (cxl_kernel_result) in two sets, used in turn (double buffering). One advance is one kernel run
 * (xrtRunStart) with the descriptors submitted since the previous one. The run is not waited for in
 * advance(): the host fills the other set's descriptor buffer (submit) while the card runs, and the first
 * call that needs the run's outcome (now, space, poll, idle, stats, the next advance) waits for it
 * (xrtRunWaitFor with the timeout) and takes its completions and result record. A failure met while
 * waiting in a call that cannot return an error (now, poll, ...) is kept and returned by the next
 * advance or stats; until then the backend answers as it stood before that run.
 *
 * Each run covers at most XBK_RUN_CYCLES model cycles, so that a run's wall time stays far below the
 * timeout; callers already loop until now() reaches their target (backend.h).
 *
 * XRT's traps (docs/references.md "Toolchain facts"): XRT throws a C++ exception through its C API, which aborts
 * the process, when XILINX_XRT is unset or its lib/ lacks the shim library of the emulation mode. The
 * environment is therefore checked before the first XRT call, and every failure afterwards becomes an
 * error with a message and a code: CXL_EBACKEND (exit 4) for an environment that cannot run XRT, CXL_EIO
 * (exit 5) for an unreadable xclbin, CXL_EDEVICE (exit 9) for what the card or XRT refuses (no card, an
 * xclbin that does not load or lacks the kernel, a run that fails or times out). Documentation:
 * docs/xrt.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include "../hw/hls/cxl_kernel.h"
#include "../hw/hls/cxl_kernel_regs.h"
#include "cxl/backend.h"
#include "cxl/backend_xrt.h"
#include "cxl/comp_ring.h"

#define XBK_BATCH (CXL_MAX_REQ * CXL_DESCQ)
/* at most this many model cycles per run: 67 ms at 1 model cycle per 4 ns clock (design knob) */
#define XBK_RUN_CYCLES (1ull << 24)
#define XBK_KERNEL "cxl_kernel"
#define XBK_STATE_BYTES 4096u /* the unused `state` argument's buffer (see xbk_open) */

typedef struct xbk_set {       /* one of the two double-buffered sets */
    xrtBufferHandle descs, comps, result;
    cxl_desc *m_descs;
    cxl_completion *m_comps;
    cxl_kernel_result *m_result;
    xrtRunHandle run;
} xbk_set;

typedef struct xbk {
    xrtDeviceHandle dev;
    xrtKernelHandle k;
    xrtBufferHandle params, state, stats;
    cxl_stats *m_stats;
    xbk_set set[2];
    int fill;                  /* the set submit() writes to */
    int inflight;              /* the set whose run was started and not yet waited for, or -1 */
    uint32_t inflight_room;    /* max_comps of that run */
    uint64_t run_until;        /* its until (0 for an init or statistics run) */
    int run_init;              /* it was the init run */
    int noop;                  /* XCL_EMULATION_MODE=noop: XRT's shim runs no kernel */
    uint32_t requesters;
    int dead;                  /* a run timed out: the card may still be running it; nothing more is started */
    uint32_t nbatch;
    uint32_t pending[CXL_MAX_REQ];
    cxl_comp_ring ring;
    cxl_kernel_result last;    /* the result record of the latest finished run */
    cxl_err deferred;          /* a failure met where it could not be returned */
    unsigned timeout_ms;
    unsigned fault;            /* cxl_xrt_fault, for tests */
    uint64_t runs;             /* kernel runs started */
} xbk;

static const char *shim_of(const char *mode)
{
    if (!mode || !*mode)
        return "libxrt_core.so.2";
    if (!strcmp(mode, "noop"))
        return "libxrt_noop.so.2";
    if (!strcmp(mode, "hw_emu"))
        return "libxrt_hwemu.so.2";
    if (!strcmp(mode, "sw_emu"))
        return "libxrt_swemu.so.2";
    return NULL;
}

int cxl_xrt_env_check(cxl_err *err)
{
    const char *mode = getenv("XCL_EMULATION_MODE");
    const char *shim = shim_of(mode);
    if (!shim)
        return cxl_errf(err, CXL_EBACKEND,
                        "xrt backend: XCL_EMULATION_MODE is '%s'; valid: unset (a card), noop, hw_emu, sw_emu", mode);
    const char *root = getenv("XILINX_XRT");
    if (!root || !*root)
        return cxl_errf(err, CXL_EBACKEND,
                        "xrt backend: XILINX_XRT is not set, and XRT would abort the process: run "
                        "'source /opt/xilinx/xrt/setup.sh' (AMD's XRT), or with Debian's libxrt "
                        "'eval \"$(scripts/xrt-env.sh)\"' (docs/xrt.md)");
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/lib/%s", root, shim);
    if (n < 0 || (size_t)n >= sizeof path)
        return cxl_errf(err, CXL_EBACKEND, "xrt backend: XILINX_XRT is too long");
    if (access(path, R_OK))
        return cxl_errf(err, CXL_EBACKEND,
                        "xrt backend: XILINX_XRT=%s has no %s (XRT loads %s for %s%s and would abort the process "
                        "without it): point XILINX_XRT at the XRT install, or with Debian's libxrt run "
                        "'eval \"$(scripts/xrt-env.sh)\"' (docs/xrt.md)",
                        root, path, shim, mode && *mode ? "XCL_EMULATION_MODE=" : "a card",
                        mode && *mode ? mode : "");
    return 0;
}

/* "3", "0000:3b:00.1" (domain:bus:device.function, hex) */
static int card_kind(const char *s, unsigned *index)
{
    if (!s || !*s) {
        *index = 0;
        return 'i';
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*end && !errno && v < 64 && s[0] >= '0' && s[0] <= '9') {
        *index = (unsigned)v;
        return 'i';
    }
    unsigned a, b, c, d;
    char tail;
    if (strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &a, &b, &c, &d, &tail) == 4 && s[4] == ':' &&
        s[7] == ':' && s[10] == '.')
        return 'b';
    return 0;
}

static int xerr(cxl_err *err, int code, const char *what)
{
    return cxl_errf(err, code, "xrt backend: %s failed (XRT's reason is on stderr)", what);
}

static void set_free(xbk_set *s)
{
    if (s->run)
        xrtRunClose(s->run);
    if (s->descs)
        xrtBOFree(s->descs);
    if (s->comps)
        xrtBOFree(s->comps);
    if (s->result)
        xrtBOFree(s->result);
}

static void xbk_free(xbk *x)
{
    /* after a timeout too: a handle left open makes XRT 2.13 crash at process exit, when its handle maps
     * are destroyed out of order; the card itself needs 'xbutil reset' */
    for (int i = 0; i < 2; i++)
        set_free(&x->set[i]);
    if (x->params)
        xrtBOFree(x->params);
    if (x->state)
        xrtBOFree(x->state);
    if (x->stats)
        xrtBOFree(x->stats);
    if (x->k)
        xrtKernelClose(x->k);
    if (x->dev)
        xrtDeviceClose(x->dev);
    free(x);
}

static xrtBufferHandle bo_new(xbk *x, int arg, size_t size, void **map, cxl_err *err)
{
    int grp = xrtKernelArgGroupId(x->k, arg);
    if (grp < 0) {
        xerr(err, CXL_EDEVICE, "the xclbin connects no memory bank to the kernel's pointer arguments");
        return NULL;
    }
    /* whole 4 KiB pages: XRT allocates a buffer's host side with aligned_alloc(4096, size), which C11
     * allows only for a size that is a multiple of the alignment (ASan refuses the others) */
    size = (size + 4095) & ~(size_t)4095;
    xrtBufferHandle bo = xrtBOAlloc(x->dev, size, XCL_BO_FLAGS_NONE, (xrtMemoryGroup)grp);
    if (!bo) {
        char what[96];
        snprintf(what, sizeof what, "allocating %zu bytes of card memory (bank group %d)", size, grp);
        xerr(err, CXL_EDEVICE, what);
        return NULL;
    }
    *map = xrtBOMap(bo);
    if (!*map) {
        xerr(err, CXL_EDEVICE, "mapping a card buffer");
        xrtBOFree(bo);
        return NULL;
    }
    /* defined contents on both sides (XRT does not clear a new buffer) */
    memset(*map, 0, size);
    if (xrtBOSync(bo, XCL_BO_SYNC_BO_TO_DEVICE, size, 0)) {
        xerr(err, CXL_EDEVICE, "copying to the card");
        xrtBOFree(bo);
        return NULL;
    }
    return bo;
}

static int sync_bo(xrtBufferHandle bo, enum xclBOSyncDirection dir, size_t size, cxl_err *err)
{
    if (size && xrtBOSync(bo, dir, size, 0))
        return xerr(err, CXL_EDEVICE, dir == XCL_BO_SYNC_BO_TO_DEVICE ? "copying to the card" : "copying from the card");
    return 0;
}

static const char *state_name(enum ert_cmd_state s)
{
    switch (s) {
    case ERT_CMD_STATE_NEW: return "new";
    case ERT_CMD_STATE_QUEUED: return "queued";
    case ERT_CMD_STATE_RUNNING: return "running";
    case ERT_CMD_STATE_COMPLETED: return "completed";
    case ERT_CMD_STATE_ERROR: return "error";
    case ERT_CMD_STATE_ABORT: return "aborted";
    case ERT_CMD_STATE_SUBMITTED: return "submitted";
    case ERT_CMD_STATE_TIMEOUT: return "timeout";
    case ERT_CMD_STATE_NORESPONSE: return "no response";
    default: return "unknown";
    }
}

/* Set every argument of set s's run and start it. */
static int start_run(xbk *x, int s, uint32_t init, uint32_t n_descs, uint64_t until, uint32_t stop, uint32_t max_comps,
                     uint32_t want_stats, cxl_err *err)
{
    xbk_set *S = &x->set[s];
    if (n_descs && sync_bo(S->descs, XCL_BO_SYNC_BO_TO_DEVICE, n_descs * sizeof(cxl_desc), err))
        return err->code;
    int rc = 0;
    rc |= xrtRunSetArg(S->run, CXLK_ARG_PARAMS, x->params);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_STATE, x->state);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_INIT, init);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_DESCS, S->descs);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_N_DESCS, n_descs);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_UNTIL, until);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_STOP, stop);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_COMPS, S->comps);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_MAX_COMPS, max_comps);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_RESULT, S->result);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_STATS, x->stats);
    rc |= xrtRunSetArg(S->run, CXLK_ARG_WANT_STATS, want_stats);
    if (rc)
        return xerr(err, CXL_EDEVICE, "setting the kernel's arguments (does the xclbin's kernel have cxl_kernel()'s "
                    "12 arguments?)");
    if (xrtRunStart(S->run))
        return xerr(err, CXL_EDEVICE, "starting the kernel");
    x->inflight = s;
    x->runs++;
    x->inflight_room = max_comps;
    x->run_until = init ? 0 : until;
    x->run_init = init != 0;
    return 0;
}

/* Wait for the run in flight, if any, and take its result record and completions. */
static int settle(xbk *x, cxl_err *err)
{
    if (x->dead)
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: an earlier kernel run did not finish; reopen the backend");
    if (x->inflight < 0)
        return 0;
    xbk_set *S = &x->set[x->inflight];
    enum ert_cmd_state st = xrtRunWaitFor(S->run, x->timeout_ms);
    if (x->fault == CXL_XRT_FAULT_HANG && x->runs > 1)
        st = ERT_CMD_STATE_RUNNING;
    if (st != ERT_CMD_STATE_COMPLETED) {
        if (st == ERT_CMD_STATE_RUNNING || st == ERT_CMD_STATE_QUEUED || st == ERT_CMD_STATE_SUBMITTED ||
            st == ERT_CMD_STATE_NEW || st == ERT_CMD_STATE_TIMEOUT) {
            x->dead = 1;
            return cxl_errf(err, CXL_EDEVICE,
                            "xrt backend: kernel run at model cycle %llu did not finish within %u ms (state %s): the "
                            "card or its xclbin is hung; reset it with 'xbutil reset' (docs/xrt.md)",
                            (unsigned long long)x->last.now, x->timeout_ms, state_name(st));
        }
        x->inflight = -1;
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: kernel run at model cycle %llu ended in state %s",
                        (unsigned long long)x->last.now, state_name(st));
    }
    x->inflight = -1;
    if (sync_bo(S->result, XCL_BO_SYNC_BO_FROM_DEVICE, sizeof(cxl_kernel_result), err))
        return err->code;
    cxl_kernel_result r = *S->m_result;
    if (r.n_comps > x->inflight_room)
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: the kernel reported %u completions for room %u", r.n_comps,
                        x->inflight_room);
    if (r.n_comps) {
        if (sync_bo(S->comps, XCL_BO_SYNC_BO_FROM_DEVICE, r.n_comps * sizeof(cxl_completion), err))
            return err->code;
        memcpy(&x->ring.c[cxl_comp_ring_tail(&x->ring)], S->m_comps, r.n_comps * sizeof(cxl_completion));
        cxl_comp_ring_added(&x->ring, r.n_comps);
    }
    /* a run stops at until, at a completion, or when its completion room is full (cxl_kernel.h): one that
     * did none of these is not the kernel (XRT's no-op shim runs nothing and leaves the record as it was) */
    if (x->run_until > x->last.now && r.now <= x->last.now && !r.n_comps && r.status == CXL_KST_OK)
        return cxl_errf(err, CXL_EDEVICE,
                        "xrt backend: the kernel ran no cycle (cycle %llu, asked for %llu) and returned no completion: "
                        "the card did not run cxl_kernel (XCL_EMULATION_MODE=%s)",
                        (unsigned long long)x->last.now, (unsigned long long)x->run_until,
                        getenv("XCL_EMULATION_MODE") ? getenv("XCL_EMULATION_MODE") : "unset");
    /* a reset model is at cycle 0, idle, with every queue free. Under the no-op shim, which runs no kernel,
     * this is not checked, so that the rest of the call sequence can be tested (tests/cxl/test_xrt.c); its
     * first advance then stops at the check above */
    if (x->run_init && !x->noop) {
        int ok = r.status == CXL_KST_OK && r.now == 0 && r.idle == 1;
        for (uint32_t q = 0; q < x->requesters && q < CXL_MAX_REQ; q++)
            ok &= r.space[q] == CXL_DESCQ;
        if (!ok)
            return cxl_errf(err, CXL_EDEVICE,
                            "xrt backend: after its reset the kernel reports status %u, cycle %llu, idle %u and %u free "
                            "descriptor slots at requester 0 (a reset model: 0, 0, 1, %u): the card did not run "
                            "cxl_kernel", r.status, (unsigned long long)r.now, r.idle, r.space[0], CXL_DESCQ);
    }
    x->last = r;
    switch (r.status) {
    case CXL_KST_OK:
        return 0;
    case CXL_KST_DESC_REFUSED:
        return cxl_errf(err, CXL_EINTERNAL, "FPGA model refused a descriptor (queue full)");
    case CXL_KST_MODEL_ERROR:
        return cxl_errf(err, CXL_EINTERNAL, "FPGA model internal bound exceeded (code %u) at cycle %llu", r.model_error,
                        (unsigned long long)r.now);
    default:
        return cxl_errf(err, CXL_EDEVICE, "FPGA kernel status %u (AXI bus error) at cycle %llu", r.status,
                        (unsigned long long)r.now);
    }
}

/* settle() from a call that cannot return an error: keep the first failure for the next advance/stats */
static void settle_quiet(xbk *x)
{
    if (x->deferred.code)
        return;
    cxl_err e;
    cxl_err_clear(&e);
    if (settle(x, &e))
        x->deferred = e;
}

static int take_deferred(xbk *x, cxl_err *err)
{
    if (!x->deferred.code)
        return 0;
    if (err)
        *err = x->deferred;
    int code = x->deferred.code;
    if (!x->dead)
        cxl_err_clear(&x->deferred);
    return code;
}

static int open_device(xbk *x, const cxl_backend_opts *o, cxl_err *err)
{
    unsigned index = 0;
    int kind = card_kind(o->xrt_card, &index);
    if (!kind)
        return cxl_errf(err, CXL_EUSAGE, "xrt backend: card '%s': give an index (0, 1, ...) or a PCIe BDF like "
                        "0000:3b:00.1 ('xbutil examine' lists them)", o->xrt_card);
    if (!o->xclbin || !*o->xclbin)
        return cxl_errf(err, CXL_EUSAGE, "xrt backend: no xclbin: give --xclbin FILE or 'xclbin:' in the experiment's "
                        "cxl: section (hw/fpga/build.sh builds one)");
    FILE *f = fopen(o->xclbin, "rb");
    if (!f)
        return cxl_errf(err, CXL_EIO, "xrt backend: cannot read xclbin %s: %s", o->xclbin, strerror(errno));
    fclose(f);
    int rc = cxl_xrt_env_check(err);
    if (rc)
        return rc;
    /* XRT reports failures by return value; errno is not reliable (left at ENOENT after a success, 0
     * after most failures), and XRT prints its own reason on stderr */
    x->dev = kind == 'b' ? xrtDeviceOpenByBDF(o->xrt_card) : xrtDeviceOpen(index);
    if (!x->dev) {
        if (kind == 'b')
            return cxl_errf(err, CXL_EDEVICE, "xrt backend: no FPGA card at PCIe %s: 'xbutil examine' lists the cards "
                            "XRT sees", o->xrt_card);
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: no FPGA card at index %u: 'xbutil examine' lists the cards XRT "
                        "sees; is the xocl driver loaded?", index);
    }
    if (xrtDeviceLoadXclbinFile(x->dev, o->xclbin))
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: the card refused xclbin %s: not an xclbin, or not built for "
                        "this card's platform (shell)?", o->xclbin);
    xuid_t uuid;
    if (xrtDeviceGetXclbinUUID(x->dev, uuid))
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: reading the loaded xclbin's UUID failed");
    x->k = xrtPLKernelOpen(x->dev, uuid, XBK_KERNEL);
    if (!x->k)
        return cxl_errf(err, CXL_EDEVICE, "xrt backend: xclbin %s has no kernel '%s': build it with hw/fpga/build.sh",
                        o->xclbin, XBK_KERNEL);
    /* the register map the host relies on: every argument where cxl_kernel_regs.h (HLS layout, RTL map) has it */
    static const uint32_t off[CXLK_NARGS] = { CXLK_PARAMS, CXLK_STATE,     CXLK_INIT,   CXLK_DESCS,
                                              CXLK_N_DESCS, CXLK_UNTIL,    CXLK_STOP,   CXLK_COMPS,
                                              CXLK_MAX_COMPS, CXLK_RESULT, CXLK_STATS,  CXLK_WANT_STATS };
    for (int i = 0; i < CXLK_NARGS; i++) {
        uint32_t got = xrtKernelArgOffset(x->k, i);
        if (got != off[i])
            return cxl_errf(err, CXL_EDEVICE, "xrt backend: xclbin %s: kernel argument %d is at register 0x%x, cxlsim "
                            "expects 0x%x (hw/hls/cxl_kernel_regs.h): the xclbin is from another version of the "
                            "kernel", o->xclbin, i, got, off[i]);
    }
    return 0;
}

static int xbk_open(cxl_backend *b, const cxl_params *p, cxl_err *err)
{
    xbk *x = calloc(1, sizeof *x);
    if (!x)
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the xrt backend");
    x->inflight = -1;
    x->timeout_ms = b->opts.xrt_timeout_ms ? b->opts.xrt_timeout_ms : CXL_XRT_TIMEOUT_MS;
    x->fault = b->opts.xrt_fault;
    x->requesters = p->requesters;
    const char *mode = getenv("XCL_EMULATION_MODE");
    x->noop = mode && !strcmp(mode, "noop");
    int rc = open_device(x, &b->opts, err);
    void *m;
    if (!rc && !(x->params = bo_new(x, CXLK_ARG_PARAMS, sizeof(cxl_params), &m, err)))
        rc = err->code;
    if (!rc) {
        memcpy(m, p, sizeof *p);
        rc = sync_bo(x->params, XCL_BO_SYNC_BO_TO_DEVICE, sizeof *p, err);
    }
    /* `state` is never accessed by either kernel (both keep the model on chip: cxl_kernel.h); the argument
     * still needs a buffer of the bank it is connected to, and one page is the least XRT hands out. */
    if (!rc && !(x->state = bo_new(x, CXLK_ARG_STATE, XBK_STATE_BYTES, &m, err)))
        rc = err->code;
    if (!rc && !(x->stats = bo_new(x, CXLK_ARG_STATS, sizeof(cxl_stats), &m, err)))
        rc = err->code;
    if (!rc)
        x->m_stats = m;
    for (int s = 0; !rc && s < 2; s++) {
        xbk_set *S = &x->set[s];
        if (!(S->descs = bo_new(x, CXLK_ARG_DESCS, XBK_BATCH * sizeof(cxl_desc), &m, err)))
            rc = err->code;
        S->m_descs = m;
        if (!rc && !(S->comps = bo_new(x, CXLK_ARG_COMPS, CXL_COMP_RING * sizeof(cxl_completion), &m, err)))
            rc = err->code;
        S->m_comps = m;
        if (!rc && !(S->result = bo_new(x, CXLK_ARG_RESULT, sizeof(cxl_kernel_result), &m, err)))
            rc = err->code;
        S->m_result = m;
        if (!rc && !(S->run = xrtRunOpen(x->k)))
            rc = xerr(err, CXL_EDEVICE, "opening a run of the kernel");
    }
    /* reset the model on the card (init = 1) */
    if (!rc)
        rc = start_run(x, 0, 1, 0, 0, 0, 0, 0, err);
    if (!rc)
        rc = settle(x, err);
    if (rc) {
        xbk_free(x);
        return rc;
    }
    b->impl = x;
    return 0;
}

static int xbk_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err)
{
    xbk *x = b->impl;
    if (x->nbatch + n > XBK_BATCH)
        return cxl_errf(err, CXL_ELIMIT, "too many descriptors between advances");
    /* straight into the set not in flight: the card may be running the other one */
    for (size_t i = 0; i < n; i++) {
        x->set[x->fill].m_descs[x->nbatch++] = d[i];
        x->pending[d[i].requester]++;
    }
    return 0;
}

static uint32_t xbk_space(cxl_backend *b, uint32_t r)
{
    xbk *x = b->impl;
    settle_quiet(x);
    if (r >= CXL_MAX_REQ)
        return 0;
    uint32_t s = x->last.space[r];
    return s > x->pending[r] ? s - x->pending[r] : 0;
}

static int xbk_advance(cxl_backend *b, uint64_t until, int stop, cxl_err *err)
{
    xbk *x = b->impl;
    int rc = settle(x, err);
    if (!rc)
        rc = take_deferred(x, err);
    if (rc)
        return rc;
    if (x->ring.count && (stop || x->ring.count >= CXL_COMP_RING))
        return 0;
    if (until > x->last.now + XBK_RUN_CYCLES)
        until = x->last.now + XBK_RUN_CYCLES;
    /* completions land at the start of the set's buffer, and go to the ring's tail when the run is taken */
    uint32_t room = cxl_comp_ring_make_room(&x->ring); /* one range at the tail: settle() copies them in one piece */
    rc = start_run(x, x->fill, 0, x->nbatch, until, (uint32_t)stop, room, 0, err);
    if (rc)
        return rc;
    x->fill ^= 1;
    x->nbatch = 0;
    memset(x->pending, 0, sizeof x->pending);
    return 0;
}

static uint64_t xbk_now(cxl_backend *b)
{
    xbk *x = b->impl;
    settle_quiet(x);
    return x->last.now;
}

static size_t xbk_poll(cxl_backend *b, cxl_completion *out, size_t max)
{
    xbk *x = b->impl;
    settle_quiet(x);
    return cxl_comp_ring_poll(&x->ring, out, max);
}

static int xbk_stats(cxl_backend *b, cxl_stats *out, cxl_err *err)
{
    xbk *x = b->impl;
    int rc = settle(x, err);
    if (!rc)
        rc = take_deferred(x, err);
    /* a model error was reported by the advance that met it; like csim, the statistics are still read */
    if (rc && rc != CXL_EINTERNAL)
        return rc;
    /* nothing submitted (the batch waits for the next advance), no cycle run, nothing drained */
    rc = start_run(x, x->fill ^ 1, 0, 0, 0, 0, 0, 1, err);
    if (!rc)
        rc = settle(x, err);
    if (rc && rc != CXL_EINTERNAL)
        return rc;
    rc = sync_bo(x->stats, XCL_BO_SYNC_BO_FROM_DEVICE, sizeof *out, err);
    if (rc)
        return rc;
    memcpy(out, x->m_stats, sizeof *out);
    return 0;
}

static int xbk_idle(cxl_backend *b)
{
    xbk *x = b->impl;
    settle_quiet(x);
    return x->nbatch == 0 && x->inflight < 0 && x->last.idle;
}

static void xbk_close(cxl_backend *b)
{
    xbk *x = b->impl;
    if (x->inflight >= 0 && !x->dead) {
        cxl_err e;
        settle(x, &e);
    }
    xbk_free(x);
}

const cxl_backend_ops cxl_backend_xrt_ops = {
    "xrt", "libxrt-dev", xbk_open, xbk_submit, xbk_space, xbk_advance, xbk_now, xbk_poll, xbk_stats, xbk_idle,
    xbk_close, NULL,
};
