/* test_train_validation.c - iteration times of published Megatron-LM runs on Selene (DGX A100 80 GB), one test per
 * row, each an experiment file simulated with the one cluster description dgx-a100:
 *   - Korthikanti et al. (MLSys 2023, arXiv 2205.05198) Table 5: configs/validation/korthikanti/, measured times in
 *     configs/validation/korthikanti/measured.csv (Korthikanti et al. Table 5);
 *   - Narayanan et al. (SC'21, arXiv 2104.04473) Table 1: configs/validation/narayanan/, measured throughput and the
 *     derived iteration times in data/validation/narayanan-sc21-table1.csv.
 *   - NVIDIA Megatron-Bridge 25.11 performance summary (the DGX-H100, DGX-B200 and DGX-GB200 rows the engine can
 *     express):
 *     configs/validation/megatron-bridge/, the table in data/validation/megatron-bridge-25.11.csv (its FP8-MX rows,
 *     MXFP8 on DGX-B200 and GB200, as a table of their own). A row whose
 *     experiment the engine refuses as out of GPU memory (none today) is printed as refused and left out of the errors; the number of rows that
 *     run is asserted.
 * Each row prints its error; each table prints mean absolute, maximum and mean signed error.
 * Goal (issue 30): on each table mean |error| <= 3 %, max <= 6 %, mean signed within +-1.5 %. A table asserts the goal
 * once it meets it and until then the documented bound of docs/validation.md ("Training iteration time"), so
 * the test catches regressions without claiming the goal. The tables printed here are those in docs/validation.md. */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/train.h"

#include "train_fixture.h"

#ifndef CXLSIM_SOURCE_DIR
#define CXLSIM_SOURCE_DIR "."
#endif

#define MAX_ROWS 16

typedef struct row {
    char name[64];      /* experiment file stem (under the table's folder) */
    double measured_s;
    double simulated_s; /* 0 until its test ran; -1: refused as out of GPU memory */
} row;

/* A table's rows and the bounds it is held to: the goal, or a documented bound until the goal is met. */
typedef struct table {
    const char *title, *dir;
    int n;
    row rows[MAX_ROWS];
    double bound_mean_abs, bound_max, bound_signed; /* fractions */
    double goal_mean_abs, goal_max, goal_signed;    /* the goal (signed: 1 = none) */
    int oom_ok;                                     /* rows may be refused as out of GPU memory */
    const char *mx;     /* Megatron-Bridge: "FP8-MX" keeps only the FP8-MX rows, "" all but them; NULL: all */
} table;

typedef struct tables { table k, n, b, x; } tables;

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* Splits a CSV line in place; returns the number of fields (<= max). */
static int split(char *line, char **fld, int max)
{
    int k = 0;
    for (char *p = strtok(line, ",\n"); p && k < max; p = strtok(NULL, ",\n"))
        fld[k++] = p;
    return k;
}

/* Rows of a measured CSV: the experiment name is column name_col, lower-cased, with "-full" or "-sel" from
 * column recompute_col when that is >= 0 (Korthikanti's two rows per model); the time is column time_col.
 *   korthikanti measured.csv: model,params_b,hidden,heads,layers,gpus,tp,pp,dp,global_batch,micro_batch,
 *     pipeline_interleave,recompute,iteration_time_s
 *   narayanan-sc21-table1.csv: model,params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,pct_peak,
 *     aggregate_pflops,micro_batch,ddp,layers_per_virtual_stage,iteration_time_s */
static void read_rows(table *t, const char *path, int name_col, int recompute_col, int time_col)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "model,", 6) || !strncmp(line, "experiment,", 11) ||
            !strncmp(line, "-,", 2))
            continue;
        char *fld[20];
        if (split(line, fld, 20) <= time_col || t->n >= MAX_ROWS)
            continue;
        if (t->mx && (strcmp(fld[4], "FP8-MX") == 0) != (*t->mx != 0)) /* column 4: precision */
            continue;
        row *r = &t->rows[t->n++];
        if (recompute_col >= 0)
            snprintf(r->name, sizeof r->name, "%s-%s", fld[name_col], strcmp(fld[recompute_col], "full") ? "sel" : "full");
        else
            snprintf(r->name, sizeof r->name, "%s", fld[name_col]);
        lower(r->name);
        r->measured_s = atof(fld[time_col]);
    }
    fclose(f);
}

/* bg: bound mean |error|, bound max, bound |mean signed|, then the goal's three (fractions) */
static void table_init(table *t, const char *title, const char *dir, const double bg[6])
{
    t->title = title;
    t->dir = dir;
    t->bound_mean_abs = bg[0];
    t->bound_max = bg[1];
    t->bound_signed = bg[2];
    t->goal_mean_abs = bg[3];
    t->goal_max = bg[4];
    t->goal_signed = bg[5];
}

static int setup(void **state)
{
    tables *T = calloc(1, sizeof *T);
    if (!T)
        return -1;
    /* the goal, met since issue 30 (memory_efficiency and the host overhead fitted on both tables, and since 44db0dc
     * kernel_overhead with them: 1.48 %, 3.36 %, +0.93 %; docs/calibration.md) */
    table_init(&T->k, "Korthikanti et al. Table 5", "korthikanti", (const double[6]){ 0.03, 0.06, 0.015, 0.03, 0.06, 0.015 });
    read_rows(&T->k, CXLSIM_SOURCE_DIR "/configs/validation/korthikanti/measured.csv", 0, 12, 13);
    /* the goal, met since Megatron's batched pipeline exchanges (f2fb486: 1.60 %, 5.92 %, -1.01 %; docs/validation.md;
     * 44db0dc, kernel_overhead fitted: 1.27 %, 4.90 %, -0.61 %);
     * before, the documented bound 2 %, 6.5 %, 1.5 % for 1.61 %, 6.08 %, -1.10 % (the 76B row 0.08 points past the
     * goal's maximum), and until 2026-12-07 8.61 %, 12.40 %, -8.61 %, before the 2021 software's blocking
     * column-parallel backward all-reduce and unfused gradient accumulation were modelled */
    table_init(&T->n, "Narayanan et al. Table 1", "narayanan", (const double[6]){ 0.03, 0.06, 0.015, 0.03, 0.06, 0.015 });
    read_rows(&T->n, CXLSIM_SOURCE_DIR "/data/validation/narayanan-sc21-table1.csv", 0, -1, 15);
    /* documented bound (docs/validation.md): the 2026-12-07 figures of the eight rows that run (Llama 3 8B on H100
     * -12.2 % with Megatron-FSDP's schedule, Llama 3 70B +2.5 %, Llama 3.1 405B -8.5 %, Qwen3-30B-A3B -61.4 % with
     * the fine-grained MoE kernels, Llama 3 8B on B200 -24.8 %; on GB200 NVL72 Llama 3 8B -28.9 %, GPT-OSS-120B
     * -49.4 %, Qwen3-235B-A22B -26.1 %: mean |error| 26.7 %, mean signed -26.1 %; with Llama 3 70B -21.4 % and
     * Llama 3.1 405B -13.8 % on GB200 (commit a2b3270) ten rows, 24.9 % and -24.4 %; with DeepSeek-V3 -27.8 %
     * (83eada2); tightened from 30 %, 68 %, 30 % with Megatron-Core's MoE Python (commit c749ff5: mean |error|
     * 14.8 %, maximum 56.8 % on Qwen3-30B-A3B on H100, mean signed -14.8 %; docs/validation.md, "Megatron-Core's
     * MoE Python") and a margin; the goal is issue 31's (5 % dense, 10 % MoE, 15 % any row; no signed goal).
     * At 44db0dc (kernel_overhead 17.5 us, fitted on the A100 tables, assumed on these GPUs): 11.15 %, 41.98 %,
     * -10.40 % (16.04 %, 56.80 %, -16.04 % with 3 us), the bound unchanged */
    table_init(&T->b, "Megatron-Bridge 25.11", "megatron-bridge", (const double[6]){ 0.20, 0.60, 0.20, 0.05, 0.15, 1 });
    T->b.mx = "";
    read_rows(&T->b, CXLSIM_SOURCE_DIR "/data/validation/megatron-bridge-25.11.csv", 0, -1, 17);
    T->b.oom_ok = 1;
    /* the FP8-MX rows (MXFP8, fp8_recipe: mxfp8), on DGX-B200 and GB200 NVL72: documented bound
     * (docs/validation.md) of the 2026-12-07 figures of the eight rows that run (Llama 3 8B on B200 -30.7 % and
     * on GB200 -35.8 %, Llama 3.1 405B on B200 -23.9 %, DeepSeek-V3 on B200 -52.9 % and on GB200 -22.0 %,
     * Qwen3-30B-A3B on B200 -71.1 % and on GB200 -38.9 %, Qwen3-235B-A22B on B200 -53.8 %: mean |error| 41.1 %,
     * all too fast, as
     * the FP8-CS Blackwell rows and the MoE rows of the table above); tightened from 50 %, 76 %, 50 % with
     * Megatron-Core's MoE Python (commit c749ff5: mean |error| 19.2 %, maximum 32.2 % on Qwen3-30B-A3B on B200,
     * mean signed -13.8 %) and a margin; the goal is issue 31's. At 44db0dc (kernel_overhead 17.5 us assumed):
     * 12.84 %, 29.13 % (GB200 Qwen3-30B-A3B, too slow), -0.51 % (18.54 %, 32.22 %, -13.14 % with 3 us) */
    table_init(&T->x, "Megatron-Bridge 25.11 FP8-MX", "megatron-bridge", (const double[6]){ 0.25, 0.40, 0.20, 0.05, 0.15, 1 });
    T->x.mx = "FP8-MX";
    read_rows(&T->x, CXLSIM_SOURCE_DIR "/data/validation/megatron-bridge-25.11.csv", 0, -1, 17);
    *state = T;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

static void run_row(table *t, int i)
{
    assert_true(i < t->n);
    row *r = &t->rows[i];
    char path[512];
    snprintf(path, sizeof path, CXLSIM_SOURCE_DIR "/configs/validation/%s/%s.yaml", t->dir, r->name);
    expcfg *x = tfx_load_file(path);
    cxl_err e;
    cxl_err_clear(&e);
    train_result res;
    if (train_run(x, NULL, &res, &e)) {
        if (!t->oom_ok || !strstr(e.msg, "out of GPU memory"))
            fail_msg("%s: %s", path, e.msg);
        r->simulated_s = -1;
        printf("VALIDATION %s | %s | measured %.3f s | refused: %.160s\n", t->title, r->name, r->measured_s, e.msg);
        free(x);
        return;
    }
    r->simulated_s = (double)res.iteration_ps / 1e12;
    printf("VALIDATION %s | %s | measured %.3f s | simulated %.3f s | error %+.2f %%\n", t->title, r->name, r->measured_s,
           r->simulated_s, 100 * (r->simulated_s - r->measured_s) / r->measured_s);
    train_result_free(&res);
    free(x);
}

static int summary(const table *t)
{
    double sum_abs = 0, sum = 0, worst = 0;
    int ran = 0;
    printf("%s\n| experiment | measured (s) | simulated (s) | error |\n| --- | --- | --- | --- |\n", t->title);
    for (int i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];
        assert_true(r->simulated_s != 0); /* its test ran */
        if (r->simulated_s < 0) {
            printf("| %s | %.2f | refused (out of GPU memory) | - |\n", r->name, r->measured_s);
            continue;
        }
        ran++;
        double err = (r->simulated_s - r->measured_s) / r->measured_s;
        printf("| %s | %.2f | %.2f | %+.1f %% |\n", r->name, r->measured_s, r->simulated_s, 100 * err);
        sum_abs += fabs(err);
        sum += err;
        if (fabs(err) > worst)
            worst = fabs(err);
    }
    double mean_abs = ran ? sum_abs / ran : 0, mean = ran ? sum / ran : 0;
    int goal = mean_abs <= t->goal_mean_abs && worst <= t->goal_max && fabs(mean) <= t->goal_signed;
    printf("%s: %d of %d rows run; mean absolute error %.2f %%, maximum %.2f %%, mean signed error %+.2f %% (goal <= %g, "
           "<= %g, +-%g: %s)\n", t->title, ran, t->n, 100 * mean_abs, 100 * worst, 100 * mean, 100 * t->goal_mean_abs,
           100 * t->goal_max, 100 * t->goal_signed, goal ? "met" : "not met");
    assert_true(mean_abs <= t->bound_mean_abs);
    assert_true(worst <= t->bound_max);
    assert_true(fabs(mean) <= t->bound_signed);
    return ran;
}

#define ROW(tab, i)                                                                                                    \
    static void tab##_row_##i(void **state) { run_row(&((tables *)*state)->tab, i); }
ROW(k, 0) ROW(k, 1) ROW(k, 2) ROW(k, 3) ROW(k, 4) ROW(k, 5) ROW(k, 6) ROW(k, 7)
ROW(b, 0) ROW(b, 1) ROW(b, 2) ROW(b, 3) ROW(b, 4) ROW(b, 5)
ROW(b, 6) ROW(b, 7) ROW(b, 8) ROW(b, 9) ROW(b, 10)
ROW(b, 11)
ROW(x, 0) ROW(x, 1) ROW(x, 2) ROW(x, 3) ROW(x, 4) ROW(x, 5) ROW(x, 6) ROW(x, 7)
ROW(n, 0) ROW(n, 1) ROW(n, 2) ROW(n, 3) ROW(n, 4) ROW(n, 5) ROW(n, 6) ROW(n, 7) ROW(n, 8) ROW(n, 9)

static void korthikanti_table5(void **state)
{
    const table *t = &((tables *)*state)->k;
    assert_int_equal(t->n, 8);
    summary(t);
}

static void megatron_bridge_25_11(void **state)
{
    const table *t = &((tables *)*state)->b;
    assert_int_equal(t->n, 12);
    /* the rows that run today (2026-12-07, activations as Megatron-Core and Transformer Engine keep them, the
     * uneven pipeline split): Llama 3 8B on H100, B200 and GB200, Llama 3 70B, Llama 3.1 405B, Qwen3-30B-A3B,
     * GPT-OSS-120B, Qwen3-235B-A22B and DeepSeek-V3 (pipeline layout, MLA, MTP) on GB200 NVL72, and since
     * 2026-12-07 Llama 3.1 405B on GB200 (PP16 VP4: FP8 weights without transposes on Blackwell, the recipe's
     * bf16 gradient buffer) and Llama 3 70B on GB200 (Megatron-FSDP with 40 layers' activations offloaded to
     * the Grace CPU's memory); since 2026-12-07 GPT-OSS-120B on H100 too, with the release's recipe (MBS 1, no
     * recomputation in effect: gpt-oss-120b.yaml; refused with the table's MBS 4, docs/validation.md) */
    assert_int_equal(summary(t), 12);
}

/* The FP8-CS rows run every transformer layer in FP8: Megatron-Bridge's performance scripts build the precision
 * with get_precision_config("fp8_cs"), which clears first_last_layers_bf16 (v0.2.0, the 25.11 release,
 * scripts/performance/utils/helpers.py; commit 3135dc04d), and Megatron-Core's is_first_last_bf16_layer reads
 * that flag before num_layers_at_start/end_in_bf16 (megatron/core/fp8_utils.py). Each FP8-CS experiment of
 * the table must say so: no bf16 layers at either end. */
static void megatron_bridge_fp8cs_layers(void **state)
{
    const table *t = &((tables *)*state)->b;
    int fp8cs = 0;
    for (int i = 0; i < t->n; i++) {
        char path[512];
        snprintf(path, sizeof path, CXLSIM_SOURCE_DIR "/configs/validation/%s/%s.yaml", t->dir, t->rows[i].name);
        expcfg *x = tfx_load_file(path);
        if (x->train.precision == GPUCFG_FP8 && x->train.fp8_recipe == TRAINCFG_FP8_TENSORWISE) {
            fp8cs++;
            if (x->train.bf16_layers_start || x->train.bf16_layers_end)
                fail_msg("%s: FP8-CS with bf16 layers (the performance recipe has none)", path);
        }
        free(x);
    }
    /* Llama 3 8B (H100, B200, GB200), Llama 3 70B (H100, GB200), Llama 3.1 405B (H100, GB200), Qwen3-30B-A3B */
    assert_int_equal(fp8cs, 8);
}

static void megatron_bridge_25_11_mx(void **state)
{
    const table *t = &((tables *)*state)->x;
    /* the eight FP8-MX rows (2026-12-07; DeepSeek-V3 on GB200, PP8 VP4, with the pipeline layout key) */
    assert_int_equal(t->n, 8);
    assert_int_equal(summary(t), 8);
}

static void narayanan_table1(void **state)
{
    const table *t = &((tables *)*state)->n;
    assert_int_equal(t->n, 10);
    summary(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(k_row_0), cmocka_unit_test(k_row_1), cmocka_unit_test(k_row_2), cmocka_unit_test(k_row_3),
        cmocka_unit_test(k_row_4), cmocka_unit_test(k_row_5), cmocka_unit_test(k_row_6), cmocka_unit_test(k_row_7),
        cmocka_unit_test(korthikanti_table5),
        cmocka_unit_test(n_row_0), cmocka_unit_test(n_row_1), cmocka_unit_test(n_row_2), cmocka_unit_test(n_row_3),
        cmocka_unit_test(n_row_4), cmocka_unit_test(n_row_5), cmocka_unit_test(n_row_6), cmocka_unit_test(n_row_7),
        cmocka_unit_test(n_row_8), cmocka_unit_test(n_row_9),
        cmocka_unit_test(narayanan_table1),
        cmocka_unit_test(b_row_0), cmocka_unit_test(b_row_1), cmocka_unit_test(b_row_2), cmocka_unit_test(b_row_3),
        cmocka_unit_test(b_row_4), cmocka_unit_test(b_row_5),
        cmocka_unit_test(b_row_6), cmocka_unit_test(b_row_7), cmocka_unit_test(b_row_8), cmocka_unit_test(b_row_9),
        cmocka_unit_test(b_row_10), cmocka_unit_test(b_row_11),
        cmocka_unit_test(megatron_bridge_25_11),
        cmocka_unit_test(megatron_bridge_fp8cs_layers),
        cmocka_unit_test(x_row_0), cmocka_unit_test(x_row_1), cmocka_unit_test(x_row_2), cmocka_unit_test(x_row_3),
        cmocka_unit_test(x_row_4), cmocka_unit_test(x_row_5), cmocka_unit_test(x_row_6),
        cmocka_unit_test(x_row_7),
        cmocka_unit_test(megatron_bridge_25_11_mx),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
