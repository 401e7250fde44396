/* bench_activity.c - in what share of model cycles each unit's state changes, on the C model (issue 5).
 *
 * usage: bench_activity [DEVICE] [--pattern random|seq] [--mix R:W] [--cycles N]
 * Default: the ASIC preset and bench_model's saturating workload (every requester issuing random 64 B reads
 * with all tags outstanding), 200 000 cycles. The model (hw/hls) runs one cycle at a time; after each, every
 * unit's state is compared with its copy from before the cycle. A unit whose state did not change could have
 * skipped the cycle, so the shares bound what clocking units only on activity could save in the RTL
 * (docs/rtl.md "Simulation speed"). A unit's state includes its own bookkeeping (a DRAM channel's
 * wake cycle, a link's wire-time accumulator); the statistics are kept apart (cxl_stats) and not compared.
 * When nothing is in flight the model skips ahead several cycles in one step (docs/cxl-model.md 2.4):
 * those cycles count as cycles without a change. Prints figures; asserts nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hw/hls/cxl_model.h"
#include "workload.h"

/* counts of cycles in which a unit's state changed */
typedef struct activity {
    unsigned long long cycles;
    unsigned long long req, host_req, host_rsp, sw;
    unsigned long long up_m2s[CXL_MAX_HOSTS], up_s2m[CXL_MAX_HOSTS];
    unsigned long long dn_m2s[CXL_MAX_DEVS], dn_s2m[CXL_MAX_DEVS];
    unsigned long long dev[CXL_MAX_DEVS], ch[CXL_MAX_DEVS][CXL_MAX_CH];
} activity;

#define CHANGED(field) (memcmp(&before->field, &m->field, sizeof m->field) != 0)

static void count(activity *a, const cxl_model *before, const cxl_model *m)
{
    const cxl_params *p = &m->p;
    a->cycles += m->now - before->now;
    a->req += CHANGED(req);
    a->host_req += CHANGED(host_req);
    a->host_rsp += CHANGED(host_rsp);
    a->sw += p->sw.present && CHANGED(sw);
    for (uint32_t h = 0; h < p->hosts; h++) {
        a->up_m2s[h] += CHANGED(up_m2s[h]);
        a->up_s2m[h] += CHANGED(up_s2m[h]);
    }
    for (uint32_t d = 0; d < p->devices; d++) {
        a->dn_m2s[d] += p->sw.present && CHANGED(dn_m2s[d]);
        a->dn_s2m[d] += p->sw.present && CHANGED(dn_s2m[d]);
        a->dev[d] += CHANGED(dev[d]);
        for (uint32_t c = 0; c < p->dram.channels; c++)
            a->ch[d][c] += CHANGED(dev[d].dram.ch[c]);
    }
}

static double share(unsigned long long n, const activity *a) { return a->cycles ? 100.0 * (double)n / (double)a->cycles : 0.0; }

int main(int argc, char **argv)
{
    workload w = workload_defaults();
    for (int i = 1; i < argc; i++)
        if (!workload_arg(&w, argc, argv, &i))
            w.device = argv[i];
    if (!w.cycles)
        w.cycles = 200000;
    devcfg c;
    cxl_params p;
    if (workload_params("bench_activity", &w, &c, &p))
        return 1;
    /* two model states (a few MB each): static, not on the stack */
    static cxl_model m, before;
    static activity a;
    cxl_model_init(&m, &p);
    cxl_desc d[CXL_MAX_REQ];
    saturating_descs(d, &p, &w);
    for (uint32_t r = 0; r < p.requesters; r++)
        if (cxl_model_submit(&m, &d[r])) {
            fprintf(stderr, "bench_activity: requester %u refused its descriptor\n", (unsigned)r);
            return 1;
        }
    while (m.now < w.cycles) {
        memcpy(&before, &m, sizeof m);
        cxl_model_run(&m, m.now + 1, 0);
        cxl_completion cc[64];
        while (cxl_model_drain(&m, cc, 64)) {
        }
        count(&a, &before, &m);
    }
    printf("device            %s, %s %u:%u, %u requesters x %u tags, csim\n", c.name,
           w.pattern == CXL_PAT_SEQ ? "sequential" : "random", w.rd, w.wr, p.requesters, p.tags);
    printf("model cycles      %llu\n", a.cycles);
    printf("cycles in which the unit's state changed:\n");
    printf("  requesters (any)          %5.1f %%\n", share(a.req, &a));
    printf("  host request paths (any)  %5.1f %%\n", share(a.host_req, &a));
    printf("  host response paths (any) %5.1f %%\n", share(a.host_rsp, &a));
    if (p.link_present)
        for (uint32_t h = 0; h < p.hosts; h++)
            printf("  host %u link M2S / S2M     %5.1f %% / %5.1f %%\n", (unsigned)h, share(a.up_m2s[h], &a),
                   share(a.up_s2m[h], &a));
    if (p.sw.present) {
        printf("  switch                    %5.1f %%\n", share(a.sw, &a));
        for (uint32_t dv = 0; dv < p.devices; dv++)
            printf("  device %u link M2S / S2M   %5.1f %% / %5.1f %%\n", (unsigned)dv, share(a.dn_m2s[dv], &a),
                   share(a.dn_s2m[dv], &a));
    }
    for (uint32_t dv = 0; dv < p.devices; dv++) {
        printf("  device %u controller       %5.1f %% (channels:", (unsigned)dv, share(a.dev[dv], &a));
        for (uint32_t ch = 0; ch < p.dram.channels; ch++)
            printf(" %.1f %%", share(a.ch[dv][ch], &a));
        printf(")\n");
    }
    return 0;
}
