/* trace.h - descriptor traces: a stream of cxl_desc read from a CSV file, or drawn at random.
 *
 * A trace is the workload `cxlsim compare` runs on two backends (host/devtools/compare.h): descriptors in file
 * order, each for one requester. The file format (docs/compare.md, "Trace format"):
 *
 *     # comment lines and blank lines are skipped
 *     requester,bytes,pattern,mix,base
 *     0,4K,seq,2:1,0x0
 *     1,64,random,1:0,1G
 *
 * A header line names the columns (any order); `requester` and `bytes` are required, every other column
 * is optional with a default (id: the descriptor's position from 1; base, footprint, not_before, stride,
 * seed, gap_cycles: 0; pattern: seq; max_outstanding: the device's tags; rd_weight 1, wr_weight 0, or a
 * `mix` column R:W instead of the two weights). An empty cell takes the default. Numbers are decimal or
 * 0x-hex; byte quantities (bytes, base, footprint, stride) may end in K, M, G, T (or KiB, MiB, GiB, TiB;
 * binary multiples).
 *
 * Every descriptor is checked as it is read, against the device it will run on: the field checks of
 * cxl_desc_check (requester within the device's count, bytes a positive multiple of 64, aligned base,
 * max_outstanding within the tags, ...), ids unique, weights not both 0. Errors are CXL_ECONFIG with
 * file:line:column pointing at the offending cell (or the header) and saying what would be valid; a
 * missing or unreadable file is CXL_EIO; more than TRACE_MAX_DESCS descriptors, or a line longer than
 * TRACE_MAX_LINE, is CXL_ELIMIT at its line. Nothing prints; a failed load leaves *out empty.
 *
 * Memory: 64 bytes per descriptor plus 4 for its source line (10 M descriptors: about 700 MB).
 */
#ifndef CXLSIM_TRACE_H
#define CXLSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "../hw/hls/cxl_types.h"
#include "util/err.h"

#define TRACE_MAX_DESCS 10000000u /* descriptors per trace */
#define TRACE_MAX_LINE 4096u      /* characters per line */

typedef struct trace {
    cxl_desc *d;       /* n descriptors in trace order */
    uint32_t *line;    /* source line of each (NULL for generated traces) */
    size_t n, cap;
} trace;

/* Read a trace file, checking every descriptor against p. */
int trace_load(const char *path, const cxl_params *p, trace *out, cxl_err *err);
/* The same from text in memory; `name` stands for the file in error messages. */
int trace_parse(const char *text, size_t len, const char *name, const cxl_params *p, trace *out, cxl_err *err);

/* n descriptors drawn from `seed` for a device with parameters p: every requester, all three patterns,
 * read:write mixes from all-read to all-write, 64 B to 16 KiB transfers, footprints, strides, random
 * bases below 4 GiB, gaps between issues, max_outstanding from 1 to the tags, and about one in eight
 * descriptors held back with a not_before in the near future. Ids are 1..n. Deterministic: the same
 * (p->requesters, p->tags, seed, n) give the same stream. CXL_ELIMIT beyond TRACE_MAX_DESCS. */
int trace_random(const cxl_params *p, uint64_t seed, size_t n, trace *out, cxl_err *err);

/* The trace as CSV text in the format trace_parse reads, every column written (malloc'd, NUL-terminated;
 * *len without the NUL). trace_parse of the text gives back the same descriptors. */
int trace_to_csv(const trace *t, char **text, size_t *len, cxl_err *err);

void trace_free(trace *t);

#endif
