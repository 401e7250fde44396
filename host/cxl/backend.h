/* backend.h - one interface for every cycle-level CXL.mem backend (C model, Verilator, FPGA via XRT).
 *
 * Shaped after Redis ae.h: a small public API over private implementations chosen by name at run time,
 * each compiled in only when its dependency is present. A backend holds one model instance whose state
 * persists across calls: callers submit descriptors from many requesters (batched), advance simulated
 * time, and collect completions and statistics. All times are model cycles (cxl_params.clk_khz).
 *
 * Flow control: each requester queues at most CXL_DESCQ descriptors; cxl_backend_space() tells how many
 * more a requester takes, and submit fails with CXL_ELIMIT rather than blocking. Completions are
 * buffered inside the backend; advance() returns early when its buffer fills, so callers loop:
 *     while (cxl_backend_now(b) < t) { cxl_backend_advance(b, t, 0, err); drain with cxl_backend_poll }
 *
 * Error handling: every call returns 0 or a negative CXL_E* code with err filled; nothing prints or
 * aborts. Same inputs give identical completions and statistics on every backend.
 */
#ifndef CXLSIM_BACKEND_H
#define CXLSIM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../hw/hls/cxl_types.h"
#include "util/err.h"

typedef struct cxl_backend cxl_backend;

/* Options of one backend instance; zero-initialised means none. */
typedef struct cxl_backend_opts {
    const char *trace_fst;   /* verilator only: write an FST waveform of the RTL to this file */
    const char *xclbin;      /* xrt only (required): the FPGA image with the cxl_kernel kernel */
    const char *xrt_card;    /* xrt only: card index ("0", the default) or PCIe BDF ("0000:3b:00.1") */
    unsigned xrt_timeout_ms; /* xrt only: wall-clock limit of one kernel run; 0: CXL_XRT_TIMEOUT_MS */
    unsigned xrt_fault;      /* xrt only, tests: enum cxl_xrt_fault (backend_xrt.h) */
    const char *rtl_build;   /* verilator only: run this kernel build (hw/rtl/builds.txt name) even where a
                                smaller one fits, or NULL: the smallest compiled in that fits (tests) */
    uint64_t trace_from, trace_to; /* verilator only: the model cycles the waveform records (trace_to 0: all) */
} cxl_backend_opts;

/* The running totals of cxl_stats that a caller polling often needs (cxlmem.c reads them after every
 * advance), without the latency histograms (128 KiB) a full cxl_stats copies. */
typedef struct cxl_counters {
    uint64_t cycles, read_bytes, write_bytes;
    cxl_dev_stats dev[CXL_MAX_DEVS];
} cxl_counters;

typedef struct cxl_backend_ops {
    const char *name;
    const char *package;  /* Debian package that provides its dependency, for "not built" errors */
    int (*open)(cxl_backend *b, const cxl_params *p, cxl_err *err);
    int (*submit)(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err);
    uint32_t (*space)(cxl_backend *b, uint32_t requester);
    int (*advance)(cxl_backend *b, uint64_t until, int stop_on_completion, cxl_err *err);
    uint64_t (*now)(cxl_backend *b);
    size_t (*poll)(cxl_backend *b, cxl_completion *out, size_t max);
    int (*stats)(cxl_backend *b, cxl_stats *out, cxl_err *err);
    int (*idle)(cxl_backend *b);
    void (*close)(cxl_backend *b);
    /* optional (NULL: taken from stats): the same totals stats would give now */
    int (*counters)(cxl_backend *b, cxl_counters *out, cxl_err *err);
} cxl_backend_ops;

/* The progress watchdog (cxl_backend_advance): a backend with work in it that completes no byte for
 * CXL_WATCHDOG_CYCLES cycles (plus twice the longest gap_cycles submitted, and never before the latest
 * not_before submitted) ends the run with CXL_ELIMIT instead of running forever. Validated descriptions
 * cannot starve the model (devcfg's timing relations); the watchdog is the net under that. */
#define CXL_WATCHDOG_CYCLES (1ull << 26)

struct cxl_backend {
    const cxl_backend_ops *ops;
    cxl_params params;
    cxl_backend_opts opts;   /* as given to cxl_backend_open_opts, for ops->open */
    void *impl;
    /* progress watchdog (backend.c): since when no byte completed, the bytes then, the longest gap and
     * the latest not_before submitted, descriptors submitted and completions polled */
    uint64_t wd_since, wd_bytes, wd_gap, wd_quiet, wd_submitted, wd_polled;
};

/* Names of all backends this build knows, built or not (NULL-terminated). */
const char *const *cxl_backend_names(void);
/* 1 if the named backend is compiled in. */
int cxl_backend_available(const char *name);
/* "built in", "not built (dependency missing)" or "not in this version yet (dependency installed)". */
const char *cxl_backend_status(const char *name);
/* The verilator backend's kernel builds compiled in, smallest first ("card-1x1, card-pool": CMake's
 * CXLSIM_RTL_BUILDS, hw/rtl/builds.txt); "" for every other backend and where it is not built. */
const char *cxl_backend_rtl_builds(const char *name);
/* 1 when backend `name` can write an FST waveform (verilator, compiled with CMake's CXLSIM_RTL_TRACE: a
 * traced twin of each kernel build, run only when asked), else 0. */
int cxl_backend_can_trace(const char *name);
/* The kernel clocks the RTL has run since the backend opened (verilator: the verilated kernel's, the host
 * protocol's included; docs/rtl.md "Simulation speed"); 0 for a backend without one. */
uint64_t cxl_backend_kernel_clocks(cxl_backend *b);

int cxl_backend_open(const char *name, const cxl_params *p, cxl_backend **out, cxl_err *err);
/* Same with options (o may be NULL); an option the named backend does not take is CXL_EUSAGE. */
int cxl_backend_open_opts(const char *name, const cxl_params *p, const cxl_backend_opts *o, cxl_backend **out,
                          cxl_err *err);
/* The options of o (may be NULL) that backend `name` takes; the others cleared (for callers that open
 * several backends with one set of options). */
cxl_backend_opts cxl_backend_opts_for(const char *name, const cxl_backend_opts *o);
/* Validate then queue n descriptors (all or none). */
int cxl_backend_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err);
uint32_t cxl_backend_space(cxl_backend *b, uint32_t requester);
/* Advance to cycle `until`; stops early when a completion is buffered (stop_on_completion) or the
 * completion buffer is full. On return every completion before cxl_backend_now() is ready for poll,
 * unless the buffer is full (poll, then advance again; compare relies on this). CXL_ELIMIT from the progress watchdog (CXL_WATCHDOG_CYCLES) when work is
 * queued or in flight and nothing has completed for that long. */
int cxl_backend_advance(cxl_backend *b, uint64_t until, int stop_on_completion, cxl_err *err);
uint64_t cxl_backend_now(cxl_backend *b);
size_t cxl_backend_poll(cxl_backend *b, cxl_completion *out, size_t max);
int cxl_backend_stats(cxl_backend *b, cxl_stats *out, cxl_err *err);
/* The counters of cxl_backend_stats (cycles, bytes, per-device figures), identical to its; O(1) where the
 * backend provides them, else one full statistics read. */
int cxl_backend_counters(cxl_backend *b, cxl_counters *out, cxl_err *err);
/* Nothing queued or in flight. */
int cxl_backend_idle(cxl_backend *b);
void cxl_backend_close(cxl_backend *b);
const char *cxl_backend_name(const cxl_backend *b);

/* Checks shared by every backend: requester in range, bytes a positive multiple of 64, aligned base,
 * outstanding within tags, pattern known, stride and footprint sensible. */
int cxl_desc_check(const cxl_params *p, const cxl_desc *d, cxl_err *err);

/* The analytical backend's peak rate, in bytes per second, of all the devices of one instance together:
 * no transfer mix moves more through it (a bound for callers that must not simulate, e.g. the search's
 * lower bound, search.h); 0 for parameters the backend would refuse. */
double cxl_analytical_peak_Bps(const cxl_params *p);

#endif
