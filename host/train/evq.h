/* evq.h - the discrete-event queue of the training engine: events ordered by integer picosecond time,
 * ties broken by insertion order (FIFO), so a run is deterministic whatever the heap's layout.
 *
 * A binary min-heap of small plain events (kind + two 32-bit arguments); push and pop are O(log n),
 * peek O(1). The queue grows by doubling; evq_push returns CXL_ENOMEM when it cannot. Stale events
 * (for example a flow completion whose rate has changed since) are the caller's to recognise: carry a
 * version number in an argument and drop mismatches on pop.
 */
#ifndef CXLSIM_EVQ_H
#define CXLSIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct evq_event {
    int64_t t_ps;
    uint64_t seq;       /* insertion order: the tie-break */
    uint32_t kind;
    uint32_t a, b;
} evq_event;

typedef struct evq {
    evq_event *heap;
    size_t len, cap;
    uint64_t next_seq;
    uint64_t pushed;    /* events ever pushed (the engine's event count) */
} evq;

void evq_init(evq *q);
void evq_free(evq *q);
/* 0, or CXL_ENOMEM. */
int evq_push(evq *q, int64_t t_ps, uint32_t kind, uint32_t a, uint32_t b);
/* 1 and the earliest event in *out (removed), or 0 when empty. */
int evq_pop(evq *q, evq_event *out);
/* Time of the earliest event, INT64_MAX when empty. */
int64_t evq_peek_ps(const evq *q);
static inline size_t evq_len(const evq *q) { return q->len; }

#endif
