/* sweepmpi.h - spreading independent work items over the ranks of an MPI job (`mpirun -np N`, `srun`).
 *
 * The items are numbered by the caller (a sweep's point numbers; the layouts of a search) and each is
 * evaluated alone into one line of text (no newline), so the result of an item does not depend on which
 * rank ran it. Rank 0 coordinates: it hands the items out in chunks, on request, to ranks 1..N-1 (who
 * evaluate each chunk as they like: a sweep runs it on its local pool of worker processes, sweeprun.h),
 * stores every line at its item's place and calls `done` on each as it arrives (a journal, progress),
 * then writes the outputs itself. Rank 0 evaluates nothing and sleeps while it waits (polling every
 * millisecond), so it can share a core or a node with a worker rank. A round is one list of items;
 * several rounds (a search's screening, then its detailed re-run) may follow before sweepmpi_finish.
 *
 * Open MPI is an optional dependency (CMake option CXLSIM_MPI, libopenmpi-dev): without it every
 * function here is built, sweepmpi_built() is 0, and a run started by an MPI launcher with several
 * ranks is refused by sweepmpi_require with how to build with MPI. MPI is initialised only under a
 * launcher with several ranks, never for a plain run.
 *
 * Messages (tags): a worker asks with the lines of its last chunk (TAG_RESULT: "WANT\n" then one line
 * per item) or reports its failure (TAG_FAIL: the message); rank 0 answers with the next chunk of item
 * numbers (TAG_WORK: uint64 each; empty: the round is over). Before a round rank 0 broadcasts the
 * round's parameters (opaque bytes for the evaluator; a flag that says whether a round follows at all).
 * Cost: one round trip per chunk, O(items) bytes of item numbers and the lines' bytes.
 */
#ifndef CXLSIM_SWEEPMPI_H
#define CXLSIM_SWEEPMPI_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum { SWEEPMPI_MAX_PARAMS = 4096 };

/* How this process was started, from the launcher's environment (OMPI_COMM_WORLD_SIZE/_RANK of
 * Open MPI's mpirun; PMI_SIZE/PMI_RANK of MPICH's and Slurm's PMI-2; PMIX_RANK with SLURM_STEP_NUM_TASKS of
 * `srun --mpi=pmix`). size 1, rank 0 when not started by a launcher (or started as its only rank). */
typedef struct sweepmpi_launch {
    int size;
    int rank;
    char from[48];        /* the variable that gave the size ("OMPI_COMM_WORLD_SIZE=4"), "" when none */
} sweepmpi_launch;

void sweepmpi_launch_get(sweepmpi_launch *l);
/* 1 when cxlsim was built with MPI. */
int sweepmpi_built(void);
/* 0 when this process can take part: a plain run, one rank, or MPI built in. Otherwise CXL_EBACKEND,
 * saying that every rank would run the whole `what` ("sweep", "search"), and how to build with MPI. */
int sweepmpi_require(const sweepmpi_launch *l, const char *what, cxl_err *err);

/* Initialise MPI (once; later calls only check) and check that the job has the ranks the launcher
 * said: CXL_EBACKEND otherwise (`srun` without a PMI plugin makes each process a job of its own). Rank 0
 * calls it before writing anything, so that such a run fails before it starts; the functions below
 * call it too. */
int sweepmpi_start(cxl_err *err);

/* A worker rank's evaluator: the lines of items[0..n) into out[0..n) (malloc'd, one line each, no
 * newline), given the round's parameters. 0, or a CXL_E* code with err filled (the run stops). */
typedef int (*sweepmpi_eval_fn)(void *ctx, const void *params, size_t plen, const uint64_t *items, size_t n,
                                char **out, cxl_err *err);

/* Ranks 1..N-1: initialise MPI, evaluate the chunks of every round (asking `want` items at a time)
 * until rank 0 finishes, finalise MPI. Returns 0 then, also when an evaluation here failed (the failure
 * went to rank 0, which reports it). Otherwise a failure of MPI (sweepmpi_start's included) or of memory
 * that keeps this rank from taking part: report it and exit without
 * MPI_Finalize; the launcher then ends the job. */
int sweepmpi_serve(sweepmpi_eval_fn eval, void *ctx, size_t want, cxl_err *err);

/* Rank 0: one round. Initialises MPI on the first round, broadcasts params (at most SWEEPMPI_MAX_PARAMS
 * bytes), hands out items[0..n) and stores the line of items[k] in out[k], calling done(dctx, k, out[k])
 * as each arrives. A non-zero return of done, or a worker's failure (its message prefixed "rank R: "),
 * stops the round: workers get no more items, lines filled so far stay, the error is returned. After any
 * error, report it and exit without sweepmpi_finish: the launcher ends the job. */
int sweepmpi_spread(const uint64_t *items, size_t n, const void *params, size_t plen,
                    int (*done)(void *dctx, size_t k, const char *line), void *dctx, char **out, cxl_err *err);
/* Rank 0, after the last round: tell the workers no round follows and finalise MPI (a no-op when MPI was
 * not initialised). */
int sweepmpi_finish(cxl_err *err);

#endif
