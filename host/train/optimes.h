/* optimes.h - measured per-operation times, loaded from a YAML file that scripts/profile_ops.py writes
 * on a real GPU, and the list of operations to profile that `cxlsim ops` writes for it.
 *
 * Format (docs/training-config.md, "Measured operation times"):
 *
 *     # written by scripts/profile_ops.py on <GPU>
 *     gpu: NVIDIA A100-SXM4-80GB      # optional, informational
 *     source: free text                # optional, informational
 *     ops:                             # required; a sequence, may be empty
 *       - { name: fc1.fwd, dtype: bf16, batch: 1, m: 2048, n: 5504, k: 4096, time: 1.234ms }
 *       - { name: layernorm.fwd, dtype: bf16, m: 8388608, time: 45us }
 *
 * Entry keys: name (string, required), dtype (one of gpucfg_dtype_names, required), batch, m, n, k
 * (integers >= 1; m is required, batch, n and k default to 1: a memory-bound op has m = elements),
 * time (a time with a unit, > 0; required when the caller requires times), and two informational keys
 * that optimes_write_list adds for the profiler: kind (gemm or mem) and bytes (a size, HBM traffic).
 * An entry is identified by name + dtype + batch + m + n + k (op.h); the same identity twice is an
 * error naming both lines. Every error names file:line:column, the key, and what would be valid; the
 * loader is cfg.h's (duplicate keys, anchors and aliases are rejected there).
 *
 * A list without times is the profiler's input: optimes_load(..., require_times = 0) accepts it.
 */
#ifndef CXLSIM_OPTIMES_H
#define CXLSIM_OPTIMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "train/op.h"

typedef struct optimes optimes;   /* entries sorted by identity; owns its strings */

/* Load path. require_times: 1 = every entry needs a `time` (a file to price ops with), 0 = times are
 * optional (a list to profile). On success *out is the table (free with optimes_free); on error *out is
 * NULL and err says where and why (CXL_ECONFIG; CXL_EIO when unreadable; CXL_ENOMEM). O(n log n). */
int optimes_load(const char *path, optimes **out, int require_times, cxl_err *err);
void optimes_free(optimes *t);

/* 1 and *ps when an entry with op's name, dtype, batch, m, n and k has a time; else 0 (entries without
 * a time never match). Pure: no counters here, the caller counts hits and misses. O(log n). */
int optimes_lookup(const optimes *t, const op_desc *op, int64_t *ps);

/* Where the entry that optimes_lookup would use was written: 1 with the file, line and column of its
 * mapping (valid while t lives), else 0. O(log n). */
int optimes_where(const optimes *t, const op_desc *op, const char **file, int *line, int *col);

size_t optimes_count(const optimes *t);        /* entries, with or without a time */
const char *optimes_gpu(const optimes *t);     /* the `gpu` string, "" when absent */
const char *optimes_source(const optimes *t);  /* the `source` string, "" when absent */

/* Write ops[0..n) in the format above: each identity once, in first-seen order, with kind and bytes;
 * with times (times_or_NULL[i] in ps, >= 1, for ops[i]; a repeated identity keeps its first time) each
 * written as an integer number of ps, so that optimes_load gives back the same values. gpu and source
 * may be NULL (the key is left out). Returns 0; CXL_EINTERNAL for an op without a name, an unknown kind
 * or dtype, a zero size or a time < 1; CXL_ENOMEM; CXL_EIO when writing fails. O(n log n). */
int optimes_write_list(FILE *f, const op_desc *ops, size_t n, const char *gpu, const char *source,
                       const int64_t *times_or_NULL);

#endif
