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
} cxl_pipe;

void pipe_init(cxl_pipe *p, uint32_t cap);
static inline uint32_t pipe_count(const cxl_pipe *p) { return p->count; }
static inline uint32_t pipe_space(const cxl_pipe *p) { return p->cap - p->count; }
/* Push; returns 0, or -1 when full (the caller checks space first; -1 is a model bug). */
int pipe_push(cxl_pipe *p, const cxl_msg *m, uint64_t ready);
/* The head if it exists and is ready at `now`, else NULL. */
static inline const cxl_msg *pipe_ready(const cxl_pipe *p, uint64_t now)
{
    return (p->count && p->ready[p->head] <= now) ? &p->msg[p->head] : 0;
}
static inline const cxl_msg *pipe_head(const cxl_pipe *p) { return p->count ? &p->msg[p->head] : 0; }
void pipe_pop(cxl_pipe *p);

#endif
