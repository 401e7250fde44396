#include "pipe.h"

void pipe_init(cxl_pipe *p, uint32_t cap)
{
    p->head = 0;
    p->count = 0;
    p->cap = cap > CXL_MAX_FIFO ? CXL_MAX_FIFO : cap;
}

int pipe_push(cxl_pipe *p, const cxl_msg *m, uint64_t ready)
{
    if (p->count >= p->cap)
        return -1;
    uint32_t i = (p->head + p->count) % CXL_MAX_FIFO;
    p->msg[i] = *m;
    p->ready[i] = ready;
    p->count++;
    return 0;
}

void pipe_pop(cxl_pipe *p)
{
    if (!p->count)
        return;
    p->head = (p->head + 1) % CXL_MAX_FIFO;
    p->count--;
}
