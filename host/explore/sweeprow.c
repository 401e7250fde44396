/* sweeprow.c - a sweep point's row: evaluation, the cell format, CSV and JSON lines (sweeprow.h). */
#define _POSIX_C_SOURCE 200809L
#include "explore/sweeprow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/expcfg.h"
#include "train/gpumem.h"
#include "out/json.h"
#include "devtools/probe.h"
#include "train/tiers.h"
#include "train/train.h"

static const char *const train_columns[] = {
    "status", "tp", "pp", "dp", "micro_batch", "global_batch", "iteration_time_s", "tokens_per_s", "mfu",
    "compute_s", "exposed_tp_comm_s", "exposed_pp_comm_s", "exposed_dp_comm_s", "pipeline_bubble_s",
    "cxl_stall_s", "weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "total_gib", "hbm_gib",
    "reason", NULL
};
static const char *const probe_columns[] = {
    "status", "idle_read_latency_ns", "local_ddr_idle_read_latency_ns", "latency_ratio", "read_only_gbps",
    "rw_2_1_gbps", "rw_1_1_gbps", "write_only_gbps", "simulated_cycles", "reason", NULL
};

int sweeprow_ncols(const sweep_spec *sp) { return sp->command == SWEEP_PROBE ? SWEEPROW_P_NCOLS : SWEEPROW_NCOLS; }

const char *sweeprow_column(const sweep_spec *sp, int col)
{
    return (sp->command == SWEEP_PROBE ? probe_columns : train_columns)[col];
}

int sweeprow_numeric(const sweep_spec *sp, int col) { return col != 0 && col != sweeprow_ncols(sp) - 1; }

int sweeprow_rank_column(const sweep_spec *sp)
{
    return sp->command == SWEEP_PROBE ? SWEEPROW_P_IDLE
         : sp->command == SWEEP_MEMORY ? SWEEPROW_MEM0 + 4 : SWEEPROW_ITERATION;
}

/* A row under construction: cells as text, SWEEPROW_NCOLS after the point and axes. */
typedef struct rowb {
    char cell[SWEEPROW_MAX_COLS][96];
    char reason[2048];
} rowb;

static void num(rowb *r, int col, double v) { snprintf(r->cell[col], sizeof r->cell[col], "%.10g", v); }
static void u64(rowb *r, int col, uint64_t v) { snprintf(r->cell[col], sizeof r->cell[col], "%llu", (unsigned long long)v); }

static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '\t')
            fputs("\\t", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '\\')
            fputs("\\\\", f);
        else
            fputc(*s, f);
}

static char *finish_row(const sweep_spec *sp, uint64_t point, const rowb *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%llu", (unsigned long long)point);
    for (size_t a = 0; a < sp->naxes; a++) {
        fputc('\t', f);
        put_escaped(f, sp->axes[a].vals[sweep_value_index(sp, a, point)]);
    }
    int n = sweeprow_ncols(sp);
    for (int c = 0; c < n; c++) {
        fputc('\t', f);
        put_escaped(f, c == n - 1 ? r->reason : r->cell[c]);
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *sweeprow_failed(const sweep_spec *sp, uint64_t point, const char *status, const char *reason)
{
    rowb r;
    memset(&r, 0, sizeof r);
    snprintf(r.cell[SWEEPROW_STATUS], sizeof r.cell[0], "%s", status);
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    return finish_row(sp, point, &r);
}

static void memory_cells(rowb *r, const gpumem *m, const expcfg *x)
{
    num(r, SWEEPROW_MEM0 + 0, GPUMEM_GIB(m->weights_bytes));
    num(r, SWEEPROW_MEM0 + 1, GPUMEM_GIB(m->gradients_bytes));
    num(r, SWEEPROW_MEM0 + 2, GPUMEM_GIB(m->optimizer_bytes));
    num(r, SWEEPROW_MEM0 + 3, GPUMEM_GIB(m->activations_bytes));
    num(r, SWEEPROW_MEM0 + 4, GPUMEM_GIB(m->total_bytes));
    num(r, SWEEPROW_HBM, GPUMEM_GIB((double)x->gpu.hbm_bytes));
}

static void status(rowb *r, const char *s, const cxl_err *e)
{
    snprintf(r->cell[SWEEPROW_STATUS], sizeof r->cell[0], "%s", s);
    if (e)
        cxl_err_format(e, r->reason, sizeof r->reason);
}

/* The point's run: the layout, memory, then (command train) the iteration. */
static void run_point(const sweep_spec *sp, expcfg *x, rowb *r)
{
    const traincfg *t = &x->train;
    u64(r, SWEEPROW_TP, t->tp);
    u64(r, SWEEPROW_PP, t->pp);
    u64(r, SWEEPROW_DP, t->dp);
    u64(r, SWEEPROW_MICRO_BATCH, t->micro_batch);
    u64(r, SWEEPROW_GLOBAL_BATCH, t->global_batch);
    gpumem m;
    tiers tr;
    cxl_err e;
    cxl_err_clear(&e);
    gpumem_estimate(&x->model, t, &m);
    memory_cells(r, &m, x);
    int rc = tiers_compute(x, &tr);
    if (!rc && (rc = tiers_check(x, &tr, &e)) != 0) {
        status(r, "infeasible", &e);
        return;
    }
    if (rc) {
        status(r, "error", &e);
        return;
    }
    if (sp->command == SWEEP_MEMORY) {
        status(r, "ok", NULL);
        return;
    }
    train_result res;
    if (train_run(x, NULL, &res, &e)) {
        status(r, e.code == CXL_ECONFIG ? "infeasible" : "error", &e);
        return;
    }
    num(r, SWEEPROW_ITERATION, (double)res.iteration_ps / 1e12);
    num(r, SWEEPROW_TOKENS, res.tokens_per_s);
    num(r, SWEEPROW_MFU, res.mfu);
    for (int k = 0; k < TRAIN_BK_N; k++)
        num(r, SWEEPROW_BK0 + k, res.breakdown_s[k]);
    status(r, "ok", NULL);
    train_result_free(&res);
}

/* command probe: the device with the point's overrides, probed against the local-DDR reference. */
static void probe_point_row(const sweep_spec *sp, const override_list *ov, rowb *r)
{
    devcfg *dev = malloc(sizeof *dev), *ref = malloc(sizeof *ref);
    probe_result *res = malloc(sizeof *res);
    cxl_err e;
    cxl_err_clear(&e);
    if (!dev || !ref || !res)
        cxl_errf(&e, CXL_ENOMEM, "out of memory");
    else if (devcfg_load_with(sp->base, ov, dev, &e))
        status(r, e.code == CXL_ECONFIG ? "invalid" : "error", &e);
    else if (devcfg_load(SWEEP_PROBE_REFERENCE, ref, &e))
        status(r, "error", &e);
    else {
        probe_opts o;
        probe_default_opts(&o);
        o.backend = sp->probe_backend;
        if (sp->probe_quick) {
            o.idle_samples = 200;
            o.warmup_us = 5;
            o.window_us = 10;
            o.curve_points = 2;
        }
        if (probe_run(dev, ref, &o, res, &e))
            status(r, e.code == CXL_ELIMIT || e.code == CXL_ECONFIG ? "infeasible" : "error", &e);
        else {
            num(r, SWEEPROW_P_IDLE, res->idle_read_latency_ns);
            num(r, SWEEPROW_P_LOCAL_IDLE, res->local_idle_read_latency_ns);
            num(r, SWEEPROW_P_RATIO, res->idle_read_latency_ns / res->local_idle_read_latency_ns);
            for (int k = 0; k < 4; k++)
                num(r, SWEEPROW_P_BW0 + k, res->bw_gbps[k]);
            u64(r, SWEEPROW_P_CYCLES, res->simulated_cycles);
            status(r, "ok", NULL);
        }
    }
    if (e.code == CXL_ENOMEM)
        status(r, "error", &e);
    free(dev);
    free(ref);
    free(res);
}

char *sweeprow_eval(const sweep_spec *sp, const override_list *global, uint64_t point)
{
    rowb *r = calloc(1, sizeof *r);
    expcfg *x = malloc(sizeof *x);
    override_list ov = { 0 };
    cxl_err e;
    cxl_err_clear(&e);
    char *row = NULL;
    if (r && x && !sweep_point_overrides(sp, global, point, &ov, &e)) {
        if (sp->command == SWEEP_PROBE)
            probe_point_row(sp, &ov, r);
        else if (expcfg_load_with(sp->base, &ov, 0, x, &e))
            status(r, e.code == CXL_ECONFIG ? "invalid" : "error", &e);
        else
            run_point(sp, x, r);
        row = finish_row(sp, point, r);
    }
    override_free(&ov);
    free(x);
    free(r);
    return row;
}

int sweeprow_split(const char *row, char ***cells)
{
    size_t n = 1, len = strlen(row);
    for (const char *s = row; *s; s++)
        n += *s == '\t';
    char **v = malloc(n * sizeof *v + len + 1);
    if (!v)
        return -1;
    char *out = (char *)(v + n);
    size_t k = 0;
    v[k++] = out;
    for (const char *s = row; *s; s++) {
        if (*s == '\t') {
            *out++ = '\0';
            v[k++] = out;
        } else if (*s == '\\' && s[1]) {
            s++;
            *out++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
        } else
            *out++ = *s;
    }
    *out = '\0';
    *cells = v;
    return (int)n;
}

long long sweeprow_point(const char *row)
{
    char *end;
    if (*row < '0' || *row > '9')
        return -1;
    unsigned long long p = strtoull(row, &end, 10);
    return *end == '\t' && p < (1ull << 62) ? (long long)p : -1;
}

static void csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\n\r")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int sweeprow_csv_header(FILE *f, const sweep_spec *sp)
{
    fputs("point", f);
    for (size_t a = 0; a < sp->naxes; a++) {
        fputc(',', f);
        csv_field(f, sp->axes[a].key);
    }
    for (int c = 0; c < sweeprow_ncols(sp); c++)
        fprintf(f, ",%s", sweeprow_column(sp, c));
    fputc('\n', f);
    return 0;
}

int sweeprow_csv(FILE *f, const sweep_spec *sp, const char *row)
{
    char **cells;
    int n = sweeprow_split(row, &cells);
    if (n < 0)
        return -1;
    for (int i = 0; i < n && (size_t)i < 1 + sp->naxes + (size_t)sweeprow_ncols(sp); i++) {
        if (i)
            fputc(',', f);
        csv_field(f, cells[i]);
    }
    fputc('\n', f);
    free(cells);
    return 0;
}

int sweeprow_jsonl(FILE *f, const sweep_spec *sp, const char *row)
{
    char **cells;
    int n = sweeprow_split(row, &cells);
    if (n < 0)
        return -1;
    if ((size_t)n != 1 + sp->naxes + (size_t)sweeprow_ncols(sp)) {
        free(cells);
        return -1;
    }
    json_w w;
    json_init(&w);
    json_obj_begin(&w, NULL);
    json_u64(&w, "point", strtoull(cells[0], NULL, 10));
    json_obj_begin(&w, "inputs");
    for (size_t a = 0; a < sp->naxes; a++)
        json_str(&w, sp->axes[a].key, cells[1 + a]);
    json_obj_end(&w);
    for (int c = 0; c < sweeprow_ncols(sp); c++) {
        const char *v = cells[1 + sp->naxes + c];
        if (!*v)
            json_num(&w, sweeprow_column(sp, c), (double)NAN);
        else if (sweeprow_numeric(sp, c))
            json_num(&w, sweeprow_column(sp, c), strtod(v, NULL));
        else
            json_str(&w, sweeprow_column(sp, c), v);
    }
    json_obj_end(&w);
    int rc = w.oom ? -1 : 0;
    if (!rc) {
        /* one object per line: the writer's line breaks and indentation dropped (strings hold none:
         * a newline in a value is written \u000a) */
        for (size_t i = 0; i < w.len; i++) {
            if (w.buf[i] != '\n') {
                fputc(w.buf[i], f);
                continue;
            }
            while (i + 1 < w.len && w.buf[i + 1] == ' ')
                i++;
        }
        fputc('\n', f);
    }
    json_free(&w);
    free(cells);
    return rc;
}
