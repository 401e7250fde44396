/* cmd_probe.c - `cxlsim probe [DEVICE]`: idle latency, bandwidth per mix and loaded-latency curves of
 * a CXL memory device (probe.h), reported by report_probe.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/report_probe.h"

enum { O_BACKEND = 1, O_REFERENCE, O_JSON, O_CSV, O_CURVE_MIX, O_MIXES, O_ARRIVALS, O_SEED, O_QUICK, O_QUIET,
       O_SAMPLES, O_WARMUP, O_WINDOW, O_POINTS, O_TRACE_FST };

static const cli_opt probe_opts_table[] = {
    { O_BACKEND, "backend", 0, "NAME", "CXL backend: csim, analytical (built in), verilator, xrt" },
    { O_REFERENCE, "reference", 0, "DEVICE", "local-DDR reference path for ratios (default local-ddr5)" },
    { O_JSON, "json", 0, "FILE", "write the results as JSON" },
    { O_CSV, "csv", 0, "FILE", "write the loaded-latency curves as CSV" },
    { O_CURVE_MIX, "curve-mix", 0, "R:W", "read:write mix of the loaded-latency curve (default 1:0)" },
    { O_MIXES, "mixes", 0, "R:W,...", "bandwidth and a curve for each mix (at most 16), instead of the default" },
    { O_ARRIVALS, "arrivals", 0, "KIND", "arrivals of the curves: staggered (default), poisson, aligned" },
    { O_SEED, "seed", 0, "N", "seed of addresses, stream offsets and Poisson intervals (default 1)" },
    { O_QUICK, "quick", 0, NULL, "shorter windows and fewer samples (smoke tests)" },
    { O_QUIET, "quiet", 0, NULL, "no progress line (drawn on a terminal during long runs)" },
    { O_SAMPLES, "samples", 0, "N", "idle-latency samples (default 1000; --quick 200)" },
    { O_WARMUP, "warmup", 0, "US", "bandwidth warm-up in microseconds (default 10; --quick 5)" },
    { O_WINDOW, "window", 0, "US", "bandwidth window in microseconds (default 50; --quick 10)" },
    { O_POINTS, "points", 0, "N", "loaded-latency curve points, 2-32 (default 12; --quick 6)" },
    { O_TRACE_FST, "trace-fst", 0, "FILE", "verilator: FST waveform of the RTL during the idle-latency run" },
    CLI_OPTS_XRT,
    CLI_OPT_SET,
    CLI_OPT_END,
};

/* which of the values --quick shortens were given (they win, wherever --quick stands) */
enum { GIVEN_SAMPLES = 1, GIVEN_WARMUP = 2, GIVEN_WINDOW = 4, GIVEN_POINTS = 8 };

typedef struct probe_args {
    const char *device, *reference, *json, *csv;
    int have_device, quick, quiet, given;
    probe_opts o;
} probe_args;

static int parse_mix(const char *s, uint32_t *rd, uint32_t *wr)
{
    unsigned a, b;
    char tail;
    if (sscanf(s, "%u:%u%c", &a, &b, &tail) != 2 || a > 255 || b > 255 || (a == 0 && b == 0))
        return -1;
    *rd = a;
    *wr = b;
    return 0;
}

/* --samples, --points, --seed: whole numbers */
static int probe_count(probe_args *a, int id, const char *val)
{
    char *end;
    unsigned long v = strtoul(val, &end, 10);
    int bad = *val == '\0' || *end || val[0] == '-';
    if (id == O_SEED) {
        if (bad || v > 0xFFFFFFFFul)
            return cli_usage("probe", "--seed: '%s' is not a whole number from 0 to 4294967295", val);
        a->o.seed = (uint32_t)v;
        return 0;
    }
    int pts = id == O_POINTS;
    unsigned long lo = pts ? 2 : 1, hi = pts ? PROBE_MAX_POINTS : 1000000;
    if (bad || v < lo || v > hi)
        return cli_usage("probe", "--%s: '%s' is not a whole number from %lu to %lu", pts ? "points" : "samples", val,
                         lo, hi);
    *(pts ? &a->o.curve_points : &a->o.idle_samples) = (uint32_t)v;
    a->given |= pts ? GIVEN_POINTS : GIVEN_SAMPLES;
    return 0;
}

/* --warmup, --window: microseconds */
static int probe_time(probe_args *a, int id, const char *val)
{
    char *end;
    double v = strtod(val, &end);
    int win = id == O_WINDOW;
    if (*val == '\0' || *end || !(v >= (win ? 0.001 : 0.0)) || v > 1e6)
        return cli_usage("probe", "--%s: '%s' is not a time in microseconds (%s to 1000000)", win ? "window" : "warmup",
                         val, win ? "0.001" : "0");
    *(win ? &a->o.window_us : &a->o.warmup_us) = v;
    a->given |= win ? GIVEN_WINDOW : GIVEN_WARMUP;
    return 0;
}

/* --curve-mix, --mixes, --arrivals */
static int probe_mix(probe_args *a, int id, const char *val)
{
    if (id == O_CURVE_MIX && parse_mix(val, &a->o.curve_rd, &a->o.curve_wr))
        return cli_usage("probe", "--curve-mix: '%s' is not R:W (e.g. 2:1, each 0-255, not both 0)", val);
    if (id == O_MIXES && probe_parse_mixes(&a->o, val))
        return cli_usage("probe", "--mixes: '%s' is not a list of R:W (e.g. 100:0,90:10,80:20; each 0-255, not "
                         "both 0; at most 16)", val);
    if (id == O_ARRIVALS) {
        if (!strcmp(val, "staggered"))
            a->o.arrivals = PROBE_ARRIVALS_STAGGERED;
        else if (!strcmp(val, "poisson"))
            a->o.arrivals = PROBE_ARRIVALS_POISSON;
        else if (!strcmp(val, "aligned"))
            a->o.arrivals = PROBE_ARRIVALS_ALIGNED;
        else
            return cli_usage("probe", "--arrivals: '%s' is not staggered, poisson or aligned", val);
    }
    return 0;
}

static int probe_opt(void *ctx, int id, const char *val)
{
    probe_args *a = ctx;
    switch (id) {
    case CLI_ARG: return cli_one_operand("probe", "DEVICE", val, &a->device, &a->have_device);
    case O_BACKEND: a->o.backend = val; return 0;
    case O_REFERENCE: a->reference = val; return 0;
    case O_JSON: a->json = val; return 0;
    case O_CSV: a->csv = val; return 0;
    case O_TRACE_FST: a->o.bo.trace_fst = val; return 0;
    case O_QUICK: a->quick = 1; return 0;
    case O_QUIET: a->quiet = 1; return 0;
    case O_SAMPLES: case O_POINTS: case O_SEED: return probe_count(a, id, val);
    case O_WARMUP: case O_WINDOW: return probe_time(a, id, val);
    case O_CURVE_MIX: case O_MIXES: case O_ARRIVALS: return probe_mix(a, id, val);
    default: return cli_xrt_option("probe", id, val, &a->o.bo);
    }
}

/* The devices loaded and checked, and the backend opened once: fail fast, before the measurements, on
 * anything that would make the results unwritable or impossible. 0 or the exit status. */
static int probe_load(const probe_args *a, const char *const outs[3], const cli_ctx *cl, devcfg *dev, devcfg *ref)
{
    cxl_err e;
    cxl_err_clear(&e);
    const char *ins[2] = { a->device, a->reference };
    if (cli_check_outputs(outs, 3, ins, 2, &e))
        return cli_fail(&e);
    if (devcfg_load_with(a->device, cl->ov, dev, &e) || devcfg_load(a->reference, ref, &e) ||
        cli_check_device_outputs(outs, 3, a->device, &e) || cli_check_device_outputs(outs, 3, a->reference, &e))
        return cli_fail(&e);
    if (ref->path != DEVCFG_PATH_LOCAL) {
        fprintf(stderr, "cxlsim: --reference %s: not a local-DDR path (needs 'path: local')\n", a->reference);
        return 3;
    }
    cxl_params p;
    cxl_backend *b;
    if (devcfg_to_params(dev, &p, &e) || cxl_backend_open_opts(a->o.backend, &p, &a->o.bo, &b, &e))
        return cli_fail(&e);
    cxl_backend_close(b);
    return 0;
}

static int probe_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    probe_args a = { .device = "asic", .reference = "local-ddr5" };
    probe_default_opts(&a.o);
    int urc = cli_parse(self, argc, argv, cl, probe_opt, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (a.quick) {
        a.o.idle_samples = a.given & GIVEN_SAMPLES ? a.o.idle_samples : 200;
        a.o.warmup_us = a.given & GIVEN_WARMUP ? a.o.warmup_us : 5;
        a.o.window_us = a.given & GIVEN_WINDOW ? a.o.window_us : 10;
        a.o.curve_points = a.given & GIVEN_POINTS ? a.o.curve_points : 6;
    }
    if (!cli_backend_known(a.o.backend))
        return cli_usage("probe", "unknown backend '%s'; valid: csim, analytical, verilator, xrt", a.o.backend);
    const char *outs[3] = { a.json, a.csv, a.o.bo.trace_fst };
    FILE *so = cli_summary_stream(outs, 3);
    devcfg dev, ref;
    int rc = probe_load(&a, outs, cl, &dev, &ref);
    if (rc)
        return rc;
    cxl_err e;
    cxl_err_clear(&e);
    probe_result *r = malloc(sizeof *r);
    if (!r) {
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
        return cli_fail(&e);
    }
    double t0 = cli_now_s();
    cli_progress pc = { t0, 0, 0, "probing... %5.1f%% of the measurements" };
    if (isatty(2) && !a.quiet) {
        a.o.progress = cli_progress_cb;
        a.o.progress_ctx = &pc;
    }
    rc = probe_run(&dev, &ref, &a.o, r, &e);
    cli_progress_clear(&pc);
    if (rc) {
        free(r);
        return cli_fail(&e);
    }
    double wall = cli_now_s() - t0;
    report_probe_text(so, &dev, &ref, &a.o, r, wall);
    json_w w;
    json_init(&w);
    char *cfg = NULL, *csv = NULL;
    size_t csv_len = 0;
    if (a.json) {
        size_t clen = 0;
        cfg = cli_resolved_devices(&dev, &ref, &clen);
        json_obj_begin(&w, NULL);
        cli_json_provenance(&w, cl, cfg ? cfg : "", clen);
        report_probe_json(&w, &dev, &ref, &a.o, r, wall);
        json_obj_end(&w);
    }
    if (a.csv && !(csv_len = report_probe_csv(&a.o, r, &csv)))
        rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
    rc = cli_write_outputs(rc, outs, NULL, &w, cfg, csv, csv_len, &e);
    free(csv);
    free(r);
    return rc ? cli_fail(&e) : 0;
}

const cli_command cmd_probe = {
    "probe", "[DEVICE]",
    "latency and bandwidth of a CXL memory device (default: the 'asic' preset)",
    probe_opts_table,
    "DEVICE is a YAML file or a preset name (cxlsim presets). Measured: the idle load-to-use latency,\n"
    "bandwidth at 100:0, 2:1, 1:1, 0:100 read:write (or the --mixes) and of one stream, and the\n"
    "loaded-latency curves; README \"Commands\", docs/validation.md \"Probe method\".\n",
    probe_main,
};
