/* vkernel.h - the verilated RTL kernel (hw/rtl/cxl_kernel.v, Verilator), behind a C API.
 *
 * A handle owns its VerilatedContext and model (no state shared between handles; several may exist one
 * after another or side by side) and, when asked, an FST waveform. The caller drives the kernel's two
 * ports, s_axi_control and m_axi_gmem, one clock at a time (vkernel_clock) and lets idle stretches run
 * inside the harness (vkernel_idle), so C-to-C++ crossings stay few while the model runs.
 *
 * Nothing is thrown across this API: every C++ exception is caught and becomes VK_EINTERNAL. An RTL
 * $error/$fatal/$stop/$finish (Verilator: gotError / gotFinish, with fatalOnError off so it does not
 * abort) becomes VK_ERTL; its text, which names the source line and the unit's hierarchy, is in
 * vkernel_error() with the clock and the model cycle. After an error the handle only accepts
 * vkernel_destroy. Verilator's prints are captured into that message, not written to stdout.
 */
#ifndef CXLSIM_VKERNEL_H
#define CXLSIM_VKERNEL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "axi_lite.h"
#include "axi_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    VK_OK = 0,
    VK_ERTL = -1,      /* the RTL raised an assertion or finished */
    VK_ENOTRACE = -2,  /* an FST trace was asked of a build without tracing (CXLSIM_RTL_TRACE=OFF) */
    VK_EIO = -3,       /* the trace file cannot be written */
    VK_ENOMEM = -4,
    VK_EINTERNAL = -5, /* an exception from the harness or Verilator */
    VK_ENOFIT = -6     /* no kernel build compiled in fits the sizes, or the named build is not compiled in */
};

typedef struct vkernel vkernel;

typedef struct vkernel_opts {
    const char *trace_fst;   /* FST waveform file, or NULL: the build's traced twin runs (CMake CXLSIM_RTL_TRACE) */
    uint64_t trace_from, trace_to; /* the model cycles the waveform records (trace_to 0: all of them) */
    /* The configuration's host ports, devices and DRAM controller channels per device (cxl_params hosts,
     * devices, dram.channels; 0: not known), banks per channel (dram.ranks x bankgroups x banks) and DRAM
     * queue entries (the larger of dram.read_queue and write_queue; 0 for either: not known), and whether
     * it has a switch (sw.present). The kernel is built once per named build that CMake's
     * CXLSIM_RTL_BUILDS selects (hw/rtl/builds.txt: card-1x1, card-pool, full); a handle runs the first of
     * them, smallest first, whose sizes cover the configuration's (unknown host, device or channel
     * counts: the largest compiled in). None that fits: VK_ENOFIT, and the message names the builds
     * compiled in. */
    unsigned hosts, devices, channels, banks, queue;
    int sw;
    /* a build's name (hw/rtl/builds.txt) to run whatever the sizes, even one too small for them (every
     * kernel call then ends with model_error 4; tests), or NULL: the smallest that fits */
    const char *build;
} vkernel_opts;

/* what the host side drives into the kernel */
typedef struct vk_in {
    axil_m2s ctl;            /* s_axi_control, from the host */
    axi_s2m mem;             /* m_axi_gmem, from the memory */
} vk_in;

/* what the kernel drives */
typedef struct vk_out {
    axil_s2m ctl;
    axi_m2s mem;
    uint8_t interrupt;
} vk_out;

/* Banks per DRAM channel of a configuration (ranks x bank groups x banks), saturating at UINT_MAX: the
 * `banks` size of vkernel_opts. */
static inline unsigned vkernel_banks(unsigned ranks, unsigned groups, unsigned banks)
{
    unsigned long long n = (unsigned long long)ranks * groups;
    n = n > UINT_MAX ? UINT_MAX : n * banks;
    return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* 1 when this build can write FST waveforms. */
int vkernel_can_trace(void);
/* Create, reset (ap_rst_n low for a few clocks) and return the kernel. On failure *out is NULL, the
 * return is a VK_E* code and msg (if cap > 0) says why. */
int vkernel_create(const vkernel_opts *o, vkernel **out, char *msg, size_t cap);
void vkernel_destroy(vkernel *k);
/* One clock: drive `in`, settle, store the outputs as they are before the rising edge in *out, then the
 * edge. 0 or a VK_E* code. */
int vkernel_clock(vkernel *k, const vk_in *in, vk_out *out);
/* Up to n clocks with `in` unchanged, stopping before a clock in which the kernel drives any VALID on
 * either port or raises interrupt (so the caller answers it). *done: clocks run; *out: the outputs before
 * the next edge. 0 or a VK_E* code. */
int vkernel_idle(vkernel *k, const vk_in *in, uint64_t n, vk_out *out, uint64_t *done);
uint64_t vkernel_clocks(const vkernel *k);
/* The build this handle runs (its hw/rtl/builds.txt name, vkernel_opts). */
const char *vkernel_build(const vkernel *k);
/* The builds compiled in, smallest first, as "card-1x1, card-pool". */
const char *vkernel_builds(void);
/* The model's current cycle (cxl_model `now`). */
uint64_t vkernel_model_now(const vkernel *k);
/* The last error's message ("" if none). */
const char *vkernel_error(const vkernel *k);

#ifdef __cplusplus
}
#endif

#endif
