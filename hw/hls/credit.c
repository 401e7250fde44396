#include "credit.h"

void credit_init(cxl_credits *c, const uint32_t pool[CXL_NCLASS], uint32_t delay)
{
    for (uint32_t k = 0; k < CXL_NCLASS; k++) {
        c->pool[k] = pool[k] > CXL_CREDIT_RING ? CXL_CREDIT_RING : pool[k];
        c->avail[k] = c->pool[k];
        c->head[k] = 0;
        c->count[k] = 0;
    }
    c->delay = delay;
    c->next_due = UINT64_MAX;
}

void credit_tick(cxl_credits *c, uint64_t now)
{
    /* next_due is the minimum over the classes' head entries: below it no head is due, so the loop
     * below would change nothing. */
    if (now < c->next_due)
        return;
    uint64_t nd = UINT64_MAX;
credit_tick_class:
    for (uint32_t k = 0; k < CXL_NCLASS; k++) {
        /* at most pool entries; bounded */
        while (c->count[k] && c->due[k][c->head[k]] <= now) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 256 /* CXL_CREDIT_RING */
            c->head[k] = (c->head[k] + 1) % CXL_CREDIT_RING;
            c->count[k]--;
            c->avail[k]++;
        }
        if (c->count[k] && c->due[k][c->head[k]] < nd)
            nd = c->due[k][c->head[k]];
    }
    c->next_due = nd;
}

void credit_return(cxl_credits *c, uint32_t cls, uint64_t now)
{
    if (c->delay == 0) {
        c->avail[cls]++;
        return;
    }
    if (c->count[cls] >= CXL_CREDIT_RING)
        return; /* impossible: more returns pending than the pool */
    uint64_t due = now + c->delay;
    c->due[cls][(c->head[cls] + c->count[cls]) % CXL_CREDIT_RING] = due;
    if (c->count[cls] == 0 && due < c->next_due)
        c->next_due = due; /* it is the class's head */
    c->count[cls]++;
}
