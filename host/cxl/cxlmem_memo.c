/* cxlmem_memo.c - the memo of cxlmem (cxlmem.h): steady-state rates and load figures per set of active
 * transfers, in canonical order, so that the same set later skips the detailed phase. */
#include "cxl/cxlmem.h"
#include "cxl/cxlmem_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "cxl/stats_report.h"
#include "util/grow.h"

/* ---- memo ---- */

static int xfer_cmp(const xfer *a, const xfer *b)
{
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->rd != b->rd)
        return a->rd < b->rd ? -1 : 1;
    if (a->wr != b->wr)
        return a->wr < b->wr ? -1 : 1;
    if (a->gap != b->gap)
        return a->gap < b->gap ? -1 : 1;
    return 0;
}

/* Canonical order of the domain's transfers into idx[]. */
void cxlmem_canon(const domain *d, uint32_t *idx)
{
    for (uint32_t i = 0; i < d->nx; i++)
        idx[i] = i;
    for (uint32_t i = 1; i < d->nx; i++) {
        uint32_t v = idx[i], j = i;
        while (j > 0) {
            const xfer *a = &d->x[idx[j - 1]], *b = &d->x[v];
            int c = xfer_cmp(a, b);
            if (c < 0 || (c == 0 && a->seq < b->seq))
                break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

memo_ent *cxlmem_memo_find(cxlmem *m, const domain *d, const uint32_t *idx)
{
    for (uint32_t e = 0; e < m->nmemo; e++) {
        memo_ent *M = &m->memo[e];
        if (M->n != d->nx)
            continue;
        uint32_t i;
        for (i = 0; i < d->nx; i++) {
            const xfer *x = &d->x[idx[i]];
            const uint32_t *k = &M->key[4 * i];
            if (k[0] != x->host || k[1] != x->rd || k[2] != x->wr || k[3] != x->gap)
                break;
        }
        if (i == d->nx)
            return M;
    }
    return NULL;
}

int cxlmem_memo_store(cxlmem *m, const domain *d, const uint32_t *idx)
{
    if (grow_array((void **)&m->memo, &m->capmemo, m->nmemo + 1, sizeof *m->memo))
        return CXL_ENOMEM;
    memo_ent *M = &m->memo[m->nmemo];
    M->n = d->nx;
    M->key = malloc((size_t)4 * d->nx * sizeof *M->key);
    M->rate = malloc((size_t)d->nx * sizeof *M->rate);
    if (!M->key || !M->rate) {
        free(M->key);
        free(M->rate);
        return CXL_ENOMEM;
    }
    for (uint32_t i = 0; i < d->nx; i++) {
        const xfer *x = &d->x[idx[i]];
        M->key[4 * i] = x->host;
        M->key[4 * i + 1] = x->rd;
        M->key[4 * i + 2] = x->wr;
        M->key[4 * i + 3] = x->gap;
        /* identical transfers share one rate (they are symmetric; averaging removes measurement noise) */
        double sum = 0;
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < d->nx; j++)
            if (xfer_cmp(&d->x[idx[j]], x) == 0) {
                sum += d->x[idx[j]].rate;
                cnt++;
            }
        M->rate[i] = sum / cnt;
    }
    M->steady = d->load_steady;
    m->nmemo++;
    return 0;
}
