/* test_train_validation.c - iteration times of Korthikanti et al. (MLSys 2023, arXiv 2205.05198) Table 5:
 * eight measured Megatron-LM runs on Selene (DGX A100), shipped as configs/validation/korthikanti/ (YAML)
 * (one per row, one cluster description, no per-row constants) and compared with the measured times of
 * configs/validation/korthikanti/measured.csv (a copy of ../shared/reference/korthikanti-tab5.csv).
 * Target (issue 3): mean absolute error <= 3 %, maximum <= 6 % (Calculon, SC'23: 3.65 % and 8.87 %).
 * The table printed here is the one in docs/validation.md. */
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

#include "train.h"

#ifndef CXLSIM_SOURCE_DIR
#define CXLSIM_SOURCE_DIR "."
#endif

typedef struct row { char model[64]; char recompute[32]; double measured_s; } row;

/* model,params_b,hidden,heads,layers,gpus,tp,pp,dp,global_batch,micro_batch,pipeline_interleave,recompute,time */
static int read_rows(row *rows, int max)
{
    FILE *f = fopen(CXLSIM_SOURCE_DIR "/configs/validation/korthikanti/measured.csv", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "model,", 6))
            continue;
        char *fld[16];
        int k = 0;
        for (char *p = strtok(line, ",\n"); p && k < 16; p = strtok(NULL, ",\n"))
            fld[k++] = p;
        if (k < 14 || n >= max)
            continue;
        snprintf(rows[n].model, sizeof rows[n].model, "%s", fld[0]);
        for (char *c = rows[n].model; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        snprintf(rows[n].recompute, sizeof rows[n].recompute, "%s", fld[12]);
        rows[n].measured_s = atof(fld[13]);
        n++;
    }
    fclose(f);
    return n;
}

static void korthikanti_table5(void **state)
{
    (void)state;
    row rows[16];
    int n = read_rows(rows, 16);
    assert_int_equal(n, 8);
    double sum = 0, worst = 0;
    printf("| experiment | measured (s) | simulated (s) | error |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, CXLSIM_SOURCE_DIR "/configs/validation/korthikanti/%s-%s.yaml", rows[i].model,
                 strcmp(rows[i].recompute, "full") ? "sel" : "full");
        expcfg *x = malloc(sizeof *x);
        cxl_err e;
        cxl_err_clear(&e);
        if (expcfg_load(path, x, &e))
            fail_msg("%s: %s", path, e.msg);
        train_result r;
        if (train_run(x, NULL, &r, &e))
            fail_msg("%s: %s", path, e.msg);
        double sim = (double)r.iteration_ps / 1e12, err = (sim - rows[i].measured_s) / rows[i].measured_s;
        printf("| %s-%s | %.2f | %.2f | %+.1f %% |\n", rows[i].model, strcmp(rows[i].recompute, "full") ? "sel" : "full",
               rows[i].measured_s, sim, 100 * err);
        sum += fabs(err);
        if (fabs(err) > worst)
            worst = fabs(err);
        train_result_free(&r);
        free(x);
    }
    printf("mean absolute error %.2f %%, maximum %.2f %%\n", 100 * sum / n, 100 * worst);
    assert_true(sum / n <= 0.03);
    assert_true(worst <= 0.06);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(korthikanti_table5) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
