/* grow.h - growing a heap array by doubling, the one helper the engine's modules share. */
#ifndef CXLSIM_GROW_H
#define CXLSIM_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/err.h"

/* Make *p (of *cap elements of `elem` bytes) hold at least `need`: doubles from 8 (or *cap). 0 or
 * CXL_ENOMEM (then *p and *cap are unchanged). */
static inline int grow_array(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t nc = *cap ? *cap : 8;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, (size_t)nc * elem);
    if (!np)
        return CXL_ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

#endif
