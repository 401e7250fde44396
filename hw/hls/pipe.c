#include "pipe.h"

void pipe_init(cxl_pipe *p, uint32_t cap)
{
    p->head = 0;
    p->count = 0;
    p->cap = cap > CXL_MAX_FIFO ? CXL_MAX_FIFO : cap;
    p->head_ready = UINT64_MAX;
    p->head_cls_bit = 0;
}
