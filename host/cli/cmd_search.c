/* cmd_search.c - `cxlsim search [EXPERIMENT]`: every parallel layout of the experiment ranked by
 * iteration time (search.h); the report is report_search.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/report_search.h"
#include "explore/search.h"
#include "explore/searchmpi.h"

enum { O_TOP = 1, O_RERUN, O_VARY, O_JOBS, O_EXHAUSTIVE, O_RERUN_BACKEND, O_JSON, O_CSV, O_QUIET };

static const cli_opt search_opts_table[] = {
    { O_TOP, "top", 0, "N", "layouts in the ranking (default 10)" },
    { O_RERUN, "rerun", 0, "K", "the best K that offload to CXL run again on the cycle-level backend (default 4)" },
    { O_VARY, "vary", 0, "DIMS", "tp,pp,sp,virtual_stages,micro_batch,recompute,zero,offload,cp (default all)" },
    { O_JOBS, "jobs", 'j', "N", "layouts at once, each in a worker process (default: the CPUs online)" },
    { O_EXHAUSTIVE, "exhaustive", 0, NULL, "run every feasible layout (no lower-bound pruning; same ranking)" },
    { O_RERUN_BACKEND, "rerun-backend", 0, "NAME", "the backend of the rerun (default csim)" },
    { O_JSON, "json", 0, "FILE", "the report as JSON" },
    { O_CSV, "csv", 0, "FILE", "the ranked layouts as CSV" },
    { O_QUIET, "quiet", 0, NULL, "no progress line (drawn on a terminal)" },
    CLI_OPT_SET,
    CLI_OPT_END,
};

typedef struct search_args {
    const char *exp, *json, *csv;
    int have_exp, quiet;
    search_opts o;
} search_args;

/* "tp,pp,zero" -> a mask of search_dim; -1 when a name is unknown (printed). */
static long vary_mask(const char *list)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int d = 0; d < SEARCH_NDIMS; d++)
            if (!strcmp(tok, search_dim_names[d]))
                k = d;
        if (!strcmp(tok, "all"))
            m |= SEARCH_ALL_DIMS;
        else if (k < 0)
            return -cli_usage("search", "search: --vary: unknown dimension '%s'; valid: all, tp, pp, sp, "
                              "virtual_stages, micro_batch, recompute, zero, offload, cp (comma-separated)", tok);
        else
            m |= 1u << k;
    }
    return m ? (long)m : -cli_usage("search", "search: --vary: name at least one dimension");
}

static int search_opt(void *ctx, int id, const char *val)
{
    search_args *a = ctx;
    long long n;
    switch (id) {
    case CLI_ARG:
        return cli_one_operand("search", "EXPERIMENT", val, &a->exp, &a->have_exp);
    case O_TOP:
        if ((n = cli_whole(val, 1, SEARCH_MAX_TOP)) < 0)
            return cli_usage("search", "search: --top: '%s' is not a number of layouts from 1 to %d", val,
                             SEARCH_MAX_TOP);
        a->o.top = (unsigned)n;
        return 0;
    case O_RERUN:
        if ((n = cli_whole(val, 0, SEARCH_MAX_RERUN)) < 0)
            return cli_usage("search", "search: --rerun: '%s' is not a number of layouts from 0 to %d", val,
                             SEARCH_MAX_RERUN);
        a->o.rerun = (unsigned)n;
        return 0;
    case O_JOBS:
        if ((n = cli_whole(val, 1, SEARCH_MAX_JOBS)) < 0)
            return cli_usage("search", "search: -j: '%s' is not a number of worker processes from 1 to %d", val,
                             SEARCH_MAX_JOBS);
        a->o.jobs = (int)n;
        return 0;
    case O_VARY: {
        long m = vary_mask(val);
        if (m < 0)
            return (int)-m;
        a->o.vary = (unsigned)m;
        return 0;
    }
    case O_RERUN_BACKEND:
        if (!cli_backend_known(val))
            return cli_usage("search", "search: --rerun-backend: unknown backend '%s' (cxlsim backends lists them)",
                             val);
        a->o.rerun_backend = val;
        return 0;
    case O_EXHAUSTIVE:
        a->o.exhaustive = 1;
        return 0;
    case O_JSON:
        a->json = val;
        return 0;
    case O_CSV:
        a->csv = val;
        return 0;
    default:
        a->quiet = 1;
        return 0;
    }
}

static void progress(void *ctx, int stage, uint64_t done, uint64_t most)
{
    (void)ctx;
    fprintf(stderr, "\rcxlsim: search: %s %llu of at most %llu layouts   ", stage == 2 ? "screen" : "rerun",
            (unsigned long long)done, (unsigned long long)most);
    fflush(stderr);
}

static int search_run_cmd(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    search_args a;
    memset(&a, 0, sizeof a);
    a.exp = EXPCFG_DEFAULT;
    search_default_opts(&a.o);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a.o.jobs = cpus < 1 ? 1 : cpus > SEARCH_MAX_JOBS ? SEARCH_MAX_JOBS : (int)cpus;
    int rc = cli_parse(self, argc, argv, cl, search_opt, &a);
    if (rc)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    const char *outs[2] = { a.json, a.csv };
    cxl_err e;
    cxl_err_clear(&e);
    expcfg *x = NULL;
    searchmpi mpi;
    /* the other ranks of an MPI run serve rounds of layouts and leave in searchmpi_setup: only rank 0 writes */
    if (cli_check_outputs(outs, 2, &a.exp, 1, &e) || cli_load_experiment(a.exp, cl->ov, &x, &e) ||
        cli_check_experiment_outputs(outs, 2, x, &e) || searchmpi_setup(&mpi, x, &a.o, &e)) {
        free(x);
        return cli_fail(&e);
    }
    FILE *so = cli_summary_stream(outs, 2);
    int tty = !a.quiet && isatty(2);
    if (tty)
        a.o.progress = progress;
    search_report *r = malloc(sizeof *r);
    rc = r ? search_run(x, &a.o, r, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc)
        rc = searchmpi_finish(&mpi, &e);
    else {
        cxl_err e2;                     /* a refused search (no valid layout) ends the MPI job in order too */
        cxl_err_clear(&e2);
        searchmpi_finish(&mpi, &e2);
    }
    if (tty)
        fprintf(stderr, "\r%70s\r", "");
    if (r && (!rc || (rc == CXL_ECONFIG && r->nreasons)))
        report_search_text(so, x, &a.o, r, a.o.jobs, mpi.ranks);
    if (!rc) {
        json_w w;
        json_init(&w);
        size_t clen = 0, csvlen = 0;
        char *cfg = a.json ? cli_resolved_experiment(x, &clen) : NULL, *csv = NULL;
        if (a.json && (!cfg || report_search_json(&w, cl, cfg, clen, x, &a.o, r)))
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory writing JSON");
        else if (a.csv && !(csv = report_search_csv(&a.o, r, &csvlen)))
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory writing CSV");
        rc = cli_write_outputs(rc, outs, NULL, &w, cfg, csv, csvlen, &e); /* frees w and cfg */
        free(csv);
    }
    if (r)
        search_report_free(r);
    free(r);
    free(x);
    return rc ? cli_fail(&e) : 0;
}

const cli_command cmd_search = {
    "search", "[EXPERIMENT]",
    "every parallel layout of the experiment on its cluster, ranked by iteration time (docs/search.md)",
    search_opts_table,
    "Varies tp, pp, sp, virtual stages, micro-batch, recomputation, ZeRO and (with CXL memory) the offload\n"
    "policy; dp = GPUs / (tp x pp x cp). Layouts the engine refuses are counted by reason; the rest run in the\n"
    "order of a lower bound of their time, skipped once it cannot reach the ranking; the best that offload\n"
    "to CXL run again on the cycle-level backend. Default experiment: " EXPCFG_DEFAULT ".\n"
    "Under mpirun or srun (a build with MPI) each round's layouts run on the other ranks, the outputs the\n"
    "same (docs/scale-out.md).\n",
    search_run_cmd,
};
