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
}

void credit_tick(cxl_credits *c, uint64_t now)
{
credit_tick_class:
    for (uint32_t k = 0; k < CXL_NCLASS; k++) {
        /* at most pool entries; bounded */
        while (c->count[k] && c->due[k][c->head[k]] <= now) {
            c->head[k] = (c->head[k] + 1) % CXL_CREDIT_RING;
            c->count[k]--;
            c->avail[k]++;
        }
    }
}

void credit_return(cxl_credits *c, uint32_t cls, uint64_t now)
{
    if (c->delay == 0) {
        c->avail[cls]++;
        return;
    }
    if (c->count[cls] >= CXL_CREDIT_RING)
        return; /* impossible: more returns pending than the pool */
    c->due[cls][(c->head[cls] + c->count[cls]) % CXL_CREDIT_RING] = now + c->delay;
    c->count[cls]++;
}
