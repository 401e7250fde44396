/* cli_run.c - what the commands share between parsing and reporting (cli_run.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli_run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/cfgdump.h"
#include "config/compose.h"

int cli_one_operand(const char *cmd, const char *what, const char *val, const char **slot, int *have)
{
    if (*have)
        return cli_usage(cmd, "%s: only one %s may be given ('%s')", cmd, what, val);
    *slot = val;
    *have = 1;
    return 0;
}

long long cli_whole(const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return (*s && !*end && !errno && s[0] != '-' && s[0] != '+' && v >= lo && v <= hi) ? v : -1;
}

int cli_xrt_option(const char *cmd, int id, const char *val, cxl_backend_opts *bo)
{
    if (id == CLI_ID_XCLBIN) {
        bo->xclbin = val;
    } else if (id == CLI_ID_CARD) {
        bo->xrt_card = val;
    } else {
        long long v = cli_whole(val, 1, 86400000);
        if (v < 0)
            return cli_usage(cmd, "--xrt-timeout: '%s' is not a whole number of milliseconds from 1 to 86400000",
                             val);
        bo->xrt_timeout_ms = (unsigned)v;
    }
    return 0;
}

int cli_backend_known(const char *name)
{
    for (const char *const *n = cxl_backend_names(); *n; n++)
        if (!strcmp(*n, name))
            return 1;
    return 0;
}

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_cb(void *ctx, double frac)
{
    cli_progress *p = ctx;
    double t = cli_now_s();
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

void cli_progress_clear(const cli_progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r%78s\r", "");
}

int cli_check_outputs(const char *const *out, size_t n, const char *const *in, size_t nin, cxl_err *e)
{
    for (size_t i = 0; i < n; i++)
        if (out[i] && outfile_check(out[i], e))
            return e->code;
    return outfile_check_inputs(out, n, in, nin, e);
}

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

int cli_check_experiment_outputs(const char *const *out, size_t n, const expcfg *x, cxl_err *e)
{
    struct cfg_out_check c = { out, n, e };
    return expcfg_each_file(x, check_config_file, &c);
}

int cli_check_device_outputs(const char *const *out, size_t n, const char *device, cxl_err *e)
{
    struct cfg_out_check c = { out, n, e };
    return compose_each_file("devices", device, check_config_file, &c);
}

int cli_check_file_outputs(const char *const *out, size_t n, const char *path, cxl_err *e)
{
    struct cfg_out_check c = { out, n, e };
    return compose_each_file(NULL, path, check_config_file, &c);
}

FILE *cli_summary_stream(const char *const *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (outfile_is_stdout(out[i]))
            return stderr;
    return stdout;
}

char *cli_resolved_experiment(const expcfg *x, size_t *len)
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

char *cli_resolved_devices(const devcfg *a, const devcfg *b, size_t *len)
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

void cli_json_provenance(json_w *w, const cli_ctx *cl, const char *cfg, size_t cfg_len)
{
    char hash[32];
    json_str(w, "cxlsim_version", cl->version);
    json_str(w, "commit", cl->commit);
    json_u64(w, "schema_version", (uint64_t)cl->schema_version);
    json_arr_begin(w, "command_line");
    for (int i = 0; i < cl->argc; i++)
        json_str(w, NULL, cl->argv[i]);
    json_arr_end(w);
    snprintf(hash, sizeof hash, "fnv1a64:%016" PRIx64, cfgdump_fnv1a64(cfg, cfg_len));
    json_str(w, "config_hash", hash);
}

int cli_trace_provenance(ctrace *ct, const cli_ctx *cl, const char *cfg, size_t cfg_len, cxl_err *e)
{
    json_w w;
    json_init(&w);
    json_obj_begin(&w, NULL);
    cli_json_provenance(&w, cl, cfg, cfg_len);
    json_obj_end(&w);
    int rc = w.oom ? cxl_errf(e, CXL_ENOMEM, "out of memory") : ctrace_other_data(ct, w.buf, w.len, e);
    json_free(&w);
    return rc;
}

int cli_write_outputs(int rc, const char *const outs[2], outfile *of[2], json_w *w, char *cfg, const char *other,
                      size_t other_len, cxl_err *e)
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

int cli_load_experiment(const char *exp, const override_list *ov, expcfg **out, cxl_err *e)
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
