/* evq.c - binary min-heap on (t_ps, seq). */
#include "train/evq.h"

#include <stdlib.h>

#include "util/err.h"

void evq_init(evq *q)
{
    q->heap = NULL;
    q->len = q->cap = 0;
    q->next_seq = 0;
    q->pushed = 0;
}

void evq_free(evq *q)
{
    free(q->heap);
    evq_init(q);
}

static inline int before(const evq_event *x, const evq_event *y)
{
    return x->t_ps < y->t_ps || (x->t_ps == y->t_ps && x->seq < y->seq);
}

int evq_push(evq *q, int64_t t_ps, uint32_t kind, uint32_t a, uint32_t b)
{
    if (q->len == q->cap) {
        size_t ncap = q->cap ? 2 * q->cap : 256;
        evq_event *nh = realloc(q->heap, ncap * sizeof *nh);
        if (!nh)
            return CXL_ENOMEM;
        q->heap = nh;
        q->cap = ncap;
    }
    evq_event e = { t_ps, q->next_seq++, kind, a, b };
    size_t i = q->len++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = e;
    q->pushed++;
    return 0;
}

int evq_pop(evq *q, evq_event *out)
{
    if (q->len == 0)
        return 0;
    *out = q->heap[0];
    evq_event last = q->heap[--q->len];
    size_t i = 0, n = q->len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n)
        q->heap[i] = last;
    return 1;
}

int64_t evq_peek_ps(const evq *q) { return q->len ? q->heap[0].t_ps : INT64_MAX; }
