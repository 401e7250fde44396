/* sweeprun.h - running a sweep's points (sweep.h), each in its own worker process.
 *
 * Up to `jobs` points run at once, each in a process forked for it, which evaluates the point
 * (sweeprow_eval), writes its row to a pipe and exits; the parent reads the pipes as they fill (poll) and
 * reaps the workers. A worker that dies (a signal, an exit without a row) costs its own point only: the
 * row says `crashed` (or `error`) with how it ended. Rows do not depend on `jobs` or on the order workers
 * finish: every point is evaluated alone from the same inputs, and the caller orders rows by point.
 * O(points) forks; the parent holds one row per point.
 *
 * Under an MPI launcher with several ranks (`mpirun -np N cxlsim sweep ...`, sweepmpi.h), rank 0 hands
 * the points out in chunks of the workers' `jobs` and gathers the rows (the caller's journal, progress
 * and outputs stay on rank 0); every other rank runs its chunks on a pool of its own and ends in
 * sweeprun_mpi_serve. The rows are the same as those of a local run.
 */
#ifndef CXLSIM_SWEEPRUN_H
#define CXLSIM_SWEEPRUN_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "config/override.h"
#include "explore/sweep.h"

enum { SWEEPRUN_MAX_JOBS = 1024 };

typedef struct sweeprun_opts {
    int jobs;                                          /* 1 to SWEEPRUN_MAX_JOBS */
    const override_list *global;                       /* the command line's --set (may be NULL) */
    int (*done)(void *ctx, size_t k, const char *row); /* each row as it arrives (journal, progress);
                                                        * non-zero stops the run with that code */
    void *ctx;
    long long crash_point;     /* tests only: the worker of this point aborts (-1: none) */
} sweeprun_opts;

/* Run the points todo[0..n) and store the row of todo[k] in rows[k] (malloc'd, owned by the caller).
 * Returns 0, CXL_ENOMEM, CXL_EINTERNAL when a worker cannot be started (fork or pipe failed; err says
 * why), or the code done returned; rows filled so far stay. */
int sweeprun_run(const sweep_spec *sp, const uint64_t *todo, size_t n, const sweeprun_opts *o, char **rows,
                 cxl_err *err);

/* Call once the sweep is loaded, before anything that writes: 0 at once in a plain run, 0 on rank 0 of
 * an MPI job once MPI is initialised (sweepmpi_start).
 * On ranks 1..N-1 of an MPI job, runs the points rank 0 hands out (on `jobs` worker processes) and then
 * exits the process with status 0 (a worker rank has nothing to write; rank 0 reports failures);
 * returns only a failure that keeps this rank from taking part (sweepmpi_serve), which the caller
 * reports before exiting. CXL_EBACKEND under a launcher with several ranks when MPI is not built in,
 * with how to build it. */
int sweeprun_mpi_serve(const sweep_spec *sp, const override_list *global, int jobs, cxl_err *err);

#endif
