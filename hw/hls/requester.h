/* requester.h - a requester port: expands descriptors into 64 B MemRd / MemWr and tracks their tags.
 *
 * Each cycle (requester_issue) a requester may issue one request, only ever from the oldest descriptor
 * that still has lines to issue (if that one is blocked, nothing issues): when it is past its not_before
 * cycle and gap_cycles after its previous issue, below its max_outstanding, a tag is free and
 * the host path has room. Descriptors start in submission order; a descriptor may start while earlier
 * ones still wait for responses. Address of line i (every pattern wraps within the footprint):
 * SEQ base + (64 i mod footprint); STRIDE base + (i * stride mod footprint); RANDOM base + 64 * floor(x_i / 2^32 * lines) with x_i the high half of an xorshift64 stream
 * seeded by (seed, id). Line i is a write when floor((i+1) w / (r+w)) > floor(i w / (r+w)).
 * A response (requester_complete) frees the tag and records the latency; the descriptor completes when
 * its last line's response arrives.
 */
#ifndef CXL_REQUESTER_H
#define CXL_REQUESTER_H

#include <stdint.h>

#include "cxl_types.h"

typedef struct cxl_dslot {
    cxl_desc d;
    uint64_t lines, issued, done;  /* done counts responses */
    uint64_t start;                /* cycle of first issue */
    uint64_t next_issue;           /* earliest cycle of the next issue (gap_cycles) */
    uint64_t rng;                  /* xorshift64 state (RANDOM) */
    uint64_t next_addr_off;        /* SEQ/STRIDE offset of the next line within the footprint */
    uint32_t mix_acc, outstanding;
} cxl_dslot;

typedef struct cxl_requester {
    cxl_dslot q[CXL_DESCQ];        /* ring of descriptors, oldest at head */
    uint32_t head, count;
    uint32_t issue_pos;            /* ring offset (from head) of the first descriptor with lines to issue */
    uint16_t free_tags[CXL_MAX_TAGS];
    uint32_t nfree, tags;
    uint64_t tag_issue[CXL_MAX_TAGS]; /* issue cycle per tag */
    uint8_t tag_slot[CXL_MAX_TAGS];   /* ring index of the descriptor per tag */
    uint8_t tag_write[CXL_MAX_TAGS];
} cxl_requester;

void requester_init(cxl_requester *r, uint32_t tags);
static inline uint32_t requester_space(const cxl_requester *r) { return CXL_DESCQ - r->count; }
/* Queue a descriptor (already validated by the caller). Returns -1 when the queue is full. */
int requester_submit(cxl_requester *r, const cxl_desc *d);
/* Cheap pre-check: with no free tag or no descriptor left to issue, requester_issue does nothing. */
static inline int requester_may_issue(const cxl_requester *r) { return r->nfree && r->issue_pos < r->count; }
/* Try to issue one request at `now` into *out. Returns 1 if a request was produced. */
int requester_issue(cxl_requester *r, uint32_t idx, uint32_t host, uint64_t now, cxl_msg *out);
/* A response for tag arrived at `now`. Writes a completion into *c and returns 1 when its descriptor
 * finished. */
int requester_complete(cxl_requester *r, uint16_t tag, uint64_t now, cxl_stats *st, cxl_completion *c);
/* The cycle before which this requester will not issue, given nothing outstanding: UINT64_MAX when it
 * has no descriptor; 0 when it has requests outstanding (it is busy). */
static inline uint64_t requester_quiet_until(const cxl_requester *r)
{
    if (r->nfree != r->tags)
        return 0;
    if (r->issue_pos >= r->count)
        return UINT64_MAX;
    return r->q[(r->head + r->issue_pos) % CXL_DESCQ].next_issue;
}

#endif
