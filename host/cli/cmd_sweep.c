/* cmd_sweep.c - `cxlsim sweep SPEC`: an experiment (or a device's probe) over axes of --set values,
 * one worker process per point (sweeprun.h), journalled for --resume (sweepjournal.h); the rows and
 * the summary are report_sweep.h. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/report_sweep.h"
#include "explore/sweepjournal.h"
#include "explore/sweeprun.h"

enum { O_CSV = 1, O_JSONL, O_JOBS, O_RESUME };

static const cli_opt sweep_opts[] = {
    { O_CSV, "csv", 0, "FILE", "the rows as CSV (default: standard output, when --jsonl is not given)" },
    { O_JSONL, "jsonl", 0, "FILE", "the rows as JSON lines" },
    { O_JOBS, "jobs", 'j', "N", "points at once, each in a worker process (default: the CPUs online)" },
    { O_RESUME, "resume", 0, NULL, "continue an interrupted sweep from its journal (FILE.partial)" },
    CLI_OPT_SET,
    CLI_OPT_END,
};

typedef struct sweep_args {
    const char *spec, *csv, *jsonl;
    int have_spec, jobs, resume;
} sweep_args;

static int sweep_opt(void *ctx, int id, const char *val)
{
    sweep_args *a = ctx;
    if (id == CLI_ARG)
        return cli_one_operand("sweep", "SPEC", val, &a->spec, &a->have_spec);
    if (id == O_CSV)
        a->csv = val;
    else if (id == O_JSONL)
        a->jsonl = val;
    else if (id == O_RESUME)
        a->resume = 1;
    else {
        long long j = cli_whole(val, 1, SWEEPRUN_MAX_JOBS);
        if (j < 0)
            return cli_usage("sweep", "sweep: -j: '%s' is not a number of worker processes from 1 to %d", val,
                             SWEEPRUN_MAX_JOBS);
        a->jobs = (int)j;
    }
    return 0;
}

/* A sweep's base (an experiment with its files, or a device) is an input too. */
static int check_sweep_outputs(const char *const *out, size_t n, const sweep_spec *sp, const override_list *ov,
                               cxl_err *e)
{
    if (sp->command == SWEEP_PROBE)
        return cli_check_device_outputs(out, n, sp->base, e);
    expcfg *x = malloc(sizeof *x);
    if (!x)
        return cxl_errf(e, CXL_ENOMEM, "out of memory");
    /* loaded whole for its CXL device file; a base whose own layout is refused (a sweep's points
     * change it) is bound only, as the sweep loaded it */
    int rc = expcfg_load_with(sp->base, ov, 0, x, e);
    if (rc)
        rc = expcfg_load_with(sp->base, ov, EXPCFG_BIND_ONLY, x, e);
    if (!rc)
        rc = cli_check_experiment_outputs(out, n, x, e);
    free(x);
    return rc;
}

typedef struct sweep_ctx {
    const sweep_spec *sp;
    const size_t *todo_ix;      /* todo index -> index into sp->points */
    char **rows;                /* per index into sp->points */
    FILE *journal;
    const char *journal_path;
    size_t done, total;
    double t0, last;
    int progress, shown;
    cxl_err *e;
    size_t stop_after;          /* tests: SIGTERM to this process after that many points (0: never) */
} sweep_ctx;

static int sweep_done(void *ctx, size_t k, const char *row)
{
    sweep_ctx *c = ctx;
    c->done++;
    (void)k;
    if (c->journal && sweepjournal_add(c->journal, c->journal_path, row, c->e))
        return c->e->code;
    if (c->stop_after && c->done == c->stop_after)
        raise(SIGTERM);
    double t = cli_now_s();
    if (c->progress && (t - c->last >= 0.2 || c->done == c->total)) {
        double rate = c->done / (t - c->t0 > 1e-9 ? t - c->t0 : 1e-9);
        c->last = t;
        c->shown = 1;
        fprintf(stderr, "\rcxlsim: sweep %zu/%zu points, %.1f points/s, ETA %.0f s   ", c->done, c->total, rate,
                (double)(c->total - c->done) / rate);
        fflush(stderr);
    }
    return 0;
}

/* The rows already in the journal (with --resume), and the journal opened for the rest. */
static int sweep_journal(sweep_ctx *c, const char *jpath, int resume, size_t *got, FILE *so, cxl_err *e)
{
    if (!jpath[0]) {
        if (resume)
            return cxl_errf(e, CXL_EUSAGE, "sweep: --resume needs --csv or --jsonl naming a regular file, beside "
                            "which the journal of an interrupted sweep is kept");
        return 0;
    }
    if (access(jpath, F_OK) == 0) {
        if (!resume)
            return cxl_errf(e, CXL_EUSAGE, "sweep: %s exists: the journal of an interrupted sweep; --resume "
                            "continues it (remove it to start afresh)", jpath);
        int rc = sweepjournal_read(jpath, c->sp, c->rows, got, e);
        if (rc)
            return rc;
        fprintf(so, "sweep: resuming from %s: %zu of %zu points done\n", jpath, *got, c->sp->npoints);
    } else if (resume)
        fprintf(so, "sweep: no journal %s: running every point\n", jpath);
    c->journal_path = jpath;
    return sweepjournal_open(jpath, c->sp, &c->journal, e);
}

/* The points not in the journal, run; every row written and summarised. */
static int sweep_execute(const sweep_args *a, sweep_spec *sp, const cli_ctx *cl, FILE *so, cxl_err *e)
{
    char jpath[1100];
    sweepjournal_path(a->csv && strcmp(a->csv, "-") ? a->csv : a->jsonl, jpath, sizeof jpath);
    char **rows = calloc(sp->npoints, sizeof *rows);
    size_t *todo_ix = malloc(sp->npoints * sizeof *todo_ix);
    uint64_t *todo = malloc(sp->npoints * sizeof *todo);
    char **fresh = calloc(sp->npoints, sizeof *fresh);
    sweep_ctx c = { sp, todo_ix, rows, NULL, NULL, 0, 0, cli_now_s(), 0, isatty(2), 0, e, 0 };
    size_t got = 0, n = 0;
    int rc = rows && todo_ix && todo && fresh ? 0 : cxl_errf(e, CXL_ENOMEM, "out of memory");
    if (!rc)
        rc = sweep_journal(&c, jpath, a->resume, &got, so, e);
    for (size_t k = 0; !rc && k < sp->npoints; k++)
        if (!rows[k])
            todo_ix[n] = k, todo[n++] = sp->points[k];
    c.total = n;
    /* test hooks (tests/cli/sweep.sh): a worker that crashes, a sweep interrupted after N points */
    const char *crash = getenv("CXLSIM_TEST_SWEEP_CRASH"), *stop = getenv("CXLSIM_TEST_SWEEP_STOP_AFTER");
    c.stop_after = stop ? (size_t)strtoull(stop, NULL, 10) : 0;
    sweeprun_opts o = { a->jobs, cl->ov, sweep_done, &c, crash ? strtoll(crash, NULL, 10) : -1 };
    if (!rc)
        rc = sweeprun_run(sp, todo, n, &o, fresh, e);
    for (size_t i = 0; i < n; i++)
        if (fresh[i])
            rows[todo_ix[i]] = fresh[i];
    if (c.shown)
        fprintf(stderr, "\r%78s\r", "");
    if (c.journal && fclose(c.journal) && !rc)
        rc = cxl_errf(e, CXL_EIO, "%s: cannot write the sweep's journal", jpath);
    if (!rc && !(rc = report_sweep_write(sp, rows, a->csv, a->jsonl, e))) {
        if (jpath[0])
            unlink(jpath);
        report_sweep_summary(so, sp, rows);
    }
    for (size_t k = 0; rows && k < sp->npoints; k++)
        free(rows[k]);
    free(rows);
    free(todo_ix);
    free(todo);
    free(fresh);
    return rc;
}

static int sweep_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    sweep_args a = { .jobs = ncpu < 1 ? 1 : ncpu > SWEEPRUN_MAX_JOBS ? SWEEPRUN_MAX_JOBS : (int)ncpu };
    int urc = cli_parse(self, argc, argv, cl, sweep_opt, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (!a.spec)
        return cli_usage("sweep", "sweep: name a sweep file (e.g. configs/sweeps/gpt3-175b-1024-layouts.yaml)");
    if (!a.csv && !a.jsonl)
        a.csv = "-";
    const char *outs[2] = { a.csv, a.jsonl };
    FILE *so = cli_summary_stream(outs, 2);
    cxl_err e;
    cxl_err_clear(&e);
    if (cli_check_outputs(outs, 2, &a.spec, 1, &e))
        return cli_fail(&e);
    sweep_spec *sp = malloc(sizeof *sp);
    if (!sp || sweep_load(a.spec, cl->ov, sp, &e)) {
        if (!sp)
            cxl_errf(&e, CXL_ENOMEM, "out of memory");
        free(sp);
        return cli_fail(&e);
    }
    // worker ranks of an MPI run serve points and leave here, before the journal: only rank 0 writes
    int rc = check_sweep_outputs(outs, 2, sp, cl->ov, &e);
    if (!rc)
        rc = sweeprun_mpi_serve(sp, cl->ov, a.jobs, &e);
    if (!rc)
        rc = sweep_execute(&a, sp, cl, so, &e);
    sweep_free(sp);
    free(sp);
    return rc ? (rc == CXL_EUSAGE ? cli_usage("sweep", "%s", e.msg) : cli_fail(&e)) : 0;
}

const cli_command cmd_sweep = {
    "sweep", "SPEC",
    "run an experiment (or probe a device) over axes of --set values",
    sweep_opts,
    "SPEC is a sweep file (configs/sweeps/, docs/sweeps.md). Infeasible points keep a single run's\n"
    "message; the rows do not depend on -j.\n",
    sweep_main,
};
