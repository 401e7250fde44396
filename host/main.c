/* main.c - the cxlsim command line. Only this file prints to the user or chooses exit codes
 * (see err.h and README "Exit codes"). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "cfgdump.h"
#include "cmd_search.h"
#include "commit.h"
#include "devcfg.h"
#include "err.h"
#include "expcfg.h"
#include "gpumem.h"
#include "json.h"
#include "outfile.h"
#include "override.h"
#include "presets.h"
#include "sweep.h"
#include "sweepjournal.h"
#include "sweeprow.h"
#include "sweeprun.h"
#include "probe.h"
#include "train.h"
#include "nccltune.h"
#include "collalgo.h"
#include "tiers.h"
#include "compute.h"
#include "compare.h"
#include "gtkw.h"
#include "trace.h"
#include "opgraph.h"
#include "optimes.h"
#include <unistd.h>

#ifndef CXLSIM_VERSION
#define CXLSIM_VERSION "0.1.0"
#endif
/* The layout of the JSON outputs (README "Provenance"): raised when a member is renamed or removed or
 * changes meaning; adding members keeps it. */
#define CXLSIM_SCHEMA_VERSION 1

#if defined(__clang__) || !defined(__GNUC__)
#define CXLSIM_COMPILER __VERSION__
#else
#define CXLSIM_COMPILER "GCC " __VERSION__
#endif

static const char usage_text[] =
    "usage: cxlsim COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  probe [DEVICE]     latency and bandwidth of a CXL memory device (default: the 'asic' preset)\n"
    "      --backend NAME     CXL backend: csim, analytical (built in), verilator, xrt\n"
    "      --reference DEV    local-DDR reference path for ratios (default: local-ddr5)\n"
    "      --json FILE        write results as JSON\n"
    "      --csv FILE         write the loaded-latency curve as CSV\n"
    "      --curve-mix R:W    read:write mix of the loaded-latency curve (default 1:0)\n"
    "      --quick            shorter windows and fewer samples (for smoke tests)\n"
    "      --quiet            no progress line (drawn on a terminal during long runs)\n"
    "      --samples N        idle-latency samples (default 1000; --quick 200)\n"
    "      --warmup US, --window US  bandwidth warm-up and measured window in microseconds\n"
    "                         (default 10 and 50; --quick 5 and 10)\n"
    "      --points N         loaded-latency curve points, 2-32 (default 12; --quick 6)\n"
    "      --trace-fst FILE   verilator: FST waveform of the RTL during the idle-latency measurement\n"
    "      --xclbin FILE, --card N|BDF, --xrt-timeout MS  xrt: the FPGA image, the card (default 0),\n"
    "                         the limit of one kernel run (default 10000)\n"
    "  memory [EXPERIMENT] per-GPU memory of a training experiment (weights, gradients, optimizer,\n"
    "                     activations) and whether it fits (default: llama2-7b-2x8-h100)\n"
    "      --json FILE        write the figures as JSON\n"
    "  train [EXPERIMENT] simulate one training iteration: time, tokens/s, MFU, breakdown, memory\n"
    "                     (default: llama2-7b-2x8-h100)\n"
    "      --json FILE        write the results as JSON\n"
    "      --trace FILE       write a Chrome trace (open in https://ui.perfetto.dev); FILE.gz: gzip-compressed\n"
    "      --trace-stages L   only pipeline stages L (e.g. 0,3,5-7); --trace-window T0:T1 only that time\n"
    "      --dump-config      print the experiment after extends, overrides and defaults, and stop\n"
    "      --op-times FILE    measured kernel times (scripts/profile_ops.py); others from the model\n"
    "      --backend NAME     CXL backend for the experiment's cxl: section (csim, analytical, ...)\n"
    "      --exact            CXL: simulate every cycle (no steady-state extrapolation, no memo)\n"
    "      --quiet            no progress line (drawn on a terminal during long runs)\n"
    "      --xclbin FILE, --card N|BDF, --xrt-timeout MS  as for probe (override the cxl: section)\n"
    "  ops [EXPERIMENT]   list the distinct kernels of an experiment, the input of scripts/profile_ops.py\n"
    "      --out FILE         write the list there instead of standard output\n"
    "      --times            include the modelled time of each kernel\n"
    "  presets [KIND]     list the built-in presets: devices (default), models, gpus, clusters, experiments\n"
    "  presets show [KIND] NAME  print a preset's YAML (the same text as configs/KIND/NAME.yaml)\n"
    "      --resolved         instead, every value in effect after extends and defaults\n"
    "  check DEVICE       load and validate a device description, print what the model will use\n"
    "  compare [DEVICE]   run one trace on two backends, report the first diverging event (exit 8)\n"
    "      --trace FILE | --random N [--seed S]  descriptor trace (CSV, docs/compare.md) or N random\n"
    "      --backends A,B     default csim,verilator; --max-cycles N, --json FILE, --save-trace FILE\n"
    "      --trace-fst FILE [--cycles A:B]  FST waveform of the verilator side (and FILE's .gtkw): cycles\n"
    "                         A to B, default 200 before to 50 after the first diverging event\n"
    "      --xclbin FILE, --card N|BDF, --xrt-timeout MS  for an xrt backend, as for probe\n"
    "      --quiet            no progress line (drawn on a terminal during long runs)\n"
    "  sweep SPEC         run an experiment (or probe a device) over axes of --set values: one row per\n"
    "                     point, infeasible points with their reason, the best points (docs/sweeps.md)\n"
    "      --csv FILE, --jsonl FILE  the rows as CSV and as JSON lines (default: CSV on standard output)\n"
    "      -j N               points at once, each in a worker process (default: the CPUs online)\n"
    "      --resume           continue an interrupted sweep from its journal (FILE.partial)\n"
    "  search [EXPERIMENT] every parallel layout of the experiment on its cluster, ranked by iteration\n"
    "                     time; the best re-run on the cycle-level CXL model (docs/search.md)\n"
    "      --top N, --rerun K  layouts in the ranking (default 10), re-run with csim (default 4)\n"
    "      --vary DIMS        tp,pp,sp,virtual_stages,micro_batch,recompute,zero,offload (default all)\n"
    "      -j N, --exhaustive, --json FILE, --csv FILE, --rerun-backend NAME, --quiet\n"
    "  backends           list backends and whether each is built in\n"
    "  version            print the version, commit, compiler and backends of this build\n"
    "  help               this text\n"
    "\n"
    "--set KEY=VALUE (repeatable; train, memory, ops, probe, check, sweep, search): a value for a dotted key of\n"
    "the experiment (training.tp=8, cluster.nodes=128) or the device (link.width=8), in the files' units;\n"
    "training.dp, when not given, is the GPUs / (tp x pp).\n"
    "DEVICE is a YAML file or a preset name. FILE '-' is standard output (the summary then goes to\n"
    "standard error). Exit codes: 0 ok, 1 internal error, 2 usage, 3 configuration,\n"
    "4 backend unavailable, 5 file I/O, 6 out of memory, 7 request beyond the model's limits,\n"
    "8 compare: backends differ, 9 FPGA card or kernel run failed (xrt).\n";

static int fail(const cxl_err *e)
{
    char buf[2048];
    cxl_err_format(e, buf, sizeof buf);
    fprintf(stderr, "cxlsim: %s\n", buf);
    return cxl_exit_code(e->code);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cxlsim: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(run 'cxlsim help' for usage)\n");
    va_end(ap);
    return 2;
}

/* The whole command line, recorded in every JSON output, and its `--set KEY=VALUE` overrides
 * (override.h), taken out of the arguments the command sees. */
typedef struct cmdline {
    int argc;
    char **argv;
    const override_list *ov;
} cmdline;

/* The members every JSON output starts with (README "Provenance"): cfg is the resolved configuration
 * as `--dump-config` prints it, hashed with FNV-1a 64. */
static void json_provenance(json_w *w, const cmdline *cl, const char *cfg, size_t cfg_len)
{
    char hash[32];
    json_str(w, "cxlsim_version", CXLSIM_VERSION);
    json_str(w, "commit", CXLSIM_COMMIT);
    json_u64(w, "schema_version", CXLSIM_SCHEMA_VERSION);
    json_arr_begin(w, "command_line");
    for (int i = 0; i < cl->argc; i++)
        json_str(w, NULL, cl->argv[i]);
    json_arr_end(w);
    snprintf(hash, sizeof hash, "fnv1a64:%016" PRIx64, cfgdump_fnv1a64(cfg, cfg_len));
    json_str(w, "config_hash", hash);
}

/* The same members as the trace's "otherData" (ctrace.h). */
static int trace_provenance(ctrace *ct, const cmdline *cl, const char *cfg, size_t cfg_len, cxl_err *e)
{
    json_w w;
    json_init(&w);
    json_obj_begin(&w, NULL);
    json_provenance(&w, cl, cfg, cfg_len);
    json_obj_end(&w);
    int rc = w.oom ? cxl_errf(e, CXL_ENOMEM, "out of memory") : ctrace_other_data(ct, w.buf, w.len, e);
    json_free(&w);
    return rc;
}

/* The resolved configuration text of an experiment, or of devices (joined as YAML documents). NULL
 * when out of memory; the caller frees. */
static char *resolved_experiment(const expcfg *x, size_t *len)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    if (!m)
        return NULL;
    int rc = expcfg_dump(m, x);
    if (fclose(m) || rc) {
        free(text);
        return NULL;
    }
    return text;
}

static char *resolved_devices(const devcfg *a, const devcfg *b, size_t *len)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    if (!m)
        return NULL;
    devcfg_dump(m, a);
    if (b) {
        fputs("---\n", m);
        devcfg_dump(m, b);
    }
    if (fclose(m)) {
        free(text);
        return NULL;
    }
    return text;
}

/* Pre-flight for a command's outputs (n paths, NULL when not asked for): each can be written, none is
 * an input or another output. */
static int check_outputs(const char *const *out, size_t n, const char *const *in, size_t nin, cxl_err *e)
{
    for (size_t i = 0; i < n; i++)
        if (out[i] && outfile_check(out[i], e))
            return e->code;
    return outfile_check_inputs(out, n, in, nin, e);
}

/* After loading: no output is one of the configuration files the command read besides those named on
 * its command line (an `extends` parent, a component or device file), refused as those are, before the
 * run. */
struct cfg_out_check {
    const char *const *out;
    size_t n;
    cxl_err *e;
};

static int check_config_file(void *ctx, const char *path)
{
    const struct cfg_out_check *c = ctx;
    return outfile_check_inputs(c->out, c->n, &path, 1, c->e);
}

static int check_experiment_outputs(const char *const *out, size_t n, const expcfg *x, cxl_err *e)
{
    struct cfg_out_check c = { out, n, e };
    return expcfg_each_file(x, check_config_file, &c);
}

static int check_device_outputs(const char *const *out, size_t n, const char *device, cxl_err *e)
{
    struct cfg_out_check c = { out, n, e };
    return compose_each_file("devices", device, check_config_file, &c);
}

/* A sweep's base (an experiment with its files, or a device) is an input too. */
static int check_sweep_outputs(const char *const *out, size_t n, const sweep_spec *sp, const override_list *ov,
                               cxl_err *e)
{
    if (sp->command == SWEEP_PROBE)
        return check_device_outputs(out, n, sp->base, e);
    expcfg *x = malloc(sizeof *x);
    if (!x)
        return cxl_errf(e, CXL_ENOMEM, "out of memory");
    /* loaded whole for its CXL device file; a base whose own layout is refused (a sweep's points
     * change it) is bound only, as the sweep loaded it */
    int rc = expcfg_load_with(sp->base, ov, 0, x, e);
    if (rc)
        rc = expcfg_load_with(sp->base, ov, EXPCFG_BIND_ONLY, x, e);
    if (!rc)
        rc = check_experiment_outputs(out, n, x, e);
    free(x);
    return rc;
}

/* Where the human summary goes: standard error when an output is standard output. */
static FILE *summary_stream(const char *const *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (outfile_is_stdout(out[i]))
            return stderr;
    return stdout;
}

/* The end of a command with a JSON output (outs[0]) and one other (outs[1]): both written, all or none
 * (outfile.h), when the run succeeded; the JSON writer and the configuration text freed either way.
 * of: the outputs opened before the run (NULL, or entries NULL, for none: those of outs are opened
 * here); the other output's data, when not NULL, is written after the JSON. */
static int write_outputs(int rc, const char *const outs[2], outfile *of[2], json_w *w, char *cfg,
                         const char *other, size_t other_len, cxl_err *e)
{
    outfile *none[2] = { NULL, NULL };
    if (!of)
        of = none;
    if (!rc && outs[0] && (w->oom || !cfg))
        rc = cxl_errf(e, CXL_ENOMEM, "out of memory writing JSON");
    for (int i = 0; i < 2 && !rc; i++)
        if (outs[i] && !of[i])
            rc = outfile_open(outs[i], &of[i], e);
    if (!rc && of[0])
        rc = outfile_put(of[0], w->buf, w->len, e);
    if (!rc && of[1] && other)
        rc = outfile_put(of[1], other, other_len, e);
    rc = outfile_finish_all(of, 2, rc, e);
    json_free(w);
    free(cfg);
    return rc;
}

/* A whole number from lo to hi, or -1. */
static long long whole(const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return (*s && !*end && !errno && s[0] != '-' && s[0] != '+' && v >= lo && v <= hi) ? v : -1;
}

/* The xrt backend's options, parsed once for every command that opens a backend. */
static int xrt_values(const char *xclbin, const char *card, const char *timeout, cxl_backend_opts *bo)
{
    if (xclbin)
        bo->xclbin = xclbin;
    if (card)
        bo->xrt_card = card;
    if (timeout) {
        long long v = whole(timeout, 1, 86400000);
        if (v < 0)
            return usage_error("--xrt-timeout: '%s' is not a whole number of milliseconds from 1 to 86400000",
                               timeout);
        bo->xrt_timeout_ms = (unsigned)v;
    }
    return 0;
}

/* argv[*i] one of --xclbin, --card, --xrt-timeout: take its value. 1 taken, 0 not one of them, or the
 * usage exit status 2 (negated) when it is malformed. */
static int xrt_option(int argc, char **argv, int *i, cxl_backend_opts *bo)
{
    const char *a = argv[*i];
    int k = !strcmp(a, "--xclbin") ? 0 : !strcmp(a, "--card") ? 1 : !strcmp(a, "--xrt-timeout") ? 2 : -1;
    if (k < 0)
        return 0;
    if (*i + 1 >= argc)
        return -usage_error("%s needs a value", a);
    const char *v = argv[++*i];
    int rc = xrt_values(k == 0 ? v : NULL, k == 1 ? v : NULL, k == 2 ? v : NULL, bo);
    return rc ? -rc : 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const preset_kinds[] = { "devices", "models", "gpus", "clusters", "experiments", NULL };

static int is_kind(const char *k)
{
    for (const char *const *p = preset_kinds; *p; p++)
        if (!strcmp(*p, k))
            return 1;
    return 0;
}

/* `presets show --resolved KIND NAME`: the preset loaded as a run would load it, printed back. */
static int show_resolved(const char *kind, const char *name)
{
    cxl_err e;
    cxl_err_clear(&e);
    int rc = 0;
    if (!strcmp(kind, "devices")) {
        devcfg c;
        if (!(rc = devcfg_load(name, &c, &e)))
            devcfg_dump(stdout, &c);
    } else if (!strcmp(kind, "experiments")) {
        expcfg *x = malloc(sizeof *x);
        if (!x)
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        else if (!(rc = expcfg_load(name, x, &e)) && expcfg_dump(stdout, x))
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        free(x);
    } else if (!strcmp(kind, "models")) {
        modelcfg m;
        if (!(rc = modelcfg_load(name, &m, &e)))
            compose_dump(stdout, &modelcfg_kind, &m, 0);
    } else if (!strcmp(kind, "gpus")) {
        gpucfg g;
        if (!(rc = gpucfg_load(name, &g, &e)))
            compose_dump(stdout, &gpucfg_kind, &g, 0);
    } else {
        clustercfg c;
        if (!(rc = clustercfg_load(name, &c, &e)))
            compose_dump(stdout, &clustercfg_kind, &c, 0);
    }
    return rc ? fail(&e) : 0;
}

static int cmd_presets(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "show")) {
        const char *pos[3] = { NULL }, *kind = "devices", *name;
        int npos = 0, resolved = 0;
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--resolved"))
                resolved = 1;
            else if (argv[i][0] == '-')
                return usage_error("presets show: unknown option '%s'", argv[i]);
            else if (npos < 3)
                pos[npos++] = argv[i];
            else
                npos++;
        }
        if (npos == 2 && is_kind(pos[0])) {
            kind = pos[0];
            name = pos[1];
        } else if (npos == 1) {
            name = pos[0];
        } else {
            return usage_error("presets show: expected [--resolved] [KIND] NAME%s", "");
        }
        if (!presets_text(kind, name)) {
            cxl_err e;
            cxl_err_clear(&e);
            char list[1024];
            compose_preset_list(kind, name, list, sizeof list);
            cxl_errf(&e, CXL_ECONFIG, "unknown preset '%s' among the %s; %s", name, kind, list);
            return fail(&e);
        }
        if (resolved)
            return show_resolved(kind, name);
        fputs(presets_text(kind, name), stdout);
        return 0;
    }
    const char *kind = "devices";
    if (argc == 2 && is_kind(argv[1]))
        kind = argv[1];
    else if (argc != 1)
        return usage_error("presets: unknown kind '%s'; valid: devices, models, gpus, clusters, experiments", argv[1]);
    if (strcmp(kind, "devices")) {
        for (const char *const *n = presets_names(kind); *n; n++)
            printf("%s\n", *n);
        return 0;
    }
    for (const char *const *n = devcfg_preset_names(); *n; n++) {
        devcfg c;
        cxl_err e;
        cxl_err_clear(&e);
        if (devcfg_load(*n, &c, &e))
            return fail(&e);
        printf("%-12s %s\n", *n, c.description);
    }
    return 0;
}

#define GIB (1024.0 * 1024.0 * 1024.0)

/* The arguments of a command on one experiment: [EXPERIMENT] plus options. An option of `opts` ending in
 * '=' takes a value (stored in vals[i]); others are flags (vals[i] set to "1"). Returns 0 or the usage
 * exit status. */
static int experiment_args(int argc, char **argv, const char *cmd, const char *const *opts, const char **vals,
                           const char **exp)
{
    *exp = EXPCFG_DEFAULT;
    int have = 0;
    for (int i = 1; i < argc; i++) {
        int k = -1;
        size_t len = 0;
        for (int j = 0; opts[j]; j++) {
            len = strcspn(opts[j], "=");
            if (!strncmp(argv[i], opts[j], len) && argv[i][len] == '\0') {
                k = j;
                break;
            }
        }
        if (k >= 0 && opts[k][len] == '=') {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", argv[i]);
            vals[k] = argv[++i];
        } else if (k >= 0) {
            vals[k] = "1";
        } else if (argv[i][0] == '-' || have) {
            char fmt[96];
            snprintf(fmt, sizeof fmt, "%s: %s", cmd,
                     argv[i][0] == '-' ? "unknown option '%s'" : "only one EXPERIMENT may be given ('%s')");
            return usage_error(fmt, argv[i]);
        } else {
            *exp = argv[i];
            have = 1;
        }
    }
    return 0;
}

static int cmd_memory(int argc, char **argv, const cmdline *cl)
{
    static const char *const opts[] = { "--json=", NULL };
    const char *vals[1] = { NULL }, *exp;
    int urc = experiment_args(argc, argv, "memory", opts, vals, &exp);
    if (urc)
        return urc;
    const char *json_path = vals[0];
    FILE *so = summary_stream(&json_path, 1);
    cxl_err e;
    cxl_err_clear(&e);
    if (check_outputs(&json_path, 1, &exp, 1, &e))
        return fail(&e);
    expcfg *x = malloc(sizeof *x);
    if (!x) {
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
        return fail(&e);
    }
    if (expcfg_load_with(exp, cl->ov, 0, x, &e) || check_experiment_outputs(&json_path, 1, x, &e)) {
        free(x);
        return fail(&e);
    }
    gpumem m;
    gpumem_estimate(&x->model, &x->train, &m);
    const traincfg *t = &x->train;
    fprintf(so, "%s: %s\n", x->name, x->description);
    fprintf(so, "  model       %s, %.2f B parameters\n", x->model.name, (double)modelcfg_total_params(&x->model) / 1e9);
    fprintf(so, "  cluster     %llu x %llu %s (%s)\n", (unsigned long long)x->cluster.nodes,
           (unsigned long long)x->cluster.gpus_per_node, x->gpu.name, x->cluster.name);
    fprintf(so, "  layout      tp %llu, pp %llu, dp %llu, sp %s, virtual stages %llu, ZeRO %llu, recompute %s\n",
           (unsigned long long)t->tp, (unsigned long long)t->pp, (unsigned long long)t->dp, t->sp ? "on" : "off",
           (unsigned long long)t->virtual_stages, (unsigned long long)t->zero,
           traincfg_recompute_names[t->recompute]);
    fprintf(so, "  memory per GPU (pipeline stage %llu, the largest), GiB:\n", (unsigned long long)m.stage);
    fprintf(so, "    weights      %8.2f\n    gradients    %8.2f\n    optimizer    %8.2f\n    activations  %8.2f\n"
           "    total        %8.2f   of %.2f GiB HBM\n",
           m.weights_bytes / GIB, m.gradients_bytes / GIB, m.optimizer_bytes / GIB, m.activations_bytes / GIB,
           m.total_bytes / GIB, (double)x->gpu.hbm_bytes / GIB);
    tiers tr;
    int rc = tiers_compute(x, &tr);
    if (!rc && x->cxl.memory != CXLCFG_NONE)
        fprintf(so, "  after offloading to CXL (%s '%s'): HBM %.2f GiB per GPU; CXL %.2f GiB per GPU, %.2f of %.2f GiB "
               "in the fullest domain\n",
               cxlcfg_memory_names[x->cxl.memory], x->cxl.dev.name, tr.hbm_bytes / GIB, tr.cxl_bytes_per_gpu / GIB,
               tr.cxl_bytes_per_domain / GIB, tr.cxl_capacity_per_domain / GIB);
    if (!rc)
        rc = tiers_check(x, &tr, &e);
    if (!rc && json_path) {
        size_t clen = 0;
        char *cfg = resolved_experiment(x, &clen);
        json_w w;
        json_init(&w);
        json_obj_begin(&w, NULL);
        json_provenance(&w, cl, cfg ? cfg : "", clen);
        json_str(&w, "experiment", x->name);
        json_u64(&w, "parameters", modelcfg_total_params(&x->model));
        json_u64(&w, "stage", m.stage);
        json_obj_begin(&w, "memory_per_gpu_gib");
        json_num(&w, "weights", m.weights_bytes / GIB);
        json_num(&w, "gradients", m.gradients_bytes / GIB);
        json_num(&w, "optimizer", m.optimizer_bytes / GIB);
        json_num(&w, "activations", m.activations_bytes / GIB);
        json_num(&w, "total", m.total_bytes / GIB);
        json_obj_end(&w);
        json_num(&w, "hbm_gib", (double)x->gpu.hbm_bytes / GIB);
        json_obj_begin(&w, "tiers_gib");
        json_num(&w, "hbm_per_gpu", tr.hbm_bytes / GIB);
        json_num(&w, "cxl_per_gpu", tr.cxl_bytes_per_gpu / GIB);
        json_num(&w, "cxl_per_domain", tr.cxl_bytes_per_domain / GIB);
        json_num(&w, "cxl_capacity_per_domain", tr.cxl_capacity_per_domain / GIB);
        json_obj_end(&w);
        json_obj_end(&w);
        rc = w.oom || !cfg ? cxl_errf(&e, CXL_ENOMEM, "out of memory writing JSON")
                           : outfile_write(json_path, w.buf, w.len, &e);
        json_free(&w);
        free(cfg);
    }
    free(x);
    return rc ? fail(&e) : 0;
}


/* ---- train ---- */

/* The progress line of a long run (train, probe): on standard error when it is a terminal, redrawn in
 * place at most five times a second after the first second, with an ETA from the rate so far. */
typedef struct progress_ctx { double t0, last; int shown; const char *fmt; /* of the percentage */ } progress_ctx;

static void progress_cb(void *ctx, double frac)
{
    progress_ctx *p = ctx;
    double t = now_s();
    if (t - p->t0 < 1.0 || t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = 1;
    fputs("\rcxlsim: ", stderr);
    fprintf(stderr, p->fmt, 100.0 * frac);
    if (frac > 0.001 && frac < 1)
        fprintf(stderr, ", ETA %.0f s   ", (t - p->t0) * (1 - frac) / frac);
    fflush(stderr);
}

static void progress_clear(const progress_ctx *p)
{
    if (p->shown)
        fprintf(stderr, "\r%78s\r", "");
}

static int load_experiment(const char *exp, const override_list *ov, expcfg **out, cxl_err *e)
{
    expcfg *x = malloc(sizeof *x);
    if (!x)
        return cxl_errf(e, CXL_ENOMEM, "out of memory");
    if (expcfg_load_with(exp, ov, 0, x, e)) {
        free(x);
        return e->code;
    }
    *out = x;
    return 0;
}

static int cmd_train(int argc, char **argv, const cmdline *cl)
{
    static const char *const opts[] = { "--json=",        "--trace=",        "--op-times=", "--backend=",
                                        "--exact",        "--xclbin=",       "--card=",     "--xrt-timeout=",
                                        "--dump-config",  "--trace-stages=", "--trace-window=", "--quiet", NULL };
    const char *vals[12] = { NULL }, *exp;
    int urc = experiment_args(argc, argv, "train", opts, vals, &exp);
    if (urc)
        return urc;
    const char *json_path = vals[0], *trace_path = vals[1], *times_path = vals[2], *backend = vals[3];
    int exact = vals[4] != NULL;
    cxl_backend_opts bo = { 0 };
    if (xrt_values(vals[5], vals[6], vals[7], &bo))
        return 2;
    if (backend) {
        int known = 0;
        for (const char *const *n = cxl_backend_names(); *n; n++)
            known |= !strcmp(*n, backend);
        if (!known)
            return usage_error("train: unknown backend '%s' (run 'cxlsim backends')", backend);
    }
    const char *outs[2] = { json_path, trace_path }, *ins[2] = { exp, times_path };
    FILE *so = summary_stream(outs, 2);
    cxl_err e;
    cxl_err_clear(&e);
    const char *stage_list = vals[9], *window = vals[10];
    if ((stage_list || window) && !trace_path)
        return usage_error("train: --trace-stages and --trace-window need --trace FILE%s", "");
    int64_t w0 = 0, w1 = INT64_MAX;
    if (window && ctrace_parse_window(window, &w0, &w1, &e))
        return usage_error("train: %s", e.msg);
    if (check_outputs(outs, 2, ins, 2, &e))
        return fail(&e);
    expcfg *x = NULL;
    optimes *ot = NULL;
    if (load_experiment(exp, cl->ov, &x, &e))
        return fail(&e);
    if (check_experiment_outputs(outs, 2, x, &e)) {
        free(x);
        return fail(&e);
    }
    if (vals[8]) { /* --dump-config */
        int drc = expcfg_dump(stdout, x);
        free(x);
        return drc ? 6 : 0;
    }
    uint8_t *stages = stage_list ? malloc(x->train.pp) : NULL;
    ctrace *ct = NULL;
    int rc = stage_list && !stages ? cxl_errf(&e, CXL_ENOMEM, "out of memory") : 0;
    if (!rc && stages && ctrace_parse_stages(stage_list, (uint32_t)x->train.pp, stages, &e)) {
        free(stages);
        free(x);
        return usage_error("train: %s", e.msg);
    }
    if (!rc && times_path)
        rc = optimes_load(times_path, &ot, 1, &e);
    /* Both outputs are open before the run (their temporary files in the pending table of outfile.h,
     * which the signal handlers empty) and committed together after it, all or none: the trace streams
     * to its file during the run and is complete before anything is printed, so a failed trace (a full
     * disk) leaves no report, and a failed JSON leaves no trace. */
    outfile *of[2] = { NULL, NULL };
    if (!rc && json_path)
        rc = outfile_open(json_path, &of[0], &e);
    /* the resolved configuration, hashed in the provenance of the JSON and of the trace */
    size_t clen = 0;
    char *cfg = !rc && (json_path || trace_path) ? resolved_experiment(x, &clen) : NULL;
    if (!rc && (json_path || trace_path) && !cfg)
        rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc && trace_path)
        rc = ctrace_open(&ct, trace_path, w0, w1, &e);
    if (!rc && ct)
        rc = trace_provenance(ct, cl, cfg, clen, &e);
    progress_ctx pc = { now_s(), 0, 0, "simulating... %5.1f%% of pipeline passes" };
    train_opts o = { ot, ct, isatty(2) && !vals[11] ? progress_cb : NULL, &pc, exact, backend, bo, stages };
    train_result r;
    double t0 = now_s();
    if (!rc)
        rc = train_run(x, &o, &r, &e);
    double wall = now_s() - t0;
    progress_clear(&pc);
    if (rc)
        ctrace_abort(ct);
    else if (ct && (rc = ctrace_end(ct, &of[1], &e)) != 0)
        train_result_free(&r);
    free(stages);
    if (rc) {
        outfile_finish_all(of, 2, rc, &e);
        optimes_free(ot);
        free(cfg);
        free(x);
        return fail(&e);
    }
    const traincfg *t = &x->train;
    fprintf(so, "%s: %s\n", x->name, x->description);
    fprintf(so, "  model       %s, %.2f B parameters, sequence %llu\n", x->model.name,
           (double)modelcfg_total_params(&x->model) / 1e9, (unsigned long long)x->model.seq_len);
    fprintf(so, "  cluster     %llu x %llu %s (%s)\n", (unsigned long long)x->cluster.nodes,
           (unsigned long long)x->cluster.gpus_per_node, x->gpu.name, x->cluster.name);
    fprintf(so, "  layout      tp %llu, pp %llu, dp %llu, sp %s, virtual stages %llu, ZeRO %llu, recompute %s, "
           "global batch %llu, micro-batch %llu\n",
           (unsigned long long)t->tp, (unsigned long long)t->pp, (unsigned long long)t->dp, t->sp ? "on" : "off",
           (unsigned long long)t->virtual_stages, (unsigned long long)t->zero, traincfg_recompute_names[t->recompute],
           (unsigned long long)t->global_batch, (unsigned long long)t->micro_batch);
    if (ot)
        fprintf(so, "  kernels     %llu distinct, %llu from %s\n", (unsigned long long)r.kernels,
               (unsigned long long)r.kernels_measured, times_path);
    if (r.ops_above_peak)
        fprintf(stderr, "cxlsim: warning: %s%s\n", r.peak_warning,
                r.ops_above_peak > 1 ? " (and more measured kernels below the peak's time)" : "");
    if (r.mfu > 1.0)
        fprintf(stderr, "cxlsim: warning: MFU %.1f %% exceeds 100 %%: some kernel times are faster than the GPU's "
                "peak allows\n", 100.0 * r.mfu);
    double T = (double)r.iteration_ps / 1e12;
    fprintf(so, "\n  iteration time   %.4f s\n  tokens/s         %.0f\n  MFU              %.1f %%\n", T, r.tokens_per_s,
           100.0 * r.mfu);
    fprintf(so, "  breakdown (mean over pipeline stages):\n");
    static const char *const label[TRAIN_BK_N] = { "compute", "exposed TP comm", "exposed PP comm",
                                                   "exposed DP comm", "pipeline bubble", "CXL stall" };
    for (int k = 0; k < TRAIN_BK_N; k++)
        fprintf(so, "    %-16s %10.4f s  %5.1f %%\n", label[k], r.breakdown_s[k], T > 0 ? 100.0 * r.breakdown_s[k] / T : 0);
    fprintf(so, "  memory per GPU (stage %llu): weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, "
           "total %.2f GiB\n",
           (unsigned long long)r.mem.stage, r.mem.weights_bytes / GIB, r.mem.gradients_bytes / GIB,
           r.mem.optimizer_bytes / GIB, r.mem.activations_bytes / GIB, r.mem.total_bytes / GIB);
    if (x->cxl.memory != CXLCFG_NONE) {
        fprintf(so, "  CXL memory       %s '%s' on backend %s: %llu transfers, %llu cycles in detail, %llu extrapolated, "
               "%llu memo hits%s\n",
               cxlcfg_memory_names[x->cxl.memory], x->cxl.dev.name, r.cxl_backend, (unsigned long long)r.cxl_transfers,
               (unsigned long long)r.detailed_cycles, (unsigned long long)r.extrapolated_cycles,
               (unsigned long long)r.memo_hits, exact ? " (exact)" : "");
        fprintf(so, "  memory tiers     HBM %.2f GiB per GPU; CXL %.2f GiB per GPU, %.2f of %.2f GiB in the fullest domain\n",
               r.tiers.hbm_bytes / GIB, r.tiers.cxl_bytes_per_gpu / GIB, r.tiers.cxl_bytes_per_domain / GIB,
               r.tiers.cxl_capacity_per_domain / GIB);
        for (uint32_t d = 0; d < r.ndomains; d++)
            fprintf(so, "    domain %u (x%u cop%s, %u node%s each): read %.2f GB/s, write %.2f GB/s over %.4f s busy; "
                   "read latency mean %.0f ns, p99 %.0f ns\n",
                   d, r.domains[d].copies, r.domains[d].copies == 1 ? "y" : "ies", r.domains[d].nodes, r.domains[d].nodes > 1 ? "s" : "", r.domains[d].read_gbps,
                   r.domains[d].write_gbps, r.domains[d].busy_s, r.domains[d].read_lat_ns[0], r.domains[d].read_lat_ns[2]);
    }
    fprintf(so, "  engine           %llu events, %llu flows, %.3f s wall\n", (unsigned long long)r.events,
           (unsigned long long)r.flows, wall);
    json_w w;
    json_init(&w);
    if (json_path) {
        json_obj_begin(&w, NULL);
        json_provenance(&w, cl, cfg, clen);
        json_str(&w, "experiment", x->name);
        json_num(&w, "iteration_time_s", T);
        json_u64(&w, "iteration_time_ps", (uint64_t)r.iteration_ps);
        json_num(&w, "tokens_per_s", r.tokens_per_s);
        json_num(&w, "mfu", r.mfu);
        json_num(&w, "model_flops", r.model_flops);
        json_obj_begin(&w, "breakdown_s");
        for (int k = 0; k < TRAIN_BK_N; k++)
            json_num(&w, train_bk_names[k], r.breakdown_s[k]);
        json_obj_end(&w);
        json_obj_begin(&w, "memory_per_gpu_gib");
        json_num(&w, "weights", r.mem.weights_bytes / GIB);
        json_num(&w, "gradients", r.mem.gradients_bytes / GIB);
        json_num(&w, "optimizer", r.mem.optimizer_bytes / GIB);
        json_num(&w, "activations", r.mem.activations_bytes / GIB);
        json_num(&w, "total", r.mem.total_bytes / GIB);
        json_u64(&w, "stage", r.mem.stage);
        json_obj_end(&w);
        json_arr_begin(&w, "stages");
        for (uint32_t s = 0; s < r.nstages; s++) {
            json_obj_begin(&w, NULL);
            json_u64(&w, "stage", s);
            json_num(&w, "finish_s", (double)r.stages[s].finish_ps / 1e12);
            json_obj_begin(&w, "breakdown_s");
            for (int k = 0; k < TRAIN_BK_N; k++)
                json_num(&w, train_bk_names[k], (double)r.stages[s].bk_ps[k] / 1e12);
            json_obj_end(&w);
            json_obj_end(&w);
        }
        json_arr_end(&w);
        json_arr_begin(&w, "collectives");
        for (uint32_t i = 0; i < r.ncolls; i++) {
            const train_coll *C = &r.colls[i];
            json_obj_begin(&w, NULL);
            json_str(&w, "group", C->tp ? "tp" : "dp");
            json_str(&w, "op", collalgo_op_name((collalgo_op)C->op));
            json_u64(&w, "bytes", C->bytes);
            json_u64(&w, "ranks", C->ranks);
            json_u64(&w, "nodes", C->nodes);
            json_str(&w, "algorithm", collalgo_algo_name((collalgo_algo)C->algo));
            json_str(&w, "protocol", nccltune_proto_name((nccltune_proto)C->proto));
            json_u64(&w, "count", C->count);
            json_obj_end(&w);
        }
        json_arr_end(&w);
        json_u64(&w, "collectives_not_listed", r.colls_other);
        json_u64(&w, "events", r.events);
        json_u64(&w, "flows", r.flows);
        json_u64(&w, "detailed_cycles", r.detailed_cycles);
        json_u64(&w, "extrapolated_cycles", r.extrapolated_cycles);
        json_u64(&w, "memo_hits", r.memo_hits);
        if (x->cxl.memory != CXLCFG_NONE) {
            json_obj_begin(&w, "cxl");
            json_str(&w, "memory", cxlcfg_memory_names[x->cxl.memory]);
            json_str(&w, "device", x->cxl.dev.name);
            json_str(&w, "backend", r.cxl_backend);
            json_u64(&w, "exact", (uint64_t)exact);
            json_u64(&w, "transfers", r.cxl_transfers);
            json_obj_begin(&w, "tiers_gib");
            json_num(&w, "hbm_per_gpu", r.tiers.hbm_bytes / GIB);
            json_num(&w, "cxl_per_gpu", r.tiers.cxl_bytes_per_gpu / GIB);
            json_num(&w, "cxl_per_domain", r.tiers.cxl_bytes_per_domain / GIB);
            json_num(&w, "cxl_capacity_per_domain", r.tiers.cxl_capacity_per_domain / GIB);
            json_obj_end(&w);
            json_arr_begin(&w, "domains");
            for (uint32_t d = 0; d < r.ndomains; d++) {
                const train_cxl_domain *D = &r.domains[d];
                json_obj_begin(&w, NULL);
                json_u64(&w, "domain", d);
                json_u64(&w, "nodes", D->nodes);
                json_u64(&w, "copies", D->copies);
                json_num(&w, "busy_s", D->busy_s);
                json_num(&w, "read_gbps", D->read_gbps);
                json_num(&w, "write_gbps", D->write_gbps);
                json_obj_begin(&w, "read_latency_ns");
                json_num(&w, "mean", D->read_lat_ns[0]);
                json_num(&w, "p50", D->read_lat_ns[1]);
                json_num(&w, "p99", D->read_lat_ns[2]);
                json_num(&w, "max", D->read_lat_ns[3]);
                json_obj_end(&w);
                json_obj_begin(&w, "devload");
                json_num(&w, "light", D->devload[0]);
                json_num(&w, "optimal", D->devload[1]);
                json_num(&w, "moderate", D->devload[2]);
                json_num(&w, "severe", D->devload[3]);
                json_obj_end(&w);
                json_arr_begin(&w, "devices");
                for (uint32_t dv = 0; dv < D->devices; dv++) {
                    json_obj_begin(&w, NULL);
                    json_u64(&w, "device", dv);
                    json_num(&w, "read_gbps", D->dev_read_gbps[dv]);
                    json_num(&w, "write_gbps", D->dev_write_gbps[dv]);
                    json_obj_begin(&w, "devload");
                    json_num(&w, "light", D->dev_devload[dv][0]);
                    json_num(&w, "optimal", D->dev_devload[dv][1]);
                    json_num(&w, "moderate", D->dev_devload[dv][2]);
                    json_num(&w, "severe", D->dev_devload[dv][3]);
                    json_obj_end(&w);
                    json_obj_end(&w);
                }
                json_arr_end(&w);
                json_obj_end(&w);
            }
            json_arr_end(&w);
            json_obj_end(&w);
        }
        json_u64(&w, "kernels", r.kernels);
        json_u64(&w, "kernels_measured", r.kernels_measured);
        json_num(&w, "wall_seconds", wall);
        json_obj_end(&w);
    }
    rc = write_outputs(rc, outs, of, &w, cfg, NULL, 0, &e);
    train_result_free(&r);
    optimes_free(ot);
    free(x);
    return rc ? fail(&e) : 0;
}

/* ---- sweep ---- */

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
    double t = now_s();
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

/* Rows in point order as CSV and JSON lines, written all or none. */
static int sweep_write(const sweep_spec *sp, char **rows, const char *csv, const char *jsonl, cxl_err *e)
{
    char *buf[2] = { NULL, NULL };
    size_t len[2] = { 0, 0 };
    FILE *m[2] = { csv ? open_memstream(&buf[0], &len[0]) : NULL, jsonl ? open_memstream(&buf[1], &len[1]) : NULL };
    int bad = (csv && !m[0]) || (jsonl && !m[1]);
    if (m[0])
        sweeprow_csv_header(m[0], sp);
    for (size_t k = 0; k < sp->npoints && !bad; k++) {
        if (m[0])
            bad |= sweeprow_csv(m[0], sp, rows[k]) != 0;
        if (m[1])
            bad |= sweeprow_jsonl(m[1], sp, rows[k]) != 0;
    }
    for (int i = 0; i < 2; i++)
        if (m[i])
            bad |= fclose(m[i]) != 0;
    const char *paths[2], *data[2];
    size_t lens[2], n = 0;
    if (csv)
        paths[n] = csv, data[n] = buf[0], lens[n++] = len[0];
    if (jsonl)
        paths[n] = jsonl, data[n] = buf[1], lens[n++] = len[1];
    int rc = bad ? cxl_errf(e, CXL_ENOMEM, "out of memory writing the sweep's rows")
                 : outfile_write_all(paths, data, lens, n, e);
    free(buf[0]);
    free(buf[1]);
    return rc;
}

/* The summary: points by status, then the best (sweeprow_rank_column: shortest iteration, least memory,
 * lowest idle latency). */
static void sweep_summary(FILE *so, const sweep_spec *sp, char **rows)
{
    static const char *const st[] = { "ok", "invalid", "infeasible", "error", "crashed" };
    size_t count[5] = { 0 }, nok = 0;
    size_t *ok = malloc(sp->npoints * sizeof *ok);
    double *key = malloc(sp->npoints * sizeof *key);
    int col = 1 + (int)sp->naxes + sweeprow_rank_column(sp);
    for (size_t k = 0; k < sp->npoints; k++) {
        char **c;
        if (sweeprow_split(rows[k], &c) < 0)
            continue;
        for (int i = 0; i < 5; i++)
            if (!strcmp(c[1 + sp->naxes], st[i]))
                count[i]++;
        if (ok && key && !strcmp(c[1 + sp->naxes], "ok")) {
            /* insertion by (key, point): O(points x best) at most, stable, independent of -j */
            double v = strtod(c[col], NULL);
            size_t at = nok < sp->best ? nok : sp->best;
            while (at > 0 && key[at - 1] > v)
                at--;
            if (at < sp->best) {
                size_t last = nok < sp->best ? nok : sp->best - 1;
                memmove(&ok[at + 1], &ok[at], (last - at) * sizeof *ok);
                memmove(&key[at + 1], &key[at], (last - at) * sizeof *key);
                ok[at] = k, key[at] = v;
                nok += nok < sp->best;
            }
        }
        free(c);
    }
    fprintf(so, "sweep %s: %zu points (%llu before the filter): %zu ok, %zu invalid, %zu infeasible, %zu error, "
            "%zu crashed\n", sp->path, sp->npoints, (unsigned long long)sp->product, count[0], count[1], count[2],
            count[3], count[4]);
    if (nok)
        fprintf(so, "best %zu by %s:\n", nok, sweeprow_column(sp, sweeprow_rank_column(sp)));
    for (size_t i = 0; i < nok && ok; i++) {
        char **c;
        if (sweeprow_split(rows[ok[i]], &c) < 0)
            break;
        fprintf(so, "  %2zu. point %s:", i + 1, c[0]);
        for (size_t a = 0; a < sp->naxes; a++)
            fprintf(so, " %s=%s", sp->axes[a].key, c[1 + a]);
        const char *const *r = (const char *const *)c + 1 + sp->naxes;
        if (sp->command == SWEEP_PROBE)
            fprintf(so, "  idle %.1f ns (x%.2f of local DDR), read %.1f GB/s, write %.1f GB/s\n",
                    strtod(r[SWEEPROW_P_IDLE], NULL), strtod(r[SWEEPROW_P_RATIO], NULL),
                    strtod(r[SWEEPROW_P_BW0], NULL), strtod(r[SWEEPROW_P_BW0 + 3], NULL));
        else if (sp->command == SWEEP_TRAIN)
            fprintf(so, " (dp %s)  %s s, %.0f tokens/s, MFU %.1f %%, %.2f GiB per GPU\n", r[SWEEPROW_DP],
                    r[SWEEPROW_ITERATION], strtod(r[SWEEPROW_TOKENS], NULL), 100 * strtod(r[SWEEPROW_MFU], NULL),
                    strtod(r[SWEEPROW_MEM0 + 4], NULL));
        else
            fprintf(so, " (dp %s)  %.2f GiB per GPU\n", r[SWEEPROW_DP], strtod(r[SWEEPROW_MEM0 + 4], NULL));
        free(c);
    }
    free(ok);
    free(key);
}

/* Options of sweep: SPEC [--csv FILE] [--jsonl FILE] [-j N] [--resume]. 0 or the usage exit status. */
static int sweep_args(int argc, char **argv, const char **spec, const char **csv, const char **jsonl, int *jobs,
                      int *resume)
{
    *spec = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int val = !strcmp(a, "--csv") || !strcmp(a, "--jsonl") || !strcmp(a, "-j") || !strcmp(a, "--jobs");
        if (val && i + 1 >= argc)
            return usage_error("sweep: %s needs a value", a);
        if (!strcmp(a, "--csv"))
            *csv = argv[++i];
        else if (!strcmp(a, "--jsonl"))
            *jsonl = argv[++i];
        else if (val) {
            long long j = whole(argv[++i], 1, SWEEPRUN_MAX_JOBS);
            if (j < 0)
                return usage_error("sweep: %s: '%s' is not a number of worker processes from 1 to %d", a, argv[i],
                                   SWEEPRUN_MAX_JOBS);
            *jobs = (int)j;
        } else if (!strcmp(a, "--resume"))
            *resume = 1;
        else if (a[0] == '-' && a[1])
            return usage_error("sweep: unknown option '%s'", a);
        else if (*spec)
            return usage_error("sweep: only one SPEC may be given ('%s')", a);
        else
            *spec = a;
    }
    if (!*spec)
        return usage_error("sweep: name a sweep file (e.g. configs/sweeps/gpt3-175b-1024-layouts.yaml)%s", "");
    if (!*csv && !*jsonl)
        *csv = "-";
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

static int cmd_sweep(int argc, char **argv, const cmdline *cl)
{
    const char *spec, *csv = NULL, *jsonl = NULL;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = ncpu < 1 ? 1 : ncpu > SWEEPRUN_MAX_JOBS ? SWEEPRUN_MAX_JOBS : (int)ncpu, resume = 0;
    int urc = sweep_args(argc, argv, &spec, &csv, &jsonl, &jobs, &resume);
    if (urc)
        return urc;
    const char *outs[2] = { csv, jsonl };
    FILE *so = summary_stream(outs, 2);
    cxl_err e;
    cxl_err_clear(&e);
    if (check_outputs(outs, 2, &spec, 1, &e))
        return fail(&e);
    sweep_spec *sp = malloc(sizeof *sp);
    if (!sp || sweep_load(spec, cl->ov, sp, &e)) {
        if (!sp)
            cxl_errf(&e, CXL_ENOMEM, "out of memory");
        free(sp);
        return fail(&e);
    }
    if (check_sweep_outputs(outs, 2, sp, cl->ov, &e)) {
        sweep_free(sp);
        free(sp);
        return fail(&e);
    }
    char jpath[1100];
    sweepjournal_path(csv && strcmp(csv, "-") ? csv : jsonl, jpath, sizeof jpath);
    char **rows = calloc(sp->npoints, sizeof *rows);
    size_t *todo_ix = malloc(sp->npoints * sizeof *todo_ix);
    uint64_t *todo = malloc(sp->npoints * sizeof *todo);
    char **fresh = calloc(sp->npoints, sizeof *fresh);
    sweep_ctx c = { sp, todo_ix, rows, NULL, NULL, 0, 0, now_s(), 0, isatty(2), 0, &e, 0 };
    size_t got = 0, n = 0;
    int rc = rows && todo_ix && todo && fresh ? 0 : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc)
        rc = sweep_journal(&c, jpath, resume, &got, so, &e);
    for (size_t k = 0; !rc && k < sp->npoints; k++)
        if (!rows[k])
            todo_ix[n] = k, todo[n++] = sp->points[k];
    c.total = n;
    /* test hooks (tests/cli/sweep.sh): a worker that crashes, a sweep interrupted after N points */
    const char *crash = getenv("CXLSIM_TEST_SWEEP_CRASH"), *stop = getenv("CXLSIM_TEST_SWEEP_STOP_AFTER");
    c.stop_after = stop ? (size_t)strtoull(stop, NULL, 10) : 0;
    sweeprun_opts o = { jobs, cl->ov, sweep_done, &c, crash ? strtoll(crash, NULL, 10) : -1 };
    if (!rc)
        rc = sweeprun_run(sp, todo, n, &o, fresh, &e);
    for (size_t i = 0; i < n; i++)
        if (fresh[i])
            rows[todo_ix[i]] = fresh[i];
    if (c.shown)
        fprintf(stderr, "\r%78s\r", "");
    if (c.journal && fclose(c.journal) && !rc)
        rc = cxl_errf(&e, CXL_EIO, "%s: cannot write the sweep's journal", jpath);
    if (!rc && !(rc = sweep_write(sp, rows, csv, jsonl, &e))) {
        if (jpath[0])
            unlink(jpath);
        sweep_summary(so, sp, rows);
    }
    for (size_t k = 0; rows && k < sp->npoints; k++)
        free(rows[k]);
    free(rows);
    free(todo_ix);
    free(todo);
    free(fresh);
    sweep_free(sp);
    free(sp);
    return rc ? (rc == CXL_EUSAGE ? usage_error("%s", e.msg) : fail(&e)) : 0;
}

/* ---- ops ---- */

static int cmd_ops(int argc, char **argv, const cmdline *cl)
{
    static const char *const opts[] = { "--out=", "--times", NULL };
    const char *vals[2] = { NULL, NULL }, *exp;
    int urc = experiment_args(argc, argv, "ops", opts, vals, &exp);
    if (urc)
        return urc;
    const char *out_path = vals[0];
    int with_times = vals[1] != NULL;
    cxl_err e;
    cxl_err_clear(&e);
    if (check_outputs(&out_path, 1, &exp, 1, &e))
        return fail(&e);
    expcfg *x = NULL;
    if (load_experiment(exp, cl->ov, &x, &e))
        return fail(&e);
    if (check_experiment_outputs(&out_path, 1, x, &e)) {
        free(x);
        return fail(&e);
    }
    opgraph *g = malloc(sizeof *g);
    int rc = g ? opgraph_build(&x->model, &x->train, g, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    int64_t times[OPGRAPH_MAX_OPS];
    char *buf = NULL;
    size_t len = 0;
    if (!rc) {
        /* the optimizer kernels of the first and the last stage */
        gpumem m0, m1;
        gpumem_stage(&x->model, &x->train, 0, &m0);
        gpumem_stage(&x->model, &x->train, x->train.pp - 1, &m1);
        uint64_t dp = x->train.zero >= 1 ? x->train.dp : 1;
        if ((rc = opgraph_optimizer_op(g, &x->train, (m0.params + dp - 1) / dp, &e)) >= 0)
            rc = opgraph_optimizer_op(g, &x->train, (m1.params + dp - 1) / dp, &e);
        rc = rc < 0 ? rc : 0;
    }
    if (!rc) {
        for (uint32_t i = 0; i < g->nops; i++)
            times[i] = compute_op_ps(&x->gpu, &g->ops[i]);
        FILE *f = open_memstream(&buf, &len);
        char src[256];
        snprintf(src, sizeof src, "cxlsim ops %s%s", x->name, with_times ? " --times (modelled, not measured)" : "");
        if (!f)
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        else {
            rc = optimes_write_list(f, g->ops, g->nops, x->gpu.name, src, with_times ? times : NULL);
            if (rc)
                cxl_errf(&e, rc, "could not write the kernel list");
            fclose(f);
        }
    }
    if (!rc) {
        if (out_path)
            rc = outfile_write(out_path, buf, len, &e);
        else
            fwrite(buf, 1, len, stdout);
    }
    free(buf);
    free(g);
    free(x);
    return rc ? fail(&e) : 0;
}

static int cmd_backends(void)
{
    for (const char *const *n = cxl_backend_names(); *n; n++) {
        const char *builds = cxl_backend_rtl_builds(*n);
        printf("%-10s %s%s%s%s\n", *n, cxl_backend_status(*n), *builds ? " (kernel builds: " : "", builds,
               *builds ? ")" : "");
    }
    return 0;
}

static int cmd_check(int argc, char **argv, const cmdline *cl)
{
    if (argc != 2)
        return usage_error("check: expected one DEVICE%s", "");
    devcfg c;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load_with(argv[1], cl->ov, &c, &e) || devcfg_to_params(&c, &p, &e))
        return fail(&e);
    printf("%s: %s\n", c.name, c.description);
    printf("  model clock        %.3f MHz (DRAM command clock)\n", p.clk_khz / 1000.0);
    printf("  path               %s\n", p.link_present ? "CXL link" : "local DDR (no link)");
    printf("  requesters x tags  %u x %u\n", p.requesters, p.tags);
    printf("  host path          %u cycles each way\n", p.host_req_cycles);
    if (p.link_present) {
        printf("  flit time          %llu/%llu cycles (serialization %u, PHY %u)\n",
               (unsigned long long)p.link.flit_cost, (unsigned long long)p.link.flit_inc, p.link.ser_cycles,
               p.link.phy_cycles);
        printf("  credits            req %u, data %u, drs %u, ndr %u (return %u cycles)\n", p.link.m2s_req_credits,
               p.link.m2s_data_credits, p.link.s2m_data_credits, p.link.s2m_rsp_credits,
               p.link.credit_return_cycles);
        printf("  controller         %u + %u cycles, ingress %u, response %u\n", p.ctrl.req_latency_cycles,
               p.ctrl.rsp_latency_cycles, p.ctrl.ingress_depth, p.ctrl.response_depth);
    }
    const cxl_dram_params *d = &p.dram;
    printf("  DRAM               %s, %u channels, %u ranks x %u bank groups x %u banks, %u rows x %u lines\n",
           d->std == CXL_DDR5 ? "DDR5" : "DDR4", d->channels, d->ranks, d->bankgroups, d->banks, d->rows,
           d->columns);
    printf("  timing (cycles)    tRCD %u tCL %u tRP %u tRAS %u tRC %u tCWL %u tWR %u tRTP %u tBL %u\n", d->tRCD,
           d->tCL, d->tRP, d->tRAS, d->tRC, d->tCWL, d->tWR, d->tRTP, d->tBL);
    printf("                     tCCD_S/L %u/%u tCCD_L_WR %u tRRD_S/L %u/%u tFAW %u tWTR_S/L %u/%u tRTW %u\n",
           d->tCCD_S, d->tCCD_L, d->tCCD_L_WR, d->tRRD_S, d->tRRD_L, d->tFAW, d->tWTR_S, d->tWTR_L, d->tRTW);
    printf("                     tREFI %u tRFC %u\n", d->tREFI, d->tRFC);
    return 0;
}

static void json_lat(json_w *w, const char *key, const double v[4])
{
    json_obj_begin(w, key);
    json_num(w, "mean", v[0]);
    json_num(w, "p50", v[1]);
    json_num(w, "p99", v[2]);
    json_num(w, "max", v[3]);
    json_obj_end(w);
}

/* {"m2s": v[0], "s2m": v[1]} */
static void json_dirs(json_w *w, const char *key, const double v[2])
{
    json_obj_begin(w, key);
    json_num(w, "m2s", v[0]);
    json_num(w, "s2m", v[1]);
    json_obj_end(w);
}

static void json_window_stats(json_w *w, const char *key, const window_stats *s)
{
    static const char *const cls[CXL_NCLASS] = { "req", "rwd", "drs", "ndr" };
    static const char *const dl[4] = { "light", "optimal", "moderate", "severe" };
    json_obj_begin(w, key);
    json_num(w, "read_gbps", s->read_gbps);
    json_num(w, "write_gbps", s->write_gbps);
    json_lat(w, "read_latency_ns", s->read_lat_ns);
    json_lat(w, "write_latency_ns", s->write_lat_ns);
    json_u64(w, "reads", s->reads);
    json_u64(w, "writes", s->writes);
    json_obj_begin(w, "flits");
    json_u64(w, "m2s", s->flits[0]);
    json_u64(w, "s2m", s->flits[1]);
    json_u64(w, "m2s_all_data", s->data_flits[0]);
    json_u64(w, "s2m_all_data", s->data_flits[1]);
    json_obj_end(w);
    json_dirs(w, "link_utilisation", s->link_utilisation);
    json_dirs(w, "slot_utilisation", s->slot_utilisation);
    json_obj_begin(w, "credit_stalls");
    for (int c = 0; c < CXL_NCLASS; c++)
        json_u64(w, cls[c], s->credit_stalls[c]);
    json_obj_end(w);
    json_num(w, "row_buffer_hit_rate", s->row_hit_rate);
    json_u64(w, "row_conflicts", s->row_conflicts);
    json_u64(w, "refreshes", s->refreshes);
    json_num(w, "ingress_occupancy_mean", s->ingress_mean);
    json_u64(w, "ingress_occupancy_max", s->ingress_max);
    json_num(w, "dram_queue_occupancy_mean", s->dram_queue_mean);
    json_obj_begin(w, "devload");
    for (int k = 0; k < 4; k++)
        json_num(w, dl[k], s->devload[k]);
    json_obj_end(w);
    json_u64(w, "switch_stalls", s->switch_stalls);
    json_obj_end(w);
}

/* v formatted with fmt, or "n/a" where it is NaN (nothing measured) */
static void fmt_na(char *buf, size_t n, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, fmt, v);
}

/* Row label of bandwidth mix i of a probe (i == r->nbw: the single stream). */
static void probe_mix_label(char *buf, size_t n, const probe_result *r, uint32_t i)
{
    if (i == r->nbw)
        snprintf(buf, n, "1 stream, reads");
    else if (r->bw_mix[i][1] == 0)
        snprintf(buf, n, "%u:%u (reads)", r->bw_mix[i][0] ? 100 : 0, 0u);
    else if (r->bw_mix[i][0] == 0)
        snprintf(buf, n, "0:100 (writes)");
    else
        snprintf(buf, n, "%u:%u", r->bw_mix[i][0], r->bw_mix[i][1]);
}

/* JSON key of bandwidth mix i: read_only, rw_2_1, rw_1_1, write_only by default, else "R:W". */
static void probe_mix_key(char *buf, size_t n, const probe_opts *o, const probe_result *r, uint32_t i)
{
    static const char *const def[4] = { "read_only", "rw_2_1", "rw_1_1", "write_only" };
    if (!o->nmixes && i < 4)
        snprintf(buf, n, "%s", def[i]);
    else
        snprintf(buf, n, "%u:%u", r->bw_mix[i][0], r->bw_mix[i][1]);
}

static void json_curve_points(json_w *w, const char *key, const probe_curve *c)
{
    json_arr_begin(w, key);
    for (uint32_t i = 0; i < c->npoints; i++) {
        json_obj_begin(w, NULL);
        json_num(w, "offered_gbps", c->pt[i].offered_gbps);
        json_num(w, "achieved_gbps", c->pt[i].achieved_gbps);
        json_num(w, "mean_latency_ns", c->pt[i].mean_latency_ns);
        json_num(w, "p99_latency_ns", c->pt[i].p99_latency_ns);
        json_obj_end(w);
    }
    json_arr_end(w);
}

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

static int cmd_probe(int argc, char **argv, const cmdline *cl)
{
    const char *device = "asic", *reference = "local-ddr5", *json_path = NULL, *csv_path = NULL;
    probe_opts o;
    probe_default_opts(&o);
    int have_device = 0;
    int quiet = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--quick")) {
            o.idle_samples = 200;
            o.warmup_us = 5;
            o.window_us = 10;
            o.curve_points = 6;
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *const with_val[] = { "--backend", "--reference", "--json",   "--csv",    "--curve-mix",
                                         "--trace-fst", "--samples", "--warmup", "--window", "--points",
                                         "--mixes",   "--arrivals", "--seed" };
        int needs = 0;
        for (size_t k = 0; k < sizeof with_val / sizeof with_val[0]; k++)
            if (!strcmp(a, with_val[k]))
                needs = 1;
        if (needs && i + 1 >= argc)
            return usage_error("%s needs a value", a);
        int x = xrt_option(argc, argv, &i, &o.bo);
        if (x < 0)
            return -x;
        if (x)
            continue;
        if (!strcmp(a, "--backend"))
            o.backend = argv[++i];
        else if (!strcmp(a, "--trace-fst"))
            o.bo.trace_fst = argv[++i];
        else if (!strcmp(a, "--reference"))
            reference = argv[++i];
        else if (!strcmp(a, "--json"))
            json_path = argv[++i];
        else if (!strcmp(a, "--csv"))
            csv_path = argv[++i];
        else if (!strcmp(a, "--curve-mix")) {
            if (parse_mix(argv[++i], &o.curve_rd, &o.curve_wr))
                return usage_error("--curve-mix: '%s' is not R:W (e.g. 2:1, each 0-255, not both 0)", argv[i]);
        } else if (!strcmp(a, "--mixes")) {
            if (probe_parse_mixes(&o, argv[++i]))
                return usage_error("--mixes: '%s' is not a list of R:W (e.g. 100:0,90:10,80:20; each 0-255, not "
                                   "both 0; at most 16)", argv[i]);
        } else if (!strcmp(a, "--arrivals")) {
            const char *v = argv[++i];
            if (!strcmp(v, "staggered"))
                o.arrivals = PROBE_ARRIVALS_STAGGERED;
            else if (!strcmp(v, "poisson"))
                o.arrivals = PROBE_ARRIVALS_POISSON;
            else if (!strcmp(v, "aligned"))
                o.arrivals = PROBE_ARRIVALS_ALIGNED;
            else
                return usage_error("--arrivals: '%s' is not staggered, poisson or aligned", v);
        } else if (!strcmp(a, "--seed")) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*argv[i] == '\0' || *end || argv[i][0] == '-' || v > 0xFFFFFFFFul)
                return usage_error("--seed: '%s' is not a whole number from 0 to 4294967295", argv[i]);
            o.seed = (uint32_t)v;
        } else if (!strcmp(a, "--samples") || !strcmp(a, "--points")) {
            int pts = !strcmp(a, "--points");
            unsigned long lo = pts ? 2 : 1, hi = pts ? PROBE_MAX_POINTS : 1000000;
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*argv[i] == '\0' || *end || argv[i][0] == '-' || v < lo || v > hi)
                return usage_error("%s: '%s' is not a whole number from %lu to %lu", a, argv[i], lo, hi);
            if (pts)
                o.curve_points = (uint32_t)v;
            else
                o.idle_samples = (uint32_t)v;
        } else if (!strcmp(a, "--warmup") || !strcmp(a, "--window")) {
            char *end;
            double v = strtod(argv[++i], &end);
            int win = !strcmp(a, "--window");
            if (*argv[i] == '\0' || *end || !(v >= (win ? 0.001 : 0.0)) || v > 1e6)
                return usage_error("%s: '%s' is not a time in microseconds (%s to 1000000)", a, argv[i],
                                   win ? "0.001" : "0");
            if (win)
                o.window_us = v;
            else
                o.warmup_us = v;
        } else if (!strcmp(a, "--quick")) {
            /* taken before the loop: the options above override it wherever they stand */
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-')
            return usage_error("probe: unknown option '%s'", a);
        else if (have_device)
            return usage_error("probe: only one DEVICE may be given ('%s')", a);
        else {
            device = a;
            have_device = 1;
        }
    }
    cxl_err e;
    cxl_err_clear(&e);
    /* fail fast on anything that would make the run's results unwritable or impossible */
    int found = 0;
    for (const char *const *n = cxl_backend_names(); *n; n++)
        if (!strcmp(*n, o.backend))
            found = 1;
    if (!found)
        return usage_error("unknown backend '%s'; valid: csim, analytical, verilator, xrt", o.backend);
    const char *outs[3] = { json_path, csv_path, o.bo.trace_fst }, *ins[2] = { device, reference };
    FILE *so = summary_stream(outs, 3);
    if (check_outputs(outs, 3, ins, 2, &e))
        return fail(&e);
    devcfg dev, ref;
    if (devcfg_load_with(device, cl->ov, &dev, &e) || devcfg_load(reference, &ref, &e) ||
        check_device_outputs(outs, 3, device, &e) || check_device_outputs(outs, 3, reference, &e))
        return fail(&e);
    if (ref.path != DEVCFG_PATH_LOCAL) {
        fprintf(stderr, "cxlsim: --reference %s: not a local-DDR path (needs 'path: local')\n", reference);
        return 3;
    }
    {
        cxl_params p;
        cxl_backend *b;
        if (devcfg_to_params(&dev, &p, &e) || cxl_backend_open_opts(o.backend, &p, &o.bo, &b, &e))
            return fail(&e);
        cxl_backend_close(b);
    }
    double t0 = now_s();
    probe_result *r = malloc(sizeof *r);
    if (!r) {
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
        return fail(&e);
    }
    progress_ctx pc = { t0, 0, 0, "probing... %5.1f%% of the measurements" };
    if (isatty(2) && !quiet) {
        o.progress = progress_cb;
        o.progress_ctx = &pc;
    }
    int rc = probe_run(&dev, &ref, &o, r, &e);
    progress_clear(&pc);
    if (rc) {
        free(r);
        return fail(&e);
    }
    double wall = now_s() - t0;

    fprintf(so, "cxlsim probe: %s (%s), backend %s\n", dev.name, dev.description, o.backend);
    fprintf(so, "  idle load-to-use latency   %8.1f ns   (random dependent 64 B reads, 1 GiB)\n", r->idle_read_latency_ns);
    fprintf(so, "  local DDR reference        %8.1f ns   (%s)\n", r->local_idle_read_latency_ns, ref.name);
    fprintf(so, "  CXL / local                %8.2f x\n", r->idle_read_latency_ns / r->local_idle_read_latency_ns);
    static const char *const arrivals[3] = { "staggered", "poisson", "aligned" };
    fprintf(so, "  bandwidth, all requesters streaming (per-requester buffers, staggered starts):\n");
    fprintf(so, "    %-16s %10s %12s %12s %9s %9s %9s\n", "mix", "GB/s", "read mean ns", "read p99 ns", "M2S util",
            "S2M util", "row hits");
    for (uint32_t i = 0; i <= r->nbw; i++) {
        /* the last row: one requester alone */
        const window_stats *w = i < r->nbw ? &r->bw_stats[i] : &r->single_stream_stats;
        char mix[32];
        probe_mix_label(mix, sizeof mix, r, i);
        char v[5][16];
        const double val[5] = { w->read_lat_ns[0], w->read_lat_ns[2], 100 * w->link_utilisation[0],
                                100 * w->link_utilisation[1], 100 * w->row_hit_rate };
        for (int k = 0; k < 5; k++)
            fmt_na(v[k], sizeof v[k], k < 2 ? "%.1f" : "%.1f%%", val[k]); /* n/a: no reads, no link */
        fprintf(so, "    %-16s %10.2f %12s %12s %9s %9s %9s\n", mix, i < r->nbw ? r->bw_gbps[i] : r->single_stream_gbps,
                v[0], v[1], v[2], v[3], v[4]);
    }
    int na = 0;
    for (uint32_t c = 0; c < r->ncurves; c++) {
        const probe_curve *cv = &r->curves[c];
        fprintf(so, "  loaded latency, random %u:%u, %s arrivals (100 %% = %.2f GB/s):\n", cv->rd, cv->wr,
                arrivals[o.arrivals], cv->saturation_gbps);
        fprintf(so, "    %12s %12s %12s %12s\n", "offered GB/s", "achieved", cv->rd ? "mean ns" : "wr mean ns",
                cv->rd ? "p99 ns" : "wr p99 ns");
        for (uint32_t i = 0; i < cv->npoints; i++) {
            const probe_point *q = &cv->pt[i];
            char v[3][16];
            const double val[3] = { q->achieved_gbps, q->mean_latency_ns, q->p99_latency_ns };
            for (int k = 0; k < 3; k++) {
                fmt_na(v[k], sizeof v[k], k ? "%.1f" : "%.2f", val[k]);
                na |= isnan(val[k]);
            }
            fprintf(so, "    %12.2f %12s %12s %12s\n", q->offered_gbps, v[0], v[1], v[2]);
        }
    }
    if (na)
        fprintf(so, "    (n/a: nothing completed in the measurement window at that load; a longer --window measures it)\n");
    fprintf(so, "  simulated cycles %llu in %.2f s\n", (unsigned long long)r->simulated_cycles, wall);

    json_w w;
    json_init(&w);
    char *cfg = NULL, *csv = NULL;
    size_t csv_len = 0;
    if (json_path) {
        size_t clen = 0;
        cfg = resolved_devices(&dev, &ref, &clen);
        json_obj_begin(&w, NULL);
        json_provenance(&w, cl, cfg ? cfg : "", clen);
        json_str(&w, "backend", o.backend);
        json_str(&w, "device", dev.name);
        json_str(&w, "device_source", dev.source);
        json_str(&w, "reference", ref.name);
        json_u64(&w, "seed", o.seed);
        json_str(&w, "arrivals", arrivals[o.arrivals]);
        json_num(&w, "idle_read_latency_ns", r->idle_read_latency_ns);
        json_num(&w, "local_ddr_idle_read_latency_ns", r->local_idle_read_latency_ns);
        json_num(&w, "latency_ratio", r->idle_read_latency_ns / r->local_idle_read_latency_ns);
        json_num(&w, "single_stream_gbps", r->single_stream_gbps);
        json_window_stats(&w, "single_stream_stats", &r->single_stream_stats);
        char keys[PROBE_MAX_MIXES][16];
        for (uint32_t i = 0; i < r->nbw; i++)
            probe_mix_key(keys[i], sizeof keys[i], &o, r, i);
        json_obj_begin(&w, "bandwidth_gbps");
        for (uint32_t i = 0; i < r->nbw; i++)
            json_num(&w, keys[i], r->bw_gbps[i]);
        json_obj_end(&w);
        json_obj_begin(&w, "bandwidth_stats");
        for (uint32_t i = 0; i < r->nbw; i++)
            json_window_stats(&w, keys[i], &r->bw_stats[i]);
        json_obj_end(&w);
        json_obj_begin(&w, "curve_mix");
        json_u64(&w, "read", r->curves[0].rd);
        json_u64(&w, "write", r->curves[0].wr);
        json_obj_end(&w);
        json_curve_points(&w, "curve", &r->curves[0]);
        if (o.nmixes) {
            json_arr_begin(&w, "curves");
            for (uint32_t c = 0; c < r->ncurves; c++) {
                json_obj_begin(&w, NULL);
                json_u64(&w, "read", r->curves[c].rd);
                json_u64(&w, "write", r->curves[c].wr);
                json_num(&w, "saturation_gbps", r->curves[c].saturation_gbps);
                json_curve_points(&w, "points", &r->curves[c]);
                json_obj_end(&w);
            }
            json_arr_end(&w);
        }
        json_u64(&w, "simulated_cycles", r->simulated_cycles);
        json_num(&w, "wall_seconds", wall);
        json_obj_end(&w);
    }
    if (!rc && csv_path) {
        uint32_t rows = 0;
        for (uint32_t c = 0; c < r->ncurves; c++)
            rows += r->curves[c].npoints;
        csv = malloc(80 + (size_t)rows * 112);
        if (!csv) {
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        } else {
            /* with --mixes, a first column names each row's mix */
            csv_len = (size_t)sprintf(csv, "%soffered_gbps,achieved_gbps,mean_latency_ns,p99_latency_ns\n",
                                      o.nmixes ? "mix," : "");
            for (uint32_t c = 0; c < r->ncurves; c++)
                for (uint32_t i = 0; i < r->curves[c].npoints; i++) {
                    /* n/a (NaN) is an empty field */
                    const probe_point *q = &r->curves[c].pt[i];
                    const double val[3] = { q->achieved_gbps, q->mean_latency_ns, q->p99_latency_ns };
                    if (o.nmixes)
                        csv_len += (size_t)sprintf(csv + csv_len, "%u:%u,", r->curves[c].rd, r->curves[c].wr);
                    csv_len += (size_t)sprintf(csv + csv_len, "%.6f", q->offered_gbps);
                    for (int k = 0; k < 3; k++)
                        csv_len += isnan(val[k]) ? (size_t)sprintf(csv + csv_len, ",")
                                                 : (size_t)sprintf(csv + csv_len, k ? ",%.3f" : ",%.6f", val[k]);
                    csv_len += (size_t)sprintf(csv + csv_len, "\n");
                }
        }
    }
    rc = write_outputs(rc, outs, NULL, &w, cfg, csv, csv_len, &e);
    free(csv);
    free(r);
    return rc ? fail(&e) : 0;
}

/* compare: a non-negative decimal count (no sign, no suffix) */
static int compare_count(const char *s, uint64_t *out)
{
    if (!*s || strlen(s) > 19 || strspn(s, "0123456789") != strlen(s))
        return -1;
    *out = strtoull(s, NULL, 10);
    return 0;
}

static void compare_json_diff(json_w *w, const char *key, const cmp_diff *d, const char *a, const char *b)
{
    json_obj_begin(w, key);
    json_u64(w, "cycle", d->cycle);
    json_str(w, "unit", d->unit);
    json_str(w, "field", d->field);
    json_str(w, a, d->a);
    json_str(w, b, d->b);
    json_obj_end(w);
}

static int cmd_compare(int argc, char **argv, const cmdline *cl)
{
    const char *device = "asic", *trace_path = NULL, *json_path = NULL, *save_path = NULL;
    const char *backends = "csim,verilator";
    uint64_t nrandom = 1000, seed = 1, max_cycles = 0, win_from = 0, win_to = 0;
    int have_device = 0, have_random = 0, have_seed = 0, have_window = 0, quiet = 0;
    const char *fst_path = NULL;
    cxl_backend_opts bo = { 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *const with_val[] = { "--trace", "--random", "--seed", "--backends", "--max-cycles", "--json",
                                         "--save-trace", "--trace-fst", "--cycles" };
        int needs = 0;
        for (size_t k = 0; k < sizeof with_val / sizeof with_val[0]; k++)
            if (!strcmp(a, with_val[k]))
                needs = 1;
        if (needs && i + 1 >= argc)
            return usage_error("%s needs a value", a);
        int x = xrt_option(argc, argv, &i, &bo);
        if (x < 0)
            return -x;
        if (x)
            continue;
        if (!strcmp(a, "--trace"))
            trace_path = argv[++i];
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--random")) {
            if (compare_count(argv[++i], &nrandom) || nrandom == 0 || nrandom > TRACE_MAX_DESCS)
                return usage_error("--random: '%s' is not a count of descriptors (1 to 10000000)", argv[i]);
            have_random = 1;
        } else if (!strcmp(a, "--seed")) {
            if (compare_count(argv[++i], &seed))
                return usage_error("--seed: '%s' is not a non-negative integer", argv[i]);
            have_seed = 1;
        } else if (!strcmp(a, "--max-cycles")) {
            if (compare_count(argv[++i], &max_cycles) || max_cycles == 0)
                return usage_error("--max-cycles: '%s' is not a positive number of cycles", argv[i]);
        } else if (!strcmp(a, "--backends"))
            backends = argv[++i];
        else if (!strcmp(a, "--json"))
            json_path = argv[++i];
        else if (!strcmp(a, "--save-trace"))
            save_path = argv[++i];
        else if (!strcmp(a, "--trace-fst"))
            fst_path = argv[++i];
        else if (!strcmp(a, "--cycles")) {
            const char *v = argv[++i], *colon = strchr(v, ':');
            char lo[24];
            if (!colon || (size_t)(colon - v) >= sizeof lo)
                return usage_error("--cycles: '%s' is not A:B (model cycles, A <= B)", v);
            snprintf(lo, sizeof lo, "%.*s", (int)(colon - v), v);
            if (compare_count(lo, &win_from) || compare_count(colon + 1, &win_to) || win_from > win_to)
                return usage_error("--cycles: '%s' is not A:B (model cycles, A <= B)", v);
            have_window = 1;
        } else if (a[0] == '-')
            return usage_error("compare: unknown option '%s'", a);
        else if (have_device)
            return usage_error("compare: only one DEVICE may be given ('%s')", a);
        else {
            device = a;
            have_device = 1;
        }
    }
    if (trace_path && have_random)
        return usage_error("compare: --trace and --random exclude each other%s", "");
    if (trace_path && have_seed)
        return usage_error("compare: --seed applies to --random only%s", "");
    if (have_window && !fst_path)
        return usage_error("compare: --cycles applies to --trace-fst only%s", "");
    /* --backends A,B: two names the project knows (A may equal B) */
    char names[2][64];
    const char *comma = strchr(backends, ',');
    if (!comma || comma == backends || !comma[1] || strchr(comma + 1, ',') || (size_t)(comma - backends) >= 64 ||
        strlen(comma + 1) >= 64)
        return usage_error("--backends: '%s' is not A,B (two backend names, e.g. csim,verilator)", backends);
    snprintf(names[0], sizeof names[0], "%.*s", (int)(comma - backends), backends);
    snprintf(names[1], sizeof names[1], "%s", comma + 1);
    for (int s = 0; s < 2; s++) {
        int found = 0;
        for (const char *const *n = cxl_backend_names(); *n; n++)
            if (!strcmp(*n, names[s]))
                found = 1;
        if (!found)
            return usage_error("unknown backend '%s'; valid: csim, analytical, verilator, xrt", names[s]);
    }
    cxl_err e;
    cxl_err_clear(&e);
    char gtkw_path[4096] = "";
    if (fst_path) { /* the waveform and its save file: FILE.fst -> FILE.gtkw, else FILE.gtkw appended */
        if (outfile_is_stdout(fst_path))
            return usage_error("--trace-fst: '%s': the waveform is written to a file (the simulator seeks in it)",
                               fst_path);
        size_t n = strlen(fst_path);
        if (n + 6 > sizeof gtkw_path)
            return usage_error("--trace-fst: the path is longer than %zu characters", sizeof gtkw_path - 6);
        int ext = n > 4 && !strcmp(fst_path + n - 4, ".fst");
        snprintf(gtkw_path, sizeof gtkw_path, "%.*s.gtkw", (int)(ext ? n - 4 : n), fst_path);
    }
    const char *outs[4] = { json_path, save_path, fst_path, fst_path ? gtkw_path : NULL };
    const char *ins[2] = { device, trace_path };
    FILE *so = summary_stream(outs, 2);
    if (check_outputs(outs, 4, ins, 2, &e))
        return fail(&e);
    devcfg dev;
    cxl_params p;
    if (devcfg_load(device, &dev, &e) || check_device_outputs(outs, 4, device, &e) || devcfg_to_params(&dev, &p, &e))
        return fail(&e);
    for (int s = 0; s < 2; s++) { /* not built: say so (and the package) before reading a long trace */
        cxl_backend *b;
        if (!cxl_backend_available(names[s]) && cxl_backend_open(names[s], &p, &b, &e))
            return fail(&e);
    }
    if ((bo.xclbin || bo.xrt_card || bo.xrt_timeout_ms) && strcmp(names[0], "xrt") && strcmp(names[1], "xrt"))
        return usage_error("compare: --xclbin, --card and --xrt-timeout need xrt in --backends (%s)", backends);
    if (fst_path && !cxl_backend_can_trace(names[0]) && !cxl_backend_can_trace(names[1])) {
        cxl_errf(&e, CXL_EUSAGE, "--trace-fst needs a verilator backend that can write waveforms in --backends "
                 "(%s; verilator: CMake option CXLSIM_RTL_TRACE)", backends);
        return fail(&e);
    }
    trace t;
    int rc = trace_path ? trace_load(trace_path, &p, &t, &e) : trace_random(&p, seed, (size_t)nrandom, &t, &e);
    if (rc)
        return fail(&e);
    char *saved = NULL; /* --save-trace: written with --json once the run is done */
    size_t saved_len = 0;
    if (save_path && trace_to_csv(&t, &saved, &saved_len, &e)) {
        trace_free(&t);
        return fail(&e);
    }
    cmp_opts o;
    cmp_default_opts(&o);
    o.backend_a = names[0];
    o.backend_b = names[1];
    o.max_cycles = max_cycles;
    o.bo = &bo;
    cmp_result *r = malloc(sizeof *r);
    if (!r) {
        trace_free(&t);
        free(saved);
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
        return fail(&e);
    }
    double t0 = now_s();
    progress_ctx pc = { t0, 0, 0, "comparing... %5.1f%% of the descriptors" };
    if (isatty(2) && !quiet) {
        o.progress = progress_cb;
        o.progress_ctx = &pc;
    }
    rc = cmp_run(&p, &t, &o, r, &e);
    progress_clear(&pc);
    double wall = now_s() - t0;
    /* the waveform: run again on the verilator side, recording the window */
    uint64_t reached = 0;
    int traced = 0;
    if (!rc && fst_path && (have_window || !r->equal)) {
        if (!have_window) {
            win_from = r->diff.cycle > 200 ? r->diff.cycle - 200 : 0;
            win_to = r->diff.cycle + 50;
        }
        rc = cmp_waveform(&p, &t, &o, fst_path, win_from, win_to, &reached, &e);
        char *text = NULL;
        size_t len = 0;
        if (!rc)
            rc = gtkw_text(fst_path, &p, &text, &len, &e);
        if (!rc)
            rc = outfile_write(gtkw_path, text, len, &e);
        free(text);
        traced = !rc;
    }
    trace_free(&t);
    if (rc) {
        free(r);
        free(saved);
        return fail(&e);
    }
    /* labels: the backend names, told apart when they are the same */
    char la[80], lb[80];
    int same = !strcmp(names[0], names[1]);
    snprintf(la, sizeof la, "%s%s", names[0], same ? " (A)" : "");
    snprintf(lb, sizeof lb, "%s%s", names[1], same ? " (B)" : "");
    fprintf(so, "cxlsim compare: %s (%s), %s vs %s\n", dev.name, dev.description, names[0], names[1]);
    if (trace_path)
        fprintf(so, "  trace        %s: %llu descriptors\n", trace_path, (unsigned long long)r->descriptors);
    else
        fprintf(so, "  trace        random: %llu descriptors, seed %llu\n", (unsigned long long)r->descriptors,
               (unsigned long long)seed);
    if (r->equal && !r->truncated)
        fprintf(so, "  result       equal: %llu descriptors, %llu completions, %llu cycles, statistics identical\n",
               (unsigned long long)r->descriptors, (unsigned long long)r->completions, (unsigned long long)r->cycles);
    else if (r->equal)
        fprintf(so, "  result       equal up to cycle %llu (--max-cycles): %llu of %llu descriptors completed, "
               "statistics identical there\n",
               (unsigned long long)r->cycles, (unsigned long long)r->completions, (unsigned long long)r->descriptors);
    else {
        int w = (int)(strlen(la) > strlen(lb) ? strlen(la) : strlen(lb));
        if (w < 12)
            w = 12;
        fprintf(so, "  result       DIFFERENT: first diverging event at cycle %llu\n", (unsigned long long)r->diff.cycle);
        fprintf(so, "    %-*s %s\n", w, "unit", r->diff.unit);
        fprintf(so, "    %-*s %s\n", w, "field", r->diff.field);
        fprintf(so, "    %-*s %s\n", w, la, r->diff.a);
        fprintf(so, "    %-*s %s\n", w, lb, r->diff.b);
        if (r->located)
            fprintf(so, "  first seen   at cycle %llu: %s, %s: %s %s, %s %s (the statistics locate the earlier event)\n",
                   (unsigned long long)r->seen.cycle, r->seen.unit, r->seen.field, la, r->seen.a, lb, r->seen.b);
        fprintf(so, "  compared     %llu of %llu descriptors completed identically before that\n",
               (unsigned long long)r->completions, (unsigned long long)r->descriptors);
    }
    fprintf(so, "  cost         %llu advance calls per backend, %u runs again to locate, %.2f s\n",
           (unsigned long long)r->advances, r->replays, wall);
    if (traced)
        fprintf(so, "  waveform     %s: model cycles %llu to %llu; view: gtkwave %s\n", fst_path,
               (unsigned long long)win_from, (unsigned long long)(reached < win_to ? reached : win_to), gtkw_path);
    else if (fst_path)
        fprintf(so, "  waveform     none written: the backends agree (--cycles A:B records a window anyway)\n");

    json_w jw;
    json_init(&jw);
    char *cfg = NULL;
    if (json_path) {
        size_t clen = 0;
        cfg = resolved_devices(&dev, NULL, &clen);
        json_obj_begin(&jw, NULL);
        json_provenance(&jw, cl, cfg ? cfg : "", clen);
        json_str(&jw, "device", dev.name);
        json_str(&jw, "device_source", dev.source);
        json_str(&jw, "backend_a", names[0]);
        json_str(&jw, "backend_b", names[1]);
        json_str(&jw, "trace", trace_path ? trace_path : "random");
        json_u64(&jw, "seed", trace_path ? 0 : seed);
        json_u64(&jw, "max_cycles", max_cycles);
        json_str(&jw, "result", r->equal ? "equal" : "different");
        json_u64(&jw, "truncated", (uint64_t)r->truncated);
        json_u64(&jw, "descriptors", r->descriptors);
        json_u64(&jw, "submitted", r->submitted);
        json_u64(&jw, "completions", r->completions);
        json_u64(&jw, "cycles", r->cycles);
        if (!r->equal) {
            compare_json_diff(&jw, "divergence", &r->diff, "a", "b");
            if (r->located)
                compare_json_diff(&jw, "first_seen", &r->seen, "a", "b");
        }
        if (traced) {
            json_obj_begin(&jw, "waveform");
            json_str(&jw, "fst", fst_path);
            json_str(&jw, "gtkw", gtkw_path);
            json_u64(&jw, "from_cycle", win_from);
            json_u64(&jw, "to_cycle", reached < win_to ? reached : win_to);
            json_obj_end(&jw);
        }
        json_u64(&jw, "advances", r->advances);
        json_u64(&jw, "replays", r->replays);
        json_num(&jw, "wall_seconds", wall);
        json_obj_end(&jw);
    }
    rc = write_outputs(rc, outs, NULL, &jw, cfg, saved, saved_len, &e);
    free(saved);
    int equal = r->equal;
    free(r);
    if (rc)
        return fail(&e);
    return equal ? 0 : 8; /* 8: the backends differ (README "Exit codes") */
}

static int cmd_version(void)
{
    printf("cxlsim %s\n", CXLSIM_VERSION);
    printf("  commit          %s\n", CXLSIM_COMMIT);
    printf("  compiler        %s\n", CXLSIM_COMPILER);
    printf("  backends        ");
    int n = 0;
    for (const char *const *b = cxl_backend_names(); *b; b++)
        if (cxl_backend_available(*b))
            printf("%s%s", n++ ? ", " : "", *b);
    printf("\n  JSON schema     %d\n", CXLSIM_SCHEMA_VERSION);
    return 0;
}

/* Take every `--set KEY=VALUE` out of argv[2..] into ov, the other arguments (the command first) into
 * args (argc entries suffice). Returns the count of args, or -(usage exit status). */
static int take_overrides(int argc, char **argv, override_list *ov, char **args)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (i == 1 || strcmp(argv[i], "--set")) {
            args[n++] = argv[i];
            continue;
        }
        if (i + 1 >= argc)
            return -usage_error("--set needs KEY=VALUE (e.g. --set training.tp=8)%s", "");
        cxl_err e;
        cxl_err_clear(&e);
        if (override_parse(ov, argv[++i], &e))
            return e.code == CXL_EUSAGE ? -usage_error("%s", e.msg) : -fail(&e);
    }
    args[n] = NULL;
    return n;
}

static int run_args(int argc, char **argv, const cmdline *cl)
{
    const char *cmd = argv[0];
    if (cl->ov->n && strcmp(cmd, "train") && strcmp(cmd, "memory") && strcmp(cmd, "ops") && strcmp(cmd, "probe") &&
        strcmp(cmd, "check") && strcmp(cmd, "sweep") && strcmp(cmd, "search"))
        return usage_error("%s: --set is an option of train, memory, ops, probe, check, sweep and search only", cmd);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version"))
        return cmd_version();
    if (!strcmp(cmd, "probe"))
        return cmd_probe(argc, argv, cl);
    if (!strcmp(cmd, "train"))
        return cmd_train(argc, argv, cl);
    if (!strcmp(cmd, "ops"))
        return cmd_ops(argc, argv, cl);
    if (!strcmp(cmd, "memory"))
        return cmd_memory(argc, argv, cl);
    if (!strcmp(cmd, "presets"))
        return cmd_presets(argc, argv);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc, argv, cl);
    if (!strcmp(cmd, "backends"))
        return cmd_backends();
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc, argv, cl);
    if (!strcmp(cmd, "sweep"))
        return cmd_sweep(argc, argv, cl);
    if (!strcmp(cmd, "search")) {   /* cmd_search.h: options, report and outputs of its own */
        cxl_err e;
        cxl_err_clear(&e);
        int rc = cmd_search(argc, argv, cl->argc, cl->argv, cl->ov, &e);
        return rc == CXL_EUSAGE ? usage_error("%s", e.msg) : rc ? fail(&e) : 0;
    }
    return usage_error("unknown command '%s'", cmd);
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    override_list ov = { 0 };
    const cmdline cl = { argc, argv, &ov };
    char **args = malloc((size_t)argc * sizeof *args);
    if (!args) {
        fputs("cxlsim: out of memory\n", stderr);
        return 6;
    }
    int n = take_overrides(argc, argv, &ov, args);
    int rc = n < 0 ? -n : run_args(n, args, &cl);
    free(args);
    override_free(&ov);
    return rc;
}

int main(int argc, char **argv)
{
    outfile_install_signal_handlers();
    int rc = run_command(argc, argv);
    cxl_err e;
    cxl_err_clear(&e);
    if (outfile_close_stdout(&e)) {
        char buf[2048];
        cxl_err_format(&e, buf, sizeof buf);
        fprintf(stderr, "cxlsim: %s\n", buf);
        if (!rc)
            rc = cxl_exit_code(e.code);
    }
    return rc;
}
