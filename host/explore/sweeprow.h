/* sweeprow.h - one point of a sweep as a row: running it, and writing rows as CSV and JSON lines.
 *
 * A row is a line of cells separated by tabs (a tab, a newline or a backslash inside a cell is written
 * \t, \n, \\): the point's number, its value of every axis (in the sweep's order), then the command's
 * columns (sweeprow_column): the status; for train and memory the layout in effect (dp derived when not
 * given), every headline result of `train` and the memory per GPU of its largest pipeline stage; for
 * probe the idle latencies, their ratio, the four bandwidths and the simulated cycles; and the reason of
 * a point that did not run. A status is
 *   ok           the point ran (command train: the iteration; memory: the estimate, which fits)
 *   invalid      the configuration is refused (a layout that does not fit the model or the cluster, ...)
 *   infeasible   it does not fit in memory (HBM, or CXL with offloads): memory columns are filled
 *   error        the run failed otherwise (a limit of the engine, a backend)
 *   crashed      its worker process died (sweeprun.h)
 * and the reason is the message a single `cxlsim train` run prints for it, without "cxlsim: ". Empty
 * cells are results that do not apply. Numbers are printed as the JSON outputs print them (%.10g), so
 * the same point gives the same row on any run.
 */
#ifndef CXLSIM_SWEEPROW_H
#define CXLSIM_SWEEPROW_H

#include <stdint.h>
#include <stdio.h>

#include "explore/sweep.h"

/* The columns after the point and the axes, by command. Status is the first, the reason the last. */
enum sweeprow_col { SWEEPROW_STATUS, SWEEPROW_TP, SWEEPROW_PP, SWEEPROW_DP, SWEEPROW_MICRO_BATCH,
                    SWEEPROW_GLOBAL_BATCH, SWEEPROW_ITERATION, SWEEPROW_TOKENS, SWEEPROW_MFU, SWEEPROW_BK0,
                    SWEEPROW_MEM0 = SWEEPROW_BK0 + 6, SWEEPROW_HBM = SWEEPROW_MEM0 + 5, SWEEPROW_REASON,
                    SWEEPROW_NCOLS };
/* command probe: the device's figures (`cxlsim probe`'s JSON members) */
enum sweeprow_probe_col { SWEEPROW_P_STATUS, SWEEPROW_P_IDLE, SWEEPROW_P_LOCAL_IDLE, SWEEPROW_P_RATIO,
                          SWEEPROW_P_BW0, SWEEPROW_P_CYCLES = SWEEPROW_P_BW0 + 4, SWEEPROW_P_REASON,
                          SWEEPROW_P_NCOLS };
enum { SWEEPROW_MAX_COLS = SWEEPROW_NCOLS };

int sweeprow_ncols(const sweep_spec *sp);
const char *sweeprow_column(const sweep_spec *sp, int col);
/* 1 when a column's cells are numbers (JSON numbers, not strings): all but the status and the reason */
int sweeprow_numeric(const sweep_spec *sp, int col);
/* The column the summary ranks by, smallest first: iteration_time_s (train), total_gib (memory),
 * idle_read_latency_ns (probe). */
int sweeprow_rank_column(const sweep_spec *sp);

/* Run one point in this process and make its row (malloc'd, no newline); NULL when out of memory. */
char *sweeprow_eval(const sweep_spec *sp, const override_list *global, uint64_t point);
/* The row of a point that produced none: status crashed or error, with the reason. */
char *sweeprow_failed(const sweep_spec *sp, uint64_t point, const char *status, const char *reason);

/* Split a row into its cells (unescaped, in buf's memory, malloc'd with *cells); returns the count, or
 * -1 when out of memory. */
int sweeprow_split(const char *row, char ***cells);
/* The point number of a row (its first cell), or -1 when it has none. */
long long sweeprow_point(const char *row);

/* The CSV header and rows (RFC 4180 quoting), and a row as one JSON object (one line, with "inputs":
 * the axis values as strings, and null for empty cells). Return 0 or -1 (out of memory). */
int sweeprow_csv_header(FILE *f, const sweep_spec *sp);
int sweeprow_csv(FILE *f, const sweep_spec *sp, const char *row);
int sweeprow_jsonl(FILE *f, const sweep_spec *sp, const char *row);

#endif
