/* credit.h - CXL link-layer credits of one link direction, as the sender sees them (spec 4.2.2, 4.2.7).
 *
 * A sender may place a message of class c in a flit only while it holds a credit of class c; the
 * receiver returns the credit when it frees the buffer entry, and the sender sees it credit_return_cycles
 * later (the time to piggyback the return on a reverse flit and cross the link). Returns are queued in
 * time order per class, so each class's pending returns form a FIFO of due cycles.
 */
#ifndef CXL_CREDIT_H
#define CXL_CREDIT_H

#include <stdint.h>

#include "cxl_types.h"

#define CXL_CREDIT_RING 256u /* >= the largest credit pool */

typedef struct cxl_credits {
    uint32_t avail[CXL_NCLASS];
    uint32_t pool[CXL_NCLASS];
    uint64_t next_due;      /* the earliest due cycle among the classes' oldest pending returns (UINT64_MAX:
                             * none pending): credit_tick has nothing to do before it */
    uint64_t due[CXL_NCLASS][CXL_CREDIT_RING];
    uint32_t head[CXL_NCLASS], count[CXL_NCLASS];
    uint32_t delay;
} cxl_credits;

void credit_init(cxl_credits *c, const uint32_t pool[CXL_NCLASS], uint32_t delay);
/* Make returns due at or before `now` available. Called first in every cycle. */
void credit_tick(cxl_credits *c, uint64_t now);
static inline int credit_have(const cxl_credits *c, uint32_t cls) { return c->avail[cls] > 0; }
static inline void credit_take(cxl_credits *c, uint32_t cls) { c->avail[cls]--; }
/* The receiver freed one entry of class cls at `now`. */
void credit_return(cxl_credits *c, uint32_t cls, uint64_t now);

#endif
