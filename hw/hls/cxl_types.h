/* cxl_types.h - what flows into, through and out of the cycle-level model.
 *
 * Descriptors go in (one transfer of one requester), CXL.mem messages flow between units, completions
 * and statistics come out. All times are model cycles (see cxl_params.h).
 */
#ifndef CXL_TYPES_H
#define CXL_TYPES_H

#include <stdint.h>

#include "cxl_params.h"

enum cxl_pattern { CXL_PAT_SEQ = 0, CXL_PAT_RANDOM = 1, CXL_PAT_STRIDE = 2 };

/* One transfer: `bytes` (a multiple of 64) moved by requester `requester` as 64 B MemRd / MemWr. */
typedef struct cxl_desc {
    uint64_t id;              /* caller's id, returned in the completion */
    uint64_t base;            /* byte address of the first line (64 B aligned) */
    uint64_t bytes;           /* bytes to move (multiple of 64, > 0) */
    uint64_t footprint;       /* addresses wrap within [base, base+footprint) (all patterns); 0 = bytes */
    uint64_t not_before;      /* the requester starts it no earlier than this cycle */
    uint32_t stride;          /* STRIDE: bytes between consecutive lines (multiple of 64) */
    uint32_t seed;            /* RANDOM: stream seed (with id) */
    uint32_t gap_cycles;      /* at least this many cycles between two issues of this descriptor (0: none) */
    uint16_t requester;
    uint16_t max_outstanding; /* lines in flight for this descriptor (<= tags) */
    uint8_t pattern;          /* enum cxl_pattern */
    uint8_t rd_weight, wr_weight; /* read:write mix, e.g. 2:1; reads and writes interleave evenly */
    uint8_t pad;
} cxl_desc;

typedef struct cxl_completion {
    uint64_t id;
    uint64_t start_cycle;     /* first request issued */
    uint64_t end_cycle;       /* last response received by the requester */
    uint32_t requester;
    uint32_t lines;
} cxl_completion;

/* CXL.mem message classes (spec ch. 3.3): the four the Type-3 device path uses. */
enum cxl_msg_class { CXL_M2S_REQ = 0, CXL_M2S_RWD = 1, CXL_S2M_DRS = 2, CXL_S2M_NDR = 3, CXL_NCLASS = 4 };

typedef struct cxl_msg {
    uint64_t addr;
    uint16_t tag;             /* requester-local tag */
    uint8_t req;              /* requester index */
    uint8_t cls;              /* enum cxl_msg_class */
    uint8_t host;             /* host port; the LD-ID at a pooled device */
    uint8_t dev;              /* target device */
    uint8_t devload;          /* S2M: DevLoad field (0 light .. 3 severe) */
    uint8_t pad;
} cxl_msg;

typedef struct cxl_hist {
    uint32_t linear[CXL_HIST_LINEAR]; /* bin i: latency == i cycles */
    uint32_t log[CXL_HIST_LOG];       /* bin k: [LINEAR << k, LINEAR << (k+1)); the last bin also
                                         takes every larger latency */
    uint64_t count, sum, max;
} cxl_hist;

typedef struct cxl_link_stats {
    uint64_t flits[2];        /* [0] host-to-device (M2S), [1] device-to-host (S2M) */
    uint64_t data_flits[2];   /* all-data flits */
    uint64_t slots_used[2];   /* non-empty slots */
    uint64_t msgs[CXL_NCLASS];
    uint64_t credit_stall[CXL_NCLASS]; /* flit opportunities where a ready header waited for a credit */
} cxl_link_stats;

typedef struct cxl_dev_stats {
    uint64_t reads, writes;      /* RD / WR commands issued */
    uint64_t acts, pres, refs;   /* commands issued (refs: REFab or REFsb) */
    uint64_t row_conflicts;      /* PREs issued to open a different row for a queued request */
    /* row-buffer hit rate = 1 - acts / (reads + writes): every column command not preceded by its own ACT */
    uint64_t ingress_occ_sum;  /* sum over cycles of Req+RwD ingress occupancy */
    uint64_t ingress_occ_max;
    uint64_t dramq_occ_sum;    /* sum over cycles of DRAM read+write queue occupancy */
    uint64_t devload[4];       /* S2M messages produced with each DevLoad value */
} cxl_dev_stats;

typedef struct cxl_stats {
    uint64_t cycles;           /* cycles simulated so far */
    uint64_t read_bytes, write_bytes; /* completed at requesters */
    cxl_hist read_lat, write_lat;     /* requester issue to response, cycles */
    cxl_link_stats link[CXL_MAX_HOSTS + CXL_MAX_DEVS]; /* host links, then switch-to-device links */
    cxl_dev_stats dev[CXL_MAX_DEVS];
    uint64_t switch_stall;     /* per egress port and cycle: its arbitration winner waited for a full queue */
} cxl_stats;

#endif
