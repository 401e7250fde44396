/* pipe.h - a bounded FIFO of CXL.mem messages, each with the cycle from which it may leave.
 *
 * A fixed-latency path (host path, controller processing) pushes with ready = now + latency; a plain
 * queue (ingress, response) pushes with ready = now. Entries leave in push order only, so a pipe with a
 * fixed latency delivers exactly `latency` cycles after the push. Capacity is set at init (<= CXL_MAX_FIFO).
 */
#ifndef CXL_PIPE_H
#define CXL_PIPE_H

#include <stdint.h>

#include "cxl_types.h"

typedef struct cxl_pipe {
    cxl_msg msg[CXL_MAX_FIFO];
    uint64_t ready[CXL_MAX_FIFO];
    uint32_t head, count, cap;
    /* The head, kept by push and pop for the hot readiness tests: ready[head] and 1 << msg[head].cls
     * (cls mod 32) while count > 0, else UINT64_MAX and 0. */
    uint64_t head_ready;
    uint32_t head_cls_bit;
} cxl_pipe;

void pipe_init(cxl_pipe *p, uint32_t cap);
static inline uint32_t pipe_count(const cxl_pipe *p) { return p->count; }
static inline uint32_t pipe_space(const cxl_pipe *p) { return p->cap - p->count; }
/* Push; returns 0, or -1 when full (the caller checks space first; -1 is a model bug). */
static inline int pipe_push(cxl_pipe *p, const cxl_msg *m, uint64_t ready)
{
    if (p->count >= p->cap)
        return -1;
    uint32_t i = (p->head + p->count) % CXL_MAX_FIFO;
    p->msg[i] = *m;
    p->ready[i] = ready;
    if (p->count == 0) {
        p->head_ready = ready;
        p->head_cls_bit = 1u << (m->cls & 31u);
    }
    p->count++;
    return 0;
}
/* The head if it exists and is ready at `now`, else NULL. */
static inline const cxl_msg *pipe_ready(const cxl_pipe *p, uint64_t now)
{
    return (p->head_ready <= now && p->count) ? &p->msg[p->head] : 0;
}
static inline const cxl_msg *pipe_head(const cxl_pipe *p) { return p->count ? &p->msg[p->head] : 0; }
/* 1 << the class of the head if it exists and is ready at `now`, else 0. */
static inline uint32_t pipe_ready_cls_bit(const cxl_pipe *p, uint64_t now)
{
    return p->head_ready <= now ? p->head_cls_bit : 0;
}
static inline void pipe_pop(cxl_pipe *p)
{
    if (!p->count)
        return;
    p->head = (p->head + 1) % CXL_MAX_FIFO;
    p->count--;
    p->head_ready = p->count ? p->ready[p->head] : UINT64_MAX;
    p->head_cls_bit = p->count ? 1u << (p->msg[p->head].cls & 31u) : 0;
}

#endif
