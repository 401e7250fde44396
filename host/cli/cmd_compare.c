/* cmd_compare.c - `cxlsim compare [DEVICE]`: one descriptor trace on two backends, the first diverging
 * event (compare.h), and the RTL's waveform around it (gtkw.h); reported by report_compare.h. Exit 8
 * when the backends differ. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "devtools/gtkw.h"
#include "cli/report_compare.h"
#include "cxl/trace.h"

enum { O_TRACE = 1, O_RANDOM, O_SEED, O_BACKENDS, O_MAX_CYCLES, O_JSON, O_SAVE_TRACE, O_TRACE_FST, O_CYCLES,
       O_QUIET };

static const cli_opt compare_opts[] = {
    { O_TRACE, "trace", 0, "FILE", "the descriptor trace (CSV, docs/compare.md)" },
    { O_RANDOM, "random", 0, "N", "instead, N random descriptors (default 1000)" },
    { O_SEED, "seed", 0, "S", "seed of --random (default 1)" },
    { O_BACKENDS, "backends", 0, "A,B", "the two backends (default csim,verilator)" },
    { O_MAX_CYCLES, "max-cycles", 0, "N", "stop at model cycle N" },
    { O_JSON, "json", 0, "FILE", "write the result as JSON" },
    { O_SAVE_TRACE, "save-trace", 0, "FILE", "write the descriptors run as a trace file" },
    { O_TRACE_FST, "trace-fst", 0, "FILE", "FST waveform of the verilator side (and FILE's .gtkw)" },
    { O_CYCLES, "cycles", 0, "A:B", "--trace-fst: model cycles A to B (default 200 before to 50 after the event)" },
    { O_QUIET, "quiet", 0, NULL, "no progress line (drawn on a terminal during long runs)" },
    CLI_OPTS_XRT,
    CLI_OPT_END,
};

typedef struct compare_args {
    const char *device, *trace, *json, *save, *fst, *backends;
    uint64_t nrandom, seed, max_cycles, win_from, win_to;
    int have_device, have_random, have_seed, have_window, quiet;
    cxl_backend_opts bo;
    char names[2][64];       /* the two backends of --backends */
    char gtkw[4096];         /* the waveform's save file */
} compare_args;

/* a non-negative decimal count (no sign, no suffix) */
static int compare_count(const char *s, uint64_t *out)
{
    if (!*s || strlen(s) > 19 || strspn(s, "0123456789") != strlen(s))
        return -1;
    *out = strtoull(s, NULL, 10);
    return 0;
}

static int compare_cycles(compare_args *a, const char *v)
{
    const char *colon = strchr(v, ':');
    char lo[24];
    if (!colon || (size_t)(colon - v) >= sizeof lo)
        return cli_usage("compare", "--cycles: '%s' is not A:B (model cycles, A <= B)", v);
    snprintf(lo, sizeof lo, "%.*s", (int)(colon - v), v);
    if (compare_count(lo, &a->win_from) || compare_count(colon + 1, &a->win_to) || a->win_from > a->win_to)
        return cli_usage("compare", "--cycles: '%s' is not A:B (model cycles, A <= B)", v);
    a->have_window = 1;
    return 0;
}

static int compare_opt(void *ctx, int id, const char *v)
{
    compare_args *a = ctx;
    switch (id) {
    case CLI_ARG: return cli_one_operand("compare", "DEVICE", v, &a->device, &a->have_device);
    case O_TRACE: a->trace = v; return 0;
    case O_QUIET: a->quiet = 1; return 0;
    case O_BACKENDS: a->backends = v; return 0;
    case O_JSON: a->json = v; return 0;
    case O_SAVE_TRACE: a->save = v; return 0;
    case O_TRACE_FST: a->fst = v; return 0;
    case O_CYCLES: return compare_cycles(a, v);
    case O_RANDOM:
        if (compare_count(v, &a->nrandom) || a->nrandom == 0 || a->nrandom > TRACE_MAX_DESCS)
            return cli_usage("compare", "--random: '%s' is not a count of descriptors (1 to 10000000)", v);
        a->have_random = 1;
        return 0;
    case O_SEED:
        if (compare_count(v, &a->seed))
            return cli_usage("compare", "--seed: '%s' is not a non-negative integer", v);
        a->have_seed = 1;
        return 0;
    case O_MAX_CYCLES:
        if (compare_count(v, &a->max_cycles) || a->max_cycles == 0)
            return cli_usage("compare", "--max-cycles: '%s' is not a positive number of cycles", v);
        return 0;
    default: return cli_xrt_option("compare", id, v, &a->bo);
    }
}

/* What the options say together: exclusions, the two backend names, the waveform's paths. 0 or the
 * usage exit status. */
static int compare_check(compare_args *a)
{
    if (a->trace && a->have_random)
        return cli_usage("compare", "compare: --trace and --random exclude each other");
    if (a->trace && a->have_seed)
        return cli_usage("compare", "compare: --seed applies to --random only");
    if (a->have_window && !a->fst)
        return cli_usage("compare", "compare: --cycles applies to --trace-fst only");
    /* --backends A,B: two names the project knows (A may equal B) */
    const char *bs = a->backends, *comma = strchr(bs, ',');
    if (!comma || comma == bs || !comma[1] || strchr(comma + 1, ',') || (size_t)(comma - bs) >= 64 ||
        strlen(comma + 1) >= 64)
        return cli_usage("compare", "--backends: '%s' is not A,B (two backend names, e.g. csim,verilator)", bs);
    snprintf(a->names[0], sizeof a->names[0], "%.*s", (int)(comma - bs), bs);
    snprintf(a->names[1], sizeof a->names[1], "%s", comma + 1);
    for (int s = 0; s < 2; s++)
        if (!cli_backend_known(a->names[s]))
            return cli_usage("compare", "unknown backend '%s'; valid: csim, analytical, verilator, xrt", a->names[s]);
    if (a->fst) { /* the waveform and its save file: FILE.fst -> FILE.gtkw, else FILE.gtkw appended */
        if (outfile_is_stdout(a->fst))
            return cli_usage("compare", "--trace-fst: '%s': the waveform is written to a file (the simulator seeks "
                             "in it)", a->fst);
        size_t n = strlen(a->fst);
        if (n + 6 > sizeof a->gtkw)
            return cli_usage("compare", "--trace-fst: the path is longer than %zu characters", sizeof a->gtkw - 6);
        int ext = n > 4 && !strcmp(a->fst + n - 4, ".fst");
        snprintf(a->gtkw, sizeof a->gtkw, "%.*s.gtkw", (int)(ext ? n - 4 : n), a->fst);
    }
    return 0;
}

/* The device and the backends ready, the trace loaded (and as CSV for --save-trace). 0 or the exit
 * status; on 0 the caller frees t and *saved. */
static int compare_setup(const compare_args *a, const char *const outs[4], devcfg *dev, cxl_params *p, trace *t,
                         char **saved, size_t *saved_len)
{
    cxl_err e;
    cxl_err_clear(&e);
    const char *ins[2] = { a->device, a->trace };
    if (cli_check_outputs(outs, 4, ins, 2, &e))
        return cli_fail(&e);
    if (devcfg_load(a->device, dev, &e) || cli_check_device_outputs(outs, 4, a->device, &e) ||
        devcfg_to_params(dev, p, &e))
        return cli_fail(&e);
    for (int s = 0; s < 2; s++) { /* not built: say so (and the package) before reading a long trace */
        cxl_backend *b;
        if (!cxl_backend_available(a->names[s]) && cxl_backend_open(a->names[s], p, &b, &e))
            return cli_fail(&e);
    }
    if ((a->bo.xclbin || a->bo.xrt_card || a->bo.xrt_timeout_ms) && strcmp(a->names[0], "xrt") &&
        strcmp(a->names[1], "xrt"))
        return cli_usage("compare", "compare: --xclbin, --card and --xrt-timeout need xrt in --backends (%s)",
                         a->backends);
    if (a->fst && !cxl_backend_can_trace(a->names[0]) && !cxl_backend_can_trace(a->names[1])) {
        cxl_errf(&e, CXL_EUSAGE, "--trace-fst needs a verilator backend that can write waveforms in --backends "
                 "(%s; verilator: CMake option CXLSIM_RTL_TRACE)", a->backends);
        return cli_fail(&e);
    }
    if (a->trace ? trace_load(a->trace, p, t, &e) : trace_random(p, a->seed, (size_t)a->nrandom, t, &e))
        return cli_fail(&e);
    *saved = NULL; /* --save-trace: written with --json once the run is done */
    *saved_len = 0;
    if (a->save && trace_to_csv(t, saved, saved_len, &e)) {
        trace_free(t);
        return cli_fail(&e);
    }
    return 0;
}

/* The waveform: run again on the verilator side, recording the window (c: its report). */
static int compare_waveform(const compare_args *a, const cxl_params *p, const trace *t, const cmp_opts *o,
                            const cmp_result *r, compare_report *c, cxl_err *e)
{
    uint64_t from = a->win_from, to = a->win_to, reached = 0;
    if (!a->have_window) {
        from = r->diff.cycle > 200 ? r->diff.cycle - 200 : 0;
        to = r->diff.cycle + 50;
    }
    int rc = cmp_waveform(p, t, o, a->fst, from, to, &reached, e);
    char *text = NULL;
    size_t len = 0;
    if (!rc)
        rc = gtkw_text(a->fst, p, &text, &len, e);
    if (!rc)
        rc = outfile_write(a->gtkw, text, len, e);
    free(text);
    c->traced = !rc;
    c->from_cycle = from;
    c->to_cycle = reached < to ? reached : to;
    return rc;
}

/* The comparison, the waveform, the report and the outputs. 0, 8 (different) or the exit status. */
static int compare_execute(const compare_args *a, const cli_ctx *cl)
{
    const char *outs[4] = { a->json, a->save, a->fst, a->fst ? a->gtkw : NULL };
    FILE *so = cli_summary_stream(outs, 2);
    devcfg dev;
    cxl_params p;
    trace t;
    char *saved;
    size_t saved_len;
    int rc = compare_setup(a, outs, &dev, &p, &t, &saved, &saved_len);
    if (rc)
        return rc;
    cxl_err e;
    cxl_err_clear(&e);
    cmp_opts o;
    cmp_default_opts(&o);
    o.backend_a = a->names[0];
    o.backend_b = a->names[1];
    o.max_cycles = a->max_cycles;
    o.bo = &a->bo;
    cmp_result *r = malloc(sizeof *r);
    if (!r) {
        trace_free(&t);
        free(saved);
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
        return cli_fail(&e);
    }
    double t0 = cli_now_s();
    cli_progress pc = { t0, 0, 0, "comparing... %5.1f%% of the descriptors" };
    if (isatty(2) && !a->quiet) {
        o.progress = cli_progress_cb;
        o.progress_ctx = &pc;
    }
    rc = cmp_run(&p, &t, &o, r, &e);
    cli_progress_clear(&pc);
    compare_report c = { &dev, a->names[0], a->names[1], a->trace, a->seed, a->max_cycles, a->fst, a->gtkw, 0, 0, 0,
                         cli_now_s() - t0 };
    if (!rc && a->fst && (a->have_window || !r->equal))
        rc = compare_waveform(a, &p, &t, &o, r, &c, &e);
    trace_free(&t);
    if (rc) {
        free(r);
        free(saved);
        return cli_fail(&e);
    }
    report_compare_text(so, &c, r);
    json_w jw;
    json_init(&jw);
    char *cfg = NULL;
    if (a->json) {
        size_t clen = 0;
        cfg = cli_resolved_devices(&dev, NULL, &clen);
        json_obj_begin(&jw, NULL);
        cli_json_provenance(&jw, cl, cfg ? cfg : "", clen);
        report_compare_json(&jw, &c, r);
        json_obj_end(&jw);
    }
    rc = cli_write_outputs(rc, outs, NULL, &jw, cfg, saved, saved_len, &e);
    free(saved);
    int equal = r->equal;
    free(r);
    if (rc)
        return cli_fail(&e);
    return equal ? 0 : 8; /* 8: the backends differ (README "Exit codes") */
}

static int compare_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    compare_args *a = calloc(1, sizeof *a);
    if (!a) {
        fputs("cxlsim: out of memory\n", stderr);
        return 6;
    }
    a->device = "asic";
    a->backends = "csim,verilator";
    a->nrandom = 1000;
    a->seed = 1;
    int rc = cli_parse(self, argc, argv, cl, compare_opt, a);
    if (!rc)
        rc = compare_check(a);
    if (!rc)
        rc = compare_execute(a, cl);
    free(a);
    return rc == CLI_HELP_SHOWN ? 0 : rc;
}

const cli_command cmd_compare = {
    "compare", "[DEVICE]",
    "run one trace on two backends, report the first diverging event (exit 8)",
    compare_opts,
    "DEVICE is a YAML file or a preset name (default asic). docs/compare.md: the trace format, what is\n"
    "compared, the waveform.\n",
    compare_main,
};
