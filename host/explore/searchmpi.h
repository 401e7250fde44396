/* searchmpi.h - `mpirun -np N cxlsim search EXPERIMENT`: a search's rounds spread over the ranks of an MPI
 * job (issue 32, item 4), on the plumbing of sweepmpi.h.
 *
 * Rank 0 runs the search itself (search.h): it enumerates and checks every layout, computes the bounds,
 * decides which layouts each round runs and which are pruned, ranks and reports, exactly as a local run.
 * Only the rounds' engine runs move: rank 0 broadcasts the round's layouts (at most SEARCH_ROUND), with the
 * stage, the backend and the fingerprint of the experiment it loaded, and hands them out on request; every
 * other rank runs the layouts it gets on its own `jobs` worker processes (search_eval_batch) and sends their
 * results back as text lines, each double in C99's hexadecimal form (%a), so that rank 0 reads back the very
 * bits a local run would have computed. So the report, CSV and JSON are those of the local run byte for
 * byte, apart from the wall times. Every rank loads the experiment from the same files (a shared file
 * system); a rank whose resolved experiment differs from rank 0's (its FNV-1a, cfgdump.h) stops the run.
 *
 * Cost per round: a broadcast of about 1 KiB, one request and one answer per chunk of `jobs` layouts (the
 * results: about 300 bytes per layout), and rank 0's 1-ms naps while it waits (sweepmpi.h). The rounds stay
 * sequential (each one's pruning depends on the last), so at most SEARCH_ROUND layouts run at once, however
 * many ranks and workers there are (docs/scale-out.md).
 */
#ifndef CXLSIM_SEARCHMPI_H
#define CXLSIM_SEARCHMPI_H

#include <stdint.h>

#include "util/err.h"
#include "config/expcfg.h"
#include "explore/search.h"

typedef struct searchmpi {
    int ranks;               /* ranks that run layouts: 0 in a plain run */
    int failed;              /* a round failed: the ranks may be mid-round, so no searchmpi_finish */
    uint64_t fingerprint;    /* of the resolved experiment (expcfg_dump) */
} searchmpi;

/* Call once the experiment is loaded and the outputs checked, before anything is written. A plain run
 * (or a launcher's only rank): 0, m->ranks 0, o unchanged. Rank 0 of several: MPI initialised and checked
 * (sweepmpi_start), o->batch set to spread the rounds over the other ranks. Ranks 1..N-1: run the layouts
 * rank 0 hands out on `o->jobs` worker processes each, then exit the process with status 0; return only a
 * failure that keeps this rank from taking part (report it and exit). CXL_EBACKEND under a launcher with
 * several ranks when MPI is not built in, with how to build it (sweepmpi_require); CXL_ENOMEM. */
int searchmpi_setup(searchmpi *m, const expcfg *base, search_opts *o, cxl_err *err);

/* Rank 0 after search_run, once: tell the other ranks that no round follows and finalise MPI. A no-op in a
 * plain run and after a failed round (then rank 0 reports the error and exits; the launcher ends the job). */
int searchmpi_finish(searchmpi *m, cxl_err *err);

/* One layout's result as one line of text (no newline; malloc'd; NULL when out of memory) and back: every
 * field, the doubles exact, the reason with '\' and newlines escaped. line_eval returns 0, or -1 for a line
 * that is not such a result. */
char *searchmpi_eval_line(const search_eval *ev);
int searchmpi_line_eval(const char *line, search_eval *ev);

#endif
