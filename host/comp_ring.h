/* comp_ring.h - the completion buffer shared by the backends that run cxl_kernel() (csim, verilator,
 * xrt): completions the kernel returned and the caller has not polled yet, oldest first. A kernel call
 * writes into the contiguous free range at the tail (cxl_comp_ring_tail/room), then cxl_comp_ring_added
 * takes them; cxl_backend_poll drains with cxl_comp_ring_poll. */
#ifndef CXLSIM_COMP_RING_H
#define CXLSIM_COMP_RING_H

#include <stddef.h>
#include <stdint.h>

#include "../hw/hls/cxl_types.h"

#define CXL_COMP_RING 1024u  /* completions buffered (the model's own buffer is as large) */

typedef struct cxl_comp_ring {
    cxl_completion c[CXL_COMP_RING];
    uint32_t head, count;
} cxl_comp_ring;

/* The first free slot. */
static inline uint32_t cxl_comp_ring_tail(const cxl_comp_ring *r) { return (r->head + r->count) % CXL_COMP_RING; }

/* Free slots from the tail on without wrapping: what one kernel call may write there. */
static inline uint32_t cxl_comp_ring_room(const cxl_comp_ring *r)
{
    uint32_t room = CXL_COMP_RING - r->count, tail = cxl_comp_ring_tail(r);
    return tail + room > CXL_COMP_RING ? CXL_COMP_RING - tail : room;
}

/* n completions were written at the tail. */
static inline void cxl_comp_ring_added(cxl_comp_ring *r, uint32_t n) { r->count += n; }

/* Up to max completions, oldest first. */
static inline size_t cxl_comp_ring_poll(cxl_comp_ring *r, cxl_completion *out, size_t max)
{
    size_t n = 0;
    while (n < max && r->count) {
        out[n++] = r->c[r->head];
        r->head = (r->head + 1) % CXL_COMP_RING;
        r->count--;
    }
    return n;
}

#endif
