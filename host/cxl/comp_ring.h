/* comp_ring.h - the completion buffer shared by the backends that run cxl_kernel() (csim, verilator,
 * xrt): completions the kernel returned and the caller has not polled yet, oldest first. Before a kernel
 * call, cxl_comp_ring_make_room moves them to the front and returns the free slots, one range at the tail
 * (cxl_comp_ring_tail); the call writes at most that many there, then cxl_comp_ring_added takes them;
 * cxl_backend_poll drains with cxl_comp_ring_poll.
 *
 * The kernel is always offered the whole free space, never only the part before the array's end: the
 * model buffers as many completions as the ring holds (CXL_COMPQ), so a call made with the ring empty
 * (every stop-on-completion advance: the backends return at once otherwise) hands over every completion
 * the model has, and a backend that reports cycle X has handed over every completion before X. Offered
 * less, the kernel keeps the rest in the model while the backend already reports the cycle they completed
 * in; they come out only with the next kernel call, which a caller at its target cycle need not make
 * (compare did not for its side B: csim against itself differed when two completions of one cycle
 * straddled the array's end, rare: asic, --random 2000000, at the 125th wrap). Only a ring already partly full when an
 * advance without stop starts can leave completions in the model; it is then full on return (backend.h:
 * the buffer filled), and the next advance hands them over. */
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

/* Reverse c[a, b). */
static inline void cxl_comp_ring_reverse(cxl_completion *c, uint32_t a, uint32_t b)
{
    while (a + 1 < b) {
        cxl_completion t = c[a];
        c[a++] = c[--b];
        c[b] = t;
    }
}

/* Move the buffered completions to c[0, count) (a rotation by three reversals: O(CXL_COMP_RING) when the
 * ring is not empty, O(1) when it is) and return the free slots, all at the tail: what one kernel call
 * may write there. */
static inline uint32_t cxl_comp_ring_make_room(cxl_comp_ring *r)
{
    if (r->head && r->count) {
        cxl_comp_ring_reverse(r->c, 0, r->head);
        cxl_comp_ring_reverse(r->c, r->head, CXL_COMP_RING);
        cxl_comp_ring_reverse(r->c, 0, CXL_COMP_RING);
    }
    r->head = 0;
    return CXL_COMP_RING - r->count;
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
