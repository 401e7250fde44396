/* bench_trace.c - what the Chrome trace costs: one training iteration without a trace, then with the
 * trace written plain and gzip-compressed (host/out/ctrace.h), each timed (wall and CPU of the process, both
 * threads) with the file's size and the peak resident memory.
 *
 * usage: bench_trace [EXPERIMENT] [--out DIR]
 * Default: the Megatron-1T validation row (configs/validation/korthikanti/megatron-1t-full.yaml: tp 8,
 * pp 64, 512 GPUs), the largest trace the shipped configurations give; files go to DIR (default /tmp) and
 * are removed afterwards. Prints figures; asserts nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/expcfg.h"
#include "train/train.h"

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one iteration; trace to path (NULL: none); prints a line */
static int run(const expcfg *x, const char *label, const char *path)
{
    cxl_err e;
    cxl_err_clear(&e);
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    ctrace *ct = NULL;
    if (path && ctrace_open(&ct, path, 0, INT64_MAX, &e)) {
        fprintf(stderr, "bench_trace: %s\n", e.msg);
        return 1;
    }
    train_opts o = { NULL, ct, NULL, NULL, 0, NULL, { 0 }, NULL };
    train_result r;
    int rc = train_run(x, &o, &r, &e);
    if (rc)
        ctrace_abort(ct);
    else if (ct)
        rc = ctrace_finish(ct, &e);
    if (rc) {
        fprintf(stderr, "bench_trace: %s\n", e.msg);
        return 1;
    }
    double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    struct stat st;
    double mb = path && stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("  %-14s %8.2f s wall  %8.2f s CPU  %9.1f MB  peak RSS %6.0f MB  (%llu events)\n", label, wall, cpu, mb,
           (double)ru.ru_maxrss / 1024.0, (unsigned long long)r.events);
    train_result_free(&r);
    if (path)
        unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    const char *exp = CXLSIM_SOURCE_DIR "/configs/validation/korthikanti/megatron-1t-full.yaml", *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            dir = argv[++i];
        else if (argv[i][0] != '-')
            exp = argv[i];
        else {
            fprintf(stderr, "usage: bench_trace [EXPERIMENT] [--out DIR]\n");
            return 2;
        }
    }
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    if (!x || expcfg_load(exp, x, &e)) {
        fprintf(stderr, "bench_trace: %s\n", x ? e.msg : "out of memory");
        free(x);
        return 1;
    }
    char plain[4096], gz[4096];
    snprintf(plain, sizeof plain, "%s/bench_trace_%ld.json", dir, (long)getpid());
    snprintf(gz, sizeof gz, "%s/bench_trace_%ld.json.gz", dir, (long)getpid());
    printf("bench_trace: %s (%s), %ld CPUs online\n", x->name, exp, sysconf(_SC_NPROCESSORS_ONLN));
    /* peak RSS only grows: the runs go from the smallest expected footprint up */
    int rc = run(x, "no trace", NULL) || run(x, "trace .json.gz", gz) || run(x, "trace .json", plain);
    free(x);
    return rc;
}
