/* bench_search.c - the cost of `cxlsim search` (search.h, docs/search.md): the full search of GPT-3 175B
 * on 1024 A100 (configs/sweeps/gpt3-175b-1024-a100.yaml) and of LLaMA-2 70B with its optimizer offloaded
 * to CXL on 64 H100 (configs/experiments/llama2-70b-cxl-opt-cpu.yaml), every dimension varied, top 10,
 * the best 4 that offload re-run on csim, 2 worker processes. Prints per stage the layouts handled, the
 * wall time and the layouts per second, the engine's mean wall time per layout run, and the CPU time of
 * the whole search (this process and its workers: on a shared machine the figure that load does not move).
 *
 *     build/bench_search [JOBS]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "config/expcfg.h"
#include "explore/search.h"

/* User + system CPU seconds of this process and its waited-for children so far. */
static double cpu_s(void)
{
    struct rusage s, c;
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
           (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) / 1e6;
}

static int one(const char *path, int jobs)
{
    expcfg *x = malloc(sizeof *x);
    search_report *r = malloc(sizeof *r);
    cxl_err e;
    if (!x || !r || expcfg_load(path, x, &e)) {
        fprintf(stderr, "bench_search: %s: %s\n", path, x && r ? e.msg : "out of memory");
        return 1;
    }
    search_opts o;
    search_default_opts(&o);
    o.jobs = jobs;
    double cpu0 = cpu_s();
    int rc = search_run(x, &o, r, &e);
    double cpu = cpu_s() - cpu0;
    if (rc) {
        fprintf(stderr, "bench_search: %s: %s\n", path, e.msg);
        return 1;
    }
    double total = r->wall_s[0] + r->wall_s[1] + r->wall_s[2];
    printf("%s (%s, %llu GPUs): %.2f s in all, %d workers, %.2f s of CPU\n", x->name, x->model.name,
           (unsigned long long)clustercfg_gpus(&x->cluster), total, jobs, cpu);
    printf("  check   %8llu layouts  %7.3f s  %10.0f layouts/s  (%llu invalid, %llu out of memory, %llu feasible)\n",
           (unsigned long long)r->enumerated, r->wall_s[0], (double)r->enumerated / r->wall_s[0],
           (unsigned long long)r->invalid, (unsigned long long)r->infeasible, (unsigned long long)r->feasible);
    printf("  screen  %8llu layouts  %7.3f s  %10.1f layouts/s  (%llu skipped by the bound; engine %.3f s per "
           "layout per worker)\n", (unsigned long long)r->screened, r->wall_s[1],
           r->wall_s[1] > 0 ? (double)r->screened / r->wall_s[1] : 0, (unsigned long long)r->pruned,
           r->screened ? r->wall_s[1] * jobs / (double)r->screened : 0);
    if (r->screened > r->failed) {
        double ok = (double)(r->screened - r->failed);
        printf("          engine per layout run: %.0f events, %.0f CXL cycles in detail; %.2f M events per second "
               "per worker\n", (double)r->screen_events / ok, (double)r->screen_cxl_cycles / ok,
               r->wall_s[1] > 0 ? (double)r->screen_events / (r->wall_s[1] * jobs) / 1e6 : 0);
    }
    printf("  rerun   %8llu layouts  %7.3f s  %10.2f layouts/s  (%s)\n", (unsigned long long)r->rerun, r->wall_s[2],
           r->wall_s[2] > 0 ? (double)r->rerun / r->wall_s[2] : 0, r->rerun ? r->rerun_backend : "no CXL");
    char l[256];
    search_layout_format(&r->best[0].l, r->cxl, l, sizeof l);
    printf("  best    %s: %.4f s per iteration\n", l, (double)r->best[0].screen.iteration_ps / 1e12);
    search_report_free(r);
    free(r);
    free(x);
    return 0;
}

int main(int argc, char **argv)
{
    int jobs = argc > 1 ? atoi(argv[1]) : 2;
    if (jobs < 1 || jobs > SEARCH_MAX_JOBS) {
        fprintf(stderr, "usage: bench_search [JOBS 1-%d]\n", SEARCH_MAX_JOBS);
        return 2;
    }
    int rc = one(CXLSIM_SOURCE_DIR "/configs/sweeps/gpt3-175b-1024-a100.yaml", jobs);
    rc |= one(CXLSIM_SOURCE_DIR "/configs/experiments/llama2-70b-cxl-opt-cpu.yaml", jobs);
    return rc;
}
