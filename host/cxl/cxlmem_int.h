/* cxlmem_int.h - the inside of cxlmem (cxlmem.h), shared by its files and nobody else: cxlmem.c (the public
 * calls), cxlmem_domain.c (a domain's instance, statistics, feeding, changes), cxlmem_memo.c (steady rates per
 * transfer set), cxlmem_run.c (detail, extrapolation, delivery). */
#ifndef CXLSIM_CXLMEM_INT_H
#define CXLSIM_CXLMEM_INT_H

#include <stdint.h>

#include "cxl/backend.h"
#include "cxl/cxlmem.h"

enum { MODE_IDLE, MODE_DETAIL, MODE_EXTRAP };

typedef struct xfer {
    uint32_t tag, host;
    uint8_t rd, wr;
    uint32_t gap;           /* cycles between two lines of one requester (rate cap), 0 = none */
    uint64_t total;         /* bytes, multiple of 64 */
    double done;            /* bytes completed (detail completions + extrapolation) */
    uint64_t issued;        /* bytes handed to the current backend instance, counted from inst_base */
    uint64_t inst_base;     /* bytes already done when the current instance took over */
    uint64_t inst_done;     /* bytes completed in the current instance */
    uint64_t region;        /* base address of its region */
    uint32_t rr;            /* next requester (index among the host's requesters) */
    double win_done;        /* done at the start of the current measurement window */
    double rate, prev_rate; /* bytes per cycle */
    uint64_t seq;           /* start order: the canonical tie-break */
} xfer;

/* Load figures of a domain (cxlmem_load): S2M messages by DevLoad value and the sums over cycles of
 * the devices' ingress and DRAM queue occupancy (summed over the domain's devices). */
typedef struct load_sums {
    double msgs[4];
    double ingress, dramq;
} load_sums;

typedef struct memo_ent {
    uint32_t n;
    uint32_t *key;          /* n x (host, rd, wr, gap) packed as 4 words each, canonical order */
    double *rate;
    load_sums steady;       /* per cycle in the steady state */
} memo_ent;

typedef struct domain {
    cxl_backend *b;
    uint64_t base;          /* global cycle of the instance's cycle 0 */
    uint64_t now;           /* global cycle reached */
    int mode;
    uint64_t win_start;     /* global cycle where the current window (or warm-up) began */
    int windows;            /* measurement windows completed since the change */
    int long_windows;       /* of them, at the longest length */
    xfer *x;
    uint32_t nx, capx;
    /* completions found and not yet delivered (same cycle), in canonical order */
    uint64_t *ready_seq;     /* finished transfers (by seq: several may share a tag) */
    uint32_t nready, capready;
    uint64_t ready_cycle;
    /* reports */
    cxl_hist read_lat;
    uint64_t devload[4];
    uint64_t dev_cmds[CXL_MAX_DEVS], dev_devload[CXL_MAX_DEVS][4];
    double read_bytes, write_bytes;
    uint64_t busy_cycles, detailed, extrapolated;
    uint64_t next_region;
    uint32_t rr[CXL_MAX_REQ];  /* per requester: the transfer (position) its next chunk comes from */
    double unattributed;    /* bytes completed at the requesters in chunks not yet complete */
    double retired;         /* bytes of the instance's transfers that have left (completed, removed) */
    /* load figures (cxlmem_load): closed instances and extrapolated stretches, the running instance's
     * statistics as last read, the steady state's per-cycle figures while extrapolating, and the sums
     * at the start of the current and the previous measurement window (in detailed cycles) */
    load_sums load_closed, load_live, load_steady, win_load[2];
    uint64_t win_detailed[2];
} domain;

struct cxlmem {
    char backend[32];
    cxl_backend_opts bo;    /* strings borrowed from the caller, who outlives this */
    cxl_params p;
    int exact;
    domain *d;
    uint32_t nd;
    memo_ent *memo;
    uint32_t nmemo, capmemo;
    uint64_t seq;
    cxlmem_stats st;
    uint32_t last_domain, last_host;
    uint64_t capacity;      /* address space for regions */
    uint64_t ntx;           /* transfers in all domains (0: cxlmem_next has nothing to run) */
    int64_t idle_ps;        /* the latest horizon cxlmem_next saw with no transfer anywhere: every domain's
                               clock is at least there (idle_to, applied when a domain next starts one) */
};

int64_t cxlmem_ps_of(const cxlmem *m, uint64_t cycle);
uint64_t cxlmem_cycle_of(const cxlmem *m, int64_t ps);
void cxlmem_load_of(const cxlmem *m, const cxl_dev_stats *dev, load_sums *out);
void cxlmem_load_add(load_sums *a, const load_sums *b, double f);
void cxlmem_load_total(const domain *d, load_sums *out);
void cxlmem_load_window(domain *d);
int cxlmem_close_instance(cxlmem *m, domain *d, cxl_err *err);
uint32_t cxlmem_host_requesters(const cxlmem *m, uint32_t host);
int cxlmem_feed(cxlmem *m, domain *d, cxl_err *err);
int cxlmem_changed(cxlmem *m, domain *d, cxl_err *err);
void cxlmem_remove_xfer(cxlmem *m, domain *d, uint32_t i);
void cxlmem_canon(const domain *d, uint32_t *idx);
memo_ent *cxlmem_memo_find(cxlmem *m, const domain *d, const uint32_t *idx);
int cxlmem_memo_store(cxlmem *m, const domain *d, const uint32_t *idx);
uint64_t cxlmem_next_bound(const cxlmem *m, const domain *d);
int cxlmem_run_detail(cxlmem *m, domain *d, uint64_t h, cxl_err *err);
int cxlmem_run_extrap(cxlmem *m, domain *d, uint64_t h, cxl_err *err);
int cxlmem_deliver(cxlmem *m, domain *d, int64_t *t_ps, uint32_t *tag, cxl_err *err);

#endif
