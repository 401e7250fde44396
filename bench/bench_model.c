/* bench_model.c - simulated model cycles per wall second on a saturating workload (issue 2, section 7).
 *
 * usage: bench_model [DEVICE] [--backend NAME] [--pattern random|seq] [--mix R:W] [--cycles N] [--no-csim]
 *                    [--idle]
 * Default: the ASIC preset, every requester issuing random 64 B reads with all tags outstanding.
 * Prints cycles simulated, wall seconds, cycles per second, the RTL's kernel clocks per model cycle (verilator:
 * the clocks the verilated kernel ran, the host protocol's included, and what they would give on a card at
 * the platforms' 300 MHz), and what the model did (bandwidth, flits,
 * DRAM commands) so the figure can be checked to be a saturating run. With a backend other than csim
 * (issue 5: --backend verilator) it also runs csim on the same workload and prints the ratio, unless
 * --no-csim (the verilated kernel's profile-guided build runs it so: cmake/rtl_pgo.cmake). Default
 * cycles: 5 M on csim, 20 000 on the others.
 * --idle submits nothing: the rate at which a backend steps a model with no traffic at all, the floor of
 * its per-cycle cost (docs/rtl.md "Simulation speed"). csim skips idle stretches exactly
 * (docs/cxl-model.md section 2.4), so it gets no ratio there. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cxl/backend.h"
#include "config/devcfg.h"
#include "workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct run {
    double wall;
    cxl_stats st;
    uint64_t clocks; /* kernel clocks of the run (verilator: the RTL's; 0 for the others) */
} run;

/* Every requester streams with all tags outstanding until `cycles` (none when `idle`); 0 or 1 (message
 * printed). */
static int run_workload(const char *backend, const cxl_params *p, const workload *w, int idle,
                        unsigned long long cycles, run *out)
{
    cxl_err e;
    cxl_err_clear(&e);
    cxl_backend *b = NULL;
    cxl_desc d[CXL_MAX_REQ];
    saturating_descs(d, p, w);
    int rc = cxl_backend_open(backend, p, &b, &e);
    if (!rc && !idle)
        rc = cxl_backend_submit(b, d, p->requesters, &e);
    double t0 = now_s();
    uint64_t c0 = b ? cxl_backend_kernel_clocks(b) : 0;
    while (!rc && cxl_backend_now(b) < cycles) {
        rc = cxl_backend_advance(b, cycles, 0, &e);
        cxl_completion cc[64];
        while (!rc && cxl_backend_poll(b, cc, 64)) {
        }
    }
    out->wall = now_s() - t0;
    out->clocks = b ? cxl_backend_kernel_clocks(b) - c0 : 0;
    if (!rc)
        rc = cxl_backend_stats(b, &out->st, &e);
    cxl_backend_close(b);
    if (rc) {
        char buf[2048];
        cxl_err_format(&e, buf, sizeof buf);
        fprintf(stderr, "bench_model: %s: %s\n", backend, buf);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *backend = "csim";
    workload w = workload_defaults();
    int ref_csim = 1, idle = 0;
    for (int i = 1; i < argc; i++) {
        if (workload_arg(&w, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--no-csim"))
            ref_csim = 0;
        else if (!strcmp(argv[i], "--idle"))
            idle = 1;
        else
            w.device = argv[i];
    }
    int is_csim = !strcmp(backend, "csim");
    int ratio = !is_csim && ref_csim && !idle;
    unsigned long long cycles = w.cycles;
    if (!cycles)
        cycles = is_csim ? 5000000 : 20000; /* the verilated RTL runs thousands of cycles per second */
    devcfg c;
    cxl_params p;
    if (workload_params("bench_model", &w, &c, &p))
        return 1;
    static run r, ref;
    if (run_workload(backend, &p, &w, idle, cycles, &r))
        return 1;
    /* the ratio to the C model: csim on the same workload, long enough to time */
    if (ratio && run_workload("csim", &p, &w, 0, cycles < 5000000 ? 5000000 : cycles, &ref))
        return 1;
    const cxl_stats *st = &r.st;
    double wall = r.wall;
    double secs = (double)st->cycles / (p.clk_khz * 1000.0);
    const cxl_dev_stats *ds = &st->dev[0];
    const cxl_link_stats *ls = &st->link[0];
    if (idle)
        printf("device            %s, idle (no traffic), %u requesters x %u tags\n", c.name, p.requesters, p.tags);
    else
        printf("device            %s, %s %u:%u, %u requesters x %u tags\n", c.name,
               w.pattern == CXL_PAT_SEQ ? "sequential" : "random", w.rd, w.wr, p.requesters, p.tags);
    printf("backend           %s\n", backend);
    printf("model cycles      %llu\n", (unsigned long long)st->cycles);
    printf("wall seconds      %.3f\n", wall);
    printf("cycles per second %.4f M\n", st->cycles / wall / 1e6);
    if (r.clocks)
        printf("kernel clocks     %llu: %.3f per model cycle; on a card at 300 MHz %.1f M model cycles per second\n",
               (unsigned long long)r.clocks, (double)r.clocks / (double)st->cycles,
               300.0 * (double)st->cycles / (double)r.clocks);
    if (idle && !is_csim)
        printf("csim              skips idle stretches exactly (docs/cxl-model.md 2.4): no ratio\n");
    if (ratio)
        printf("csim              %.2f M cycles per second (%llu cycles): %s is %.1fx slower\n",
               ref.st.cycles / ref.wall / 1e6, (unsigned long long)ref.st.cycles, backend,
               (ref.st.cycles / ref.wall) / (st->cycles / wall));
    printf("bandwidth         %.2f GB/s (read %.2f, write %.2f)\n", (st->read_bytes + st->write_bytes) / secs / 1e9,
           st->read_bytes / secs / 1e9, st->write_bytes / secs / 1e9);
    printf("read latency      mean %.1f ns, max %.1f ns\n",
           st->read_lat.count ? (double)st->read_lat.sum / st->read_lat.count * 1e6 / p.clk_khz : 0.0,
           st->read_lat.max * 1e6 / p.clk_khz);
    printf("flits             M2S %llu (all-data %llu), S2M %llu (all-data %llu)\n",
           (unsigned long long)ls->flits[0], (unsigned long long)ls->data_flits[0], (unsigned long long)ls->flits[1],
           (unsigned long long)ls->data_flits[1]);
    printf("credit stalls     req %llu rwd %llu drs %llu ndr %llu\n", (unsigned long long)ls->credit_stall[0],
           (unsigned long long)ls->credit_stall[1], (unsigned long long)ls->credit_stall[2],
           (unsigned long long)ls->credit_stall[3]);
    printf("DRAM              RD %llu WR %llu ACT %llu PRE %llu REF %llu conflicts %llu\n",
           (unsigned long long)ds->reads, (unsigned long long)ds->writes, (unsigned long long)ds->acts,
           (unsigned long long)ds->pres, (unsigned long long)ds->refs, (unsigned long long)ds->row_conflicts);
    printf("occupancy         ingress mean %.1f max %llu, DRAM queues mean %.1f\n",
           (double)ds->ingress_occ_sum / st->cycles, (unsigned long long)ds->ingress_occ_max,
           (double)ds->dramq_occ_sum / st->cycles);
    return 0;
}
