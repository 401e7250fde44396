/* workload.h - what the model benchmarks share: their options, the device, and the saturating workload
 * (every requester streams through its own 64 MiB region, sequential or random 64 B lines of the given
 * read:write mix, with all its tags outstanding, as the probe's bandwidth measurement does). */
#ifndef CXLSIM_BENCH_WORKLOAD_H
#define CXLSIM_BENCH_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hw/hls/cxl_types.h"
#include "config/devcfg.h"

typedef struct workload {
    const char *device;        /* a preset name or a YAML file (default asic) */
    int pattern;               /* --pattern random|seq (default random) */
    unsigned rd, wr;           /* --mix R:W (default 1:0) */
    unsigned long long cycles; /* --cycles N (0: the benchmark's default) */
} workload;

static inline workload workload_defaults(void) { return (workload){"asic", CXL_PAT_RANDOM, 1, 0, 0}; }

/* Take argv[*i] (and its value) when it is --pattern, --mix or --cycles: 1, *i past the value; else 0. */
static inline int workload_arg(workload *w, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        return 0;
    if (!strcmp(argv[*i], "--pattern"))
        w->pattern = !strcmp(argv[++*i], "seq") ? CXL_PAT_SEQ : CXL_PAT_RANDOM;
    else if (!strcmp(argv[*i], "--mix"))
        sscanf(argv[++*i], "%u:%u", &w->rd, &w->wr);
    else if (!strcmp(argv[*i], "--cycles"))
        w->cycles = strtoull(argv[++*i], NULL, 10);
    else
        return 0;
    return 1;
}

/* Load w's device and its model parameters; 0, or 1 with the error printed after `prog`. */
static inline int workload_params(const char *prog, const workload *w, devcfg *c, cxl_params *p)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(w->device, c, &e) || devcfg_to_params(c, p, &e)) {
        char buf[2048];
        cxl_err_format(&e, buf, sizeof buf);
        fprintf(stderr, "%s: %s\n", prog, buf);
        return 1;
    }
    return 0;
}

/* Fill d[0 .. p->requesters - 1], one never-ending descriptor per requester. */
static inline void saturating_descs(cxl_desc d[CXL_MAX_REQ], const cxl_params *p, const workload *w)
{
    memset(d, 0, sizeof(cxl_desc) * CXL_MAX_REQ);
    for (uint32_t r = 0; r < p->requesters; r++) {
        d[r].id = r;
        d[r].requester = (uint16_t)r;
        d[r].base = (uint64_t)r << 26;
        d[r].bytes = 1ull << 40;
        d[r].footprint = 1ull << 26;
        d[r].pattern = (uint8_t)w->pattern;
        d[r].rd_weight = (uint8_t)w->rd;
        d[r].wr_weight = (uint8_t)w->wr;
        d[r].max_outstanding = (uint16_t)p->tags;
        d[r].seed = 1;
    }
}

#endif
