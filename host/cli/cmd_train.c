/* cmd_train.c - `cxlsim train [EXPERIMENT]`: one training iteration (train.h), its summary, JSON and
 * Chrome trace (report_train.h, ctrace.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "train/optimes.h"
#include "cli/report_train.h"
#include "train/train.h"

enum { O_JSON = 1, O_TRACE, O_STAGES, O_WINDOW, O_OPTIMES, O_BACKEND, O_EXACT, O_DUMP, O_QUIET };

static const cli_opt train_opts_table[] = {
    { O_JSON, "json", 0, "FILE", "write the results as JSON" },
    { O_TRACE, "trace", 0, "FILE", "write a Chrome trace (https://ui.perfetto.dev); FILE.gz: gzip-compressed" },
    { O_STAGES, "trace-stages", 0, "LIST", "trace only these pipeline stages, e.g. 0,3,5-7" },
    { O_WINDOW, "trace-window", 0, "T0:T1", "trace only that time, e.g. 2ms:3.5ms, 1s: to the end" },
    { O_DUMP, "dump-config", 0, NULL, "print the experiment after extends, overrides and defaults, and stop" },
    { O_OPTIMES, "op-times", 0, "FILE", "measured kernel times (scripts/profile_ops.py); others from the model" },
    { O_BACKEND, "backend", 0, "NAME", "CXL backend for the cxl: section (csim, analytical, verilator, xrt)" },
    { O_EXACT, "exact", 0, NULL, "CXL: simulate every cycle (no steady-state extrapolation, no memo)" },
    { O_QUIET, "quiet", 0, NULL, "no progress line (drawn on a terminal during long runs)" },
    CLI_OPTS_XRT,
    CLI_OPT_SET,
    CLI_OPT_END,
};

typedef struct train_args {
    const char *exp, *json, *trace, *stages, *window, *times, *backend;
    int have_exp, exact, dump, quiet;
    cxl_backend_opts bo;
} train_args;

static int train_opt(void *ctx, int id, const char *val)
{
    train_args *a = ctx;
    switch (id) {
    case CLI_ARG: return cli_one_operand("train", "EXPERIMENT", val, &a->exp, &a->have_exp);
    case O_JSON: a->json = val; break;
    case O_TRACE: a->trace = val; break;
    case O_STAGES: a->stages = val; break;
    case O_WINDOW: a->window = val; break;
    case O_OPTIMES: a->times = val; break;
    case O_BACKEND: a->backend = val; break;
    case O_EXACT: a->exact = 1; break;
    case O_DUMP: a->dump = 1; break;
    case O_QUIET: a->quiet = 1; break;
    default: return cli_xrt_option("train", id, val, &a->bo);
    }
    return 0;
}

/* What a run needs beyond the experiment: the trace's stages, the measured times, the outputs opened
 * (the JSON's and the trace's temporary files, committed together after the run), the resolved
 * configuration hashed in their provenance. */
typedef struct train_io {
    uint8_t *stages;
    optimes *ot;
    ctrace *ct;
    outfile *of[2];
    char *cfg;
    size_t clen;
} train_io;

static void train_io_free(train_io *io)
{
    free(io->stages);
    optimes_free(io->ot);
    free(io->cfg);
}

/* 0, or an error in e; a malformed --trace-stages is a usage error (*usage set). */
static int train_prepare(const train_args *a, const expcfg *x, int64_t w0, int64_t w1, const cli_ctx *cl,
                         train_io *io, int *usage, cxl_err *e)
{
    if (a->stages) {
        if (!(io->stages = malloc(x->train.pp)))
            return cxl_errf(e, CXL_ENOMEM, "out of memory");
        if (ctrace_parse_stages(a->stages, (uint32_t)x->train.pp, io->stages, e)) {
            *usage = 1;
            return e->code;
        }
    }
    if (a->times && optimes_load(a->times, &io->ot, 1, e))
        return e->code;
    if (a->json && outfile_open(a->json, &io->of[0], e))
        return e->code;
    if ((a->json || a->trace) && !(io->cfg = cli_resolved_experiment(x, &io->clen)))
        return cxl_errf(e, CXL_ENOMEM, "out of memory");
    if (a->trace && ctrace_open(&io->ct, a->trace, w0, w1, e))
        return e->code;
    if (io->ct)
        return cli_trace_provenance(io->ct, cl, io->cfg, io->clen, e);
    return 0;
}

/* The run, then its report and outputs, all or none. */
static int train_execute(const train_args *a, expcfg *x, int64_t w0, int64_t w1, const cli_ctx *cl)
{
    const char *outs[2] = { a->json, a->trace };
    FILE *so = cli_summary_stream(outs, 2);
    cxl_err e;
    cxl_err_clear(&e);
    train_io io = { 0 };
    int usage = 0;
    int rc = train_prepare(a, x, w0, w1, cl, &io, &usage, &e);
    if (usage) {
        train_io_free(&io);
        return cli_usage("train", "train: %s", e.msg);
    }
    cli_progress pc = { cli_now_s(), 0, 0, "simulating... %5.1f%% of pipeline passes" };
    train_opts o = { io.ot, io.ct, isatty(2) && !a->quiet ? cli_progress_cb : NULL, &pc, a->exact, a->backend,
                     a->bo, io.stages };
    train_result r;
    double t0 = cli_now_s();
    if (!rc)
        rc = train_run(x, &o, &r, &e);
    double wall = cli_now_s() - t0;
    cli_progress_clear(&pc);
    if (rc)
        ctrace_abort(io.ct);
    else if (io.ct && (rc = ctrace_end(io.ct, &io.of[1], &e)) != 0)
        train_result_free(&r);
    if (rc) {
        outfile_finish_all(io.of, 2, rc, &e);
        train_io_free(&io);
        return cli_fail(&e);
    }
    report_train_text(so, x, &r, a->times, a->exact, wall);
    json_w w;
    json_init(&w);
    if (a->json) {
        json_obj_begin(&w, NULL);
        cli_json_provenance(&w, cl, io.cfg, io.clen);
        report_train_json(&w, x, &r, a->exact, wall);
        json_obj_end(&w);
    }
    rc = cli_write_outputs(rc, outs, io.of, &w, io.cfg, NULL, 0, &e);
    io.cfg = NULL; /* freed there */
    train_result_free(&r);
    train_io_free(&io);
    return rc ? cli_fail(&e) : 0;
}

static int train_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    train_args a = { .exp = EXPCFG_DEFAULT };
    int urc = cli_parse(self, argc, argv, cl, train_opt, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (a.backend && !cli_backend_known(a.backend))
        return cli_usage("train", "train: unknown backend '%s' (run 'cxlsim backends')", a.backend);
    const char *outs[2] = { a.json, a.trace }, *ins[2] = { a.exp, a.times };
    cxl_err e;
    cxl_err_clear(&e);
    if ((a.stages || a.window) && !a.trace)
        return cli_usage("train", "train: --trace-stages and --trace-window need --trace FILE");
    int64_t w0 = 0, w1 = INT64_MAX;
    if (a.window && ctrace_parse_window(a.window, &w0, &w1, &e))
        return cli_usage("train", "train: %s", e.msg);
    if (cli_check_outputs(outs, 2, ins, 2, &e))
        return cli_fail(&e);
    expcfg *x = NULL;
    if (cli_load_experiment(a.exp, cl->ov, &x, &e))
        return cli_fail(&e);
    int rc;
    if (cli_check_experiment_outputs(outs, 2, x, &e) || cli_check_file_outputs(outs, 2, a.times, &e))
        rc = cli_fail(&e);
    else if (a.dump)
        rc = expcfg_dump(stdout, x) ? 6 : 0;
    else
        rc = train_execute(&a, x, w0, w1, cl);
    free(x);
    return rc;
}

const cli_command cmd_train = {
    "train", "[EXPERIMENT]",
    "simulate one training iteration: time, tokens/s, MFU, breakdown, memory",
    train_opts_table,
    "EXPERIMENT is a YAML file or a preset name (cxlsim presets experiments; default\n"
    "llama2-7b-2x8-h100). docs/training.md; docs/hybrid.md for an experiment with a cxl: section.\n",
    train_main,
};
