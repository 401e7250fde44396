/* search.h - `cxlsim search`: every parallel layout of an experiment's model on its cluster, ranked by
 * iteration time (issue 32, item 3).
 *
 * The dimensions (enum search_dim) are those the engine (train.h) supports today: tensor parallelism
 * (tp: the divisors of the GPUs), pipeline parallelism (pp: the divisors of GPUs / tp), data parallelism
 * (dp = GPUs / (tp x pp x cp), derived), sequence parallelism (sp, only with tp > 1), interleaved virtual
 * stages (the divisors of layers / pp, > 1 only with pp > 1), micro-batch (the divisors of global_batch /
 * dp), recomputation (none, selective, full), ZeRO stage (0-3) and, with a `cxl:` section, the offload
 * policy (offload_optimizer none / cpu / gpu x offload_activations x offload_parameters, parameters only
 * with the optimizer: cxlcfg.h's rule; with activations offloaded the engine never recomputes, so only
 * recompute none) and context parallelism (cp: the divisors of GPUs / (tp x pp), dp = GPUs / (tp x pp x
 * cp); varied only where the experiment could run it, flash attention and a dense model, so the searches
 * of the unfused validation experiments are those of before). A dimension not varied keeps the
 * experiment's value. Expert parallelism is not searched yet: one more entry of enum search_dim and one
 * more nested loop in search_enumerate (experts dividing ep).
 *
 * Stages, each counting what it removes:
 *   1. check: every layout through expcfg_check_layout (parallel.h's rules and messages) and the memory
 *      model (tiers.h: HBM and CXL capacity, with their messages); O(1) each, no allocation;
 *   2. screen: the feasible layouts through the engine (train_run), with the CXL traffic on the
 *      `analytical` backend (latency + size / bandwidth). Before running one, a lower bound of its
 *      iteration time is computed from the kernel times of the compute stream (compute.h, exactly the
 *      durations the engine charges): the last pipeline stage runs m x v chunks of forward, recomputation
 *      and backward kernels plus the head (and the embedding when pp is 1), and cannot start before the
 *      forward of pp - 1 chunks (the first with the embedding) nor end before their backward and the first
 *      stage's optimizer step (the GPU's Adam kernel, or the CPU's at cpu_adam_rate); tensor-parallel
 *      collectives count at the fabric's bandwidth without latency; with CXL memory, the bytes the stages
 *      wait for over the domain's peak (the optimizer step's transfers, every domain's bytes in all, a
 *      domain's optimizer bytes after its stages' earliest possible step: search.c, bound_cxl); every
 *      other part of the iteration (communication, bubbles, CXL latency and contention) only adds.
 *      Layouts are run in order of that bound; one is skipped when its bound exceeds both the iteration
 *      time of the top-th best run so far and (with CXL memory, for stage 3) the rerun-th best of the
 *      layouts that offload. So the ranking, with the ranks of the re-run layouts, is the one running
 *      every feasible layout would give (`exhaustive` runs them all; a run faster than its bound is an
 *      internal error). Layouts run
 *      in rounds of SEARCH_ROUND, split over `jobs` forked processes (or, under `mpirun`, over the ranks of
 *      an MPI job: searchmpi.h): which ones run does not depend on jobs or ranks;
 *   3. rerun: the `rerun` best of the screen that offload something to CXL, again with the cycle-level
 *      backend (csim), when the experiment has CXL memory (a layout that offloads nothing moves no CXL
 *      traffic, so its time is the same on every backend); they are ranked again among themselves and
 *      the report says how the order moved.
 * Ties rank by enumeration order. Results are deterministic: independent of jobs and of time.
 *
 * Errors: CXL_EUSAGE for options out of range; CXL_ECONFIG when no layout is valid (the message names
 * the constraint that excluded the most and the counts per constraint are in the report); CXL_EINTERNAL
 * when a worker process fails; CXL_ENOMEM. Engine errors of one layout are that layout's rejection.
 */
#ifndef CXLSIM_SEARCH_H
#define CXLSIM_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "config/expcfg.h"
#include "config/override.h"
#include "train/train.h"

enum search_dim { SEARCH_TP, SEARCH_PP, SEARCH_SP, SEARCH_VIRTUAL_STAGES, SEARCH_MICRO_BATCH, SEARCH_RECOMPUTE,
                  SEARCH_ZERO, SEARCH_OFFLOAD, SEARCH_CP, SEARCH_NDIMS };
extern const char *const search_dim_names[]; /* "tp", "pp", "sp", "virtual_stages", ... "offload", "cp" */
#define SEARCH_ALL_DIMS ((1u << SEARCH_NDIMS) - 1)

enum { SEARCH_ROUND = 16, SEARCH_MAX_JOBS = 256, SEARCH_MAX_TOP = 1000, SEARCH_MAX_RERUN = 64,
       SEARCH_MAX_REASONS = 32, SEARCH_MAX_LAYOUTS = 2000000 };

/* One layout: the values search sets in the experiment's training and cxl sections. */
typedef struct search_layout {
    uint64_t tp, pp, dp, virtual_stages, micro_batch, zero, cp;
    uint8_t sp, recompute, offload_optimizer, offload_activations, offload_parameters;
} search_layout;

/* One engine run of a layout. */
typedef struct search_eval {
    int rc;                              /* 0, or the CXL_E* code of train_run (reason says why) */
    int64_t iteration_ps;
    double breakdown_s[TRAIN_BK_N];
    double tokens_per_s, mfu;
    uint64_t events, cxl_cycles;         /* the engine's events and CXL cycles simulated in detail: its cost */
    char reason[1024];                   /* the engine's message (no location) when rc != 0 */
} search_eval;

typedef struct search_entry {
    uint64_t index;                      /* enumeration order */
    search_layout l;
    int64_t bound_ps;                    /* the lower bound of stage 2 */
    double hbm_bytes, cxl_bytes_per_gpu; /* per GPU, largest stage (tiers.h) */
    search_eval screen;                  /* stage 2 */
    search_eval rerun;                   /* stage 3 (when has_rerun) */
    int has_rerun;
    uint32_t screen_rank, rerun_rank;    /* 1-based; rerun_rank among the re-run ones */
} search_entry;

/* Layouts excluded for one reason: the text of the message before its first ':' ("training.tp", "out of
 * GPU memory"), the count and the first one's layout and whole message. */
typedef struct search_reason {
    char key[96];
    uint64_t count;
    search_layout first;
    char example[1024];
} search_reason;

typedef struct search_opts {
    unsigned top;                        /* layouts in the ranking (1..SEARCH_MAX_TOP) */
    unsigned rerun;                      /* re-run with the detailed backend (0..SEARCH_MAX_RERUN) */
    unsigned vary;                       /* bit mask of enum search_dim; 0 means all */
    int jobs;                            /* worker processes for stages 2 and 3 (1..SEARCH_MAX_JOBS) */
    int exhaustive;                      /* run every feasible layout (no bound pruning) */
    const char *screen_backend;          /* NULL: "analytical" */
    const char *rerun_backend;           /* NULL: "csim" */
    /* called after each round: stage 2 or 3, layouts run so far, the most that may be run */
    void (*progress)(void *ctx, int stage, uint64_t done, uint64_t most);
    void *progress_ctx;
    /* Where each round runs: NULL on `jobs` local worker processes (search_eval_batch); searchmpi.h spreads
     * it over the ranks of an MPI job. Fills en[i]->screen (stage 2) or ->rerun (3) as search_eval_batch
     * would; a non-zero return stops the search with that code. */
    int (*batch)(void *ctx, const expcfg *base, search_entry **en, size_t n, int stage, const char *backend,
                 cxl_err *err);
    void *batch_ctx;
} search_opts;

typedef struct search_report {
    uint64_t enumerated;                 /* stage 1 */
    uint64_t invalid, infeasible, feasible;
    uint64_t screened, pruned, failed;   /* stage 2: run, skipped by the bound, the engine refused */
    uint64_t violations;                 /* runs faster than their bound (must be 0) */
    uint64_t screen_events, screen_cxl_cycles; /* summed over the layouts that ran well (stage 2) */
    uint64_t rerun;                      /* stage 3 */
    int cxl;                             /* the experiment has CXL memory */
    unsigned vary;                       /* the dimensions varied (no offload without CXL) */
    search_reason reasons[SEARCH_MAX_REASONS]; /* by count, largest first (ties: first seen) */
    size_t nreasons;
    uint64_t reasons_other;              /* exclusions beyond SEARCH_MAX_REASONS distinct reasons */
    search_entry *best;                  /* ranked by the screen, at most max(top, rerun) */
    size_t nbest;
    double wall_s[3];                    /* per stage (not part of the deterministic results) */
    char screen_backend[16], rerun_backend[16];
} search_report;

void search_default_opts(search_opts *o);

/* Every layout of base's model on its cluster along the dimensions of vary (0: all), in enumeration
 * order (malloc'd into *out). CXL_ELIMIT beyond SEARCH_MAX_LAYOUTS, CXL_ENOMEM. */
int search_enumerate(const expcfg *base, unsigned vary, search_layout **out, size_t *n, cxl_err *err);
/* Set a layout in x (a copy of the base) and check it as loading does (expcfg_check_layout). */
int search_apply(expcfg *x, const search_layout *l, cxl_err *err);
/* The --set overrides that make the base into this layout (training.tp=4, ..., cxl.offload_optimizer=cpu). */
int search_layout_overrides(const expcfg *base, const search_layout *l, override_list *ov, cxl_err *err);
/* "tp 4 pp 8 dp 32 v 1 mb 1 sp recompute selective zero 1" (and the offloads with CXL memory; " cp 2" when
 * cp > 1). */
void search_layout_format(const search_layout *l, int cxl, char *buf, size_t sz);

/* The lower bound of stage 2 for a checked layout (x as search_apply left it), in ps; negative: an error
 * code (a kernel that cannot be priced). */
int64_t search_bound_ps(const expcfg *x, cxl_err *err);

int search_run(const expcfg *base, const search_opts *o, search_report *r, cxl_err *err);

/* One round on this machine: the layouts en[i]->l through the engine with backend, the results into
 * en[i]->screen (stage 2) or en[i]->rerun (stage 3), on up to `jobs` forked worker processes (worker k of w
 * runs entries k, k + w, ...). A layout's result depends on base, its layout and backend alone. 0, or
 * CXL_EINTERNAL when a worker cannot be started or ends without its results, CXL_ENOMEM. */
int search_eval_batch(const expcfg *base, search_entry **en, size_t n, int jobs, int stage, const char *backend,
                      cxl_err *err);
void search_report_free(search_report *r);

#endif
