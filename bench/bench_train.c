/* bench_train.c - wall time, events per second and memory of one simulated training iteration (issue 3,
 * section 6; issue 31: a mixture of experts on 2048 GPUs).
 *
 * usage: bench_train [EXPERIMENT] [--runs N]
 * Default: configs/bench/gpt3-175b-1024gpu.yaml (GPT-3 175B on 1024 A100, TP 8, PP 8, DP 16, global batch
 * 1536), then configs/bench/deepseek-v3-2048gpu.yaml (DeepSeek-V3 on 2048 H100, PP 16, EP 64, DP 128,
 * global batch 15360). Prints for each the simulated iteration time (a check that the run is the intended
 * one), the best and median wall time of N runs, events per second, the engine's memory and the process's
 * peak resident set; then, for a dense model, the engine's memory for the same model at growing pipeline
 * depth and layer count, to show how it scales with GPUs x layers (an MoE preset's layer split and memory
 * do not stretch that way). Goals: < 1 s wall, >= 10 M events/s, memory at most linear. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "train/train.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One experiment: its figures, then (a dense model) the scaling table. Returns 0, or 1 on an error. */
static int bench(const char *exp, int runs)
{
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    cxl_err_clear(&e);
    if (!x || expcfg_load(exp, x, &e)) {
        fprintf(stderr, "bench_train: %s\n", x ? e.msg : "out of memory");
        free(x);
        return 1;
    }
    double walls[1000];
    train_result r;
    for (int i = 0; i < runs; i++) {
        double t0 = now_s();
        if (train_run(x, NULL, &r, &e)) {
            fprintf(stderr, "bench_train: %s\n", e.msg);
            free(x);
            return 1;
        }
        walls[i] = now_s() - t0;
        if (i + 1 < runs)
            train_result_free(&r);
    }
    qsort(walls, (size_t)runs, sizeof walls[0], cmp_d);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t gpus = x->train.tp * x->train.pp * x->train.dp;
    printf("experiment          %s (%llu GPUs, %llu layers)\n", x->name, (unsigned long long)gpus,
           (unsigned long long)x->model.layers);
    printf("iteration time      %.4f s simulated\n", (double)r.iteration_ps / 1e12);
    printf("events              %llu (%llu network flows)\n", (unsigned long long)r.events,
           (unsigned long long)r.flows);
    printf("wall                best %.4f s, median %.4f s of %d runs\n", walls[0], walls[runs / 2], runs);
    printf("events per second   %.1f M (best run)\n", (double)r.events / walls[0] / 1e6);
    printf("engine memory       %.2f MiB\n", (double)r.engine_bytes / 1048576.0);
    printf("peak resident set   %.1f MiB (whole process)\n", (double)ru.ru_maxrss / 1024.0);
    train_result_free(&r);
    if (modelcfg_is_moe(&x->model)) {
        free(x);
        return 0;
    }

    /* scaling: pipeline depth x layers (GPUs grow with pp; dp and tp ranks are folded by symmetry) */
    printf("\nscaling (same model shape; pp and layers grow together, micro-batches = 4 pp):\n");
    printf("%6s %8s %8s %12s %14s %16s\n", "pp", "layers", "GPUs", "events", "engine KiB", "bytes/(GPU*layer)");
    for (uint64_t pp = 2; pp <= 32; pp *= 2) {
        expcfg y = *x;
        y.train.pp = pp;
        y.model.layers = 12 * pp;
        y.train.dp = 2;
        y.train.global_batch = 4 * pp * y.train.micro_batch * y.train.dp;
        y.cluster.nodes = y.train.tp * pp * y.train.dp / y.cluster.gpus_per_node;
        y.train.virtual_stages = 1;
        if (train_run(&y, NULL, &r, &e)) {
            printf("%6llu %8llu  skipped: %.120s\n", (unsigned long long)pp, (unsigned long long)y.model.layers, e.msg);
            continue;
        }
        uint64_t g = y.train.tp * pp * y.train.dp;
        printf("%6llu %8llu %8llu %12llu %14.1f %16.2f\n", (unsigned long long)pp, (unsigned long long)y.model.layers,
               (unsigned long long)g, (unsigned long long)r.events, (double)r.engine_bytes / 1024.0,
               (double)r.engine_bytes / (double)(g * y.model.layers));
        train_result_free(&r);
    }
    free(x);
    return 0;
}

int main(int argc, char **argv)
{
    const char *exp = NULL;
    int runs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else
            exp = argv[i];
    }
    if (runs < 1 || runs > 1000)
        runs = 5;
    if (exp)
        return bench(exp, runs);
    if (bench(CXLSIM_SOURCE_DIR "/configs/bench/gpt3-175b-1024gpu.yaml", runs))
        return 1;
    printf("\n");
    return bench(CXLSIM_SOURCE_DIR "/configs/bench/deepseek-v3-2048gpu.yaml", runs);
}
