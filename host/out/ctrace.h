/* ctrace.h - a Chrome trace (JSON object format, as Perfetto and chrome://tracing load it) streamed to an
 * output file as events are produced, optionally gzip-compressed.
 *
 * What it owns: a 1 MiB formatting buffer, the output file (outfile.h: "-" is standard output, links are
 * written through, a device/FIFO/socket in place, a regular file through a temporary file that the
 * signal handlers of outfile.h remove, renamed on commit) and, for a name ending in ".gz", a parallel gzip compressor (pgz.h,
 * one worker thread per online CPU, deflate level 2: the trace is repetitive, level 2 gives about 9:1
 * at the speed of level 1). Memory is O(1) in the number of events (a few MiB per worker).
 *
 * Time. Callers give integer picoseconds. Each endpoint is floored to whole nanoseconds and printed as
 * microseconds with exactly three decimals ("ts": 1184.084, "dur": 92.569), by integer arithmetic, and
 * dur is end_ns - start_ns. Flooring is monotonic, so slices that nest or are disjoint in picoseconds
 * still nest or are disjoint as printed, and every value is exactly representable as the integer
 * nanoseconds Perfetto stores. (Printing ts and dur separately as rounded doubles is what made slices
 * overlap partially before: 991.88867 + 192.195803 = 1184.0844730000001 > the next slice's 1184.084473.)
 * No "displayTimeUnit" key: some Perfetto versions read it as the unit of ts.
 *
 * Window. Events outside [t0_ps, t1_ps] are dropped; slices that cross an edge are clipped to it
 * (clipping is monotonic too, so nesting survives); each counter's value at the start is written there.
 * Metadata is always written.
 *
 * Tracks. A track is (pid, tid). Slices on one track must nest or be disjoint: activities that may
 * overlap (concurrent sends, a transfer and its prefetch) go through ctrace_lanes, which places each
 * slice on the first lane of its group free at its start and names new lanes as they appear.
 *
 * Errors. The first failure (a write, the disk full, out of memory) is kept: later calls do nothing,
 * ctrace_failed() says so, and ctrace_finish returns it (CXL_EIO / CXL_ENOMEM) with nothing left behind.
 * Nothing prints.
 */
#ifndef CXLSIM_CTRACE_H
#define CXLSIM_CTRACE_H

#include <stdint.h>

#include "util/err.h"
#include "out/outfile.h"

typedef struct ctrace ctrace;

/* One entry of a slice's "args": a number, an unsigned integer or a string. */
typedef struct ctrace_arg {
    const char *key;
    enum { CTRACE_U64, CTRACE_NUM, CTRACE_STR } type;
    uint64_t u;
    double d;
    const char *s;
} ctrace_arg;

/* Open path for writing (gzip when it ends in ".gz") and write the header. The window is
 * [t0_ps, t1_ps]; 0 and INT64_MAX for all of it. CXL_EIO, CXL_ENOMEM. */
int ctrace_open(ctrace **out, const char *path, int64_t t0_ps, int64_t t1_ps, cxl_err *err);
/* Non-zero (the error code) once a write has failed; the error is copied to err when err is not NULL. */
int ctrace_failed(const ctrace *ct, cxl_err *err);
/* 1 when [t0, t1] meets the window (callers may skip building args otherwise). */
int ctrace_in_window(const ctrace *ct, int64_t t0_ps, int64_t t1_ps);

/* Run-level metadata: json_object is the text of a JSON object (`{...}`: the provenance members of the
 * JSON outputs, README "Provenance"), written as the trace's top-level "otherData" after the events
 * (Perfetto shows it under the trace's metadata; chrome://tracing as "metadata"). Copied; a later call
 * replaces it. CXL_ENOMEM. */
int ctrace_other_data(ctrace *ct, const char *json_object, size_t len, cxl_err *err);

/* Metadata: a process's or a thread's name (and its sort index, so tracks appear in pid/tid order). */
void ctrace_process(ctrace *ct, uint32_t pid, const char *name);
void ctrace_thread(ctrace *ct, uint32_t pid, uint32_t tid, const char *name);
/* A complete slice ("ph":"X") [t0_ps, t1_ps] with a category and nargs args (args may be NULL). */
void ctrace_slice(ctrace *ct, uint32_t pid, uint32_t tid, const char *cat, const char *name, int64_t t0_ps,
                  int64_t t1_ps, const ctrace_arg *args, uint32_t nargs);
/* A counter sample ("ph":"C"): series series[i] of counter `name` of process pid is v[i] from t_ps on,
 * for i < n (Perfetto shows one track per series, "name series"). Each counter's samples come in time
 * order. With a window, the last sample before it is written at the window's start (a value that holds
 * into the window shows from its first instant); names up to 63 bytes, 4 series of 31. */
void ctrace_counter(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                    uint32_t n, int64_t t_ps);
/* One end of a flow arrow: start (ph "s") on the slice that encloses t_ps on track (pid, tid), or finish
 * (ph "f", binding to the enclosing slice). Both ends carry the same id and cat. */
void ctrace_flow(ctrace *ct, int start, uint64_t id, uint32_t pid, uint32_t tid, const char *cat, const char *name,
                 int64_t t_ps);

/* Close the JSON, flush, and commit the file (rename over the destination). On any error so far, or
 * now, nothing is left behind and the error is returned. Frees ct in every case. */
int ctrace_finish(ctrace *ct, cxl_err *err);
/* ctrace_finish without the commit: the complete trace's output file is handed to *f, for the caller
 * to commit together with the run's other outputs (outfile_finish_all), or abort. On error *f is NULL
 * and nothing is left behind. Frees ct in every case. */
int ctrace_end(ctrace *ct, outfile **f, cxl_err *err);
/* Give up: remove the temporary file and free ct (NULL is fine). */
void ctrace_abort(ctrace *ct);

/* Command-line values. A window "T0:T1" with times as configurations write them ("2ms:3.5ms",
 * "0:1s", "1500us:"; an empty T1 is the end of the run), T0 < T1. A stage list "0,3,5-7" into
 * mask[0..nstages-1] (1 = traced), every stage below nstages. CXL_ECONFIG saying what is wrong. */
int ctrace_parse_window(const char *s, int64_t *t0_ps, int64_t *t1_ps, cxl_err *err);
int ctrace_parse_stages(const char *s, uint32_t nstages, uint8_t *mask, cxl_err *err);

/* A group of lanes (threads tid0, tid0 + 1, ...) of process pid for activities that may overlap. */
typedef struct ctrace_lanes {
    uint32_t pid, tid0, n, cap;
    const char *name;       /* lane k is named "<name>" (k = 0) or "<name> #k+1" */
    int64_t *end_ps;        /* end of the last slice on each lane */
} ctrace_lanes;

/* The tid of the first lane whose last slice ended at or before t0_ps (a new lane, named, when none
 * did); its end becomes t1_ps. By induction every lane holds a sequence of disjoint slices. O(lanes). */
uint32_t ctrace_lane(ctrace *ct, ctrace_lanes *L, int64_t t0_ps, int64_t t1_ps);
void ctrace_lanes_free(ctrace_lanes *L);

#endif
