/* pplayout.c - parse Megatron-Core's pipeline layout strings (pplayout.h). */
#include "config/pplayout.h"

#include <stdio.h>
#include <string.h>

#define MAX_SYMBOLS (1u << 20)
#define MAX_REPEAT 65536u

typedef struct pst {
    const char *s;
    pplayout *o;
    uint64_t symbols;
    size_t bad_at;
    char *why;
    size_t whysz;
    char first, last;   /* the first and the last symbol other than '|' */
} pst;

static int fail(pst *P, size_t at, const char *msg)
{
    P->bad_at = at;
    snprintf(P->why, P->whysz, "%s", msg);
    return -1;
}

/* After a symbol or ')' at s[*i - 1]: an optional "*n". Returns the count (1 without), or 0 on error. */
static uint32_t count_after(pst *P, size_t *i)
{
    const char *s = P->s;
    if (s[*i] != '*')
        return 1;
    size_t at = (*i)++;
    if (s[*i] < '0' || s[*i] > '9') {
        fail(P, at, "'*' must be followed by a repeat count, e.g. t*4 or (tt|)*29");
        return 0;
    }
    uint64_t n = 0;
    while (s[*i] >= '0' && s[*i] <= '9') {
        n = n * 10 + (uint64_t)(s[*i] - '0');
        if (n > MAX_REPEAT) {
            fail(P, at, "repeat count over 65536");
            return 0;
        }
        (*i)++;
    }
    if (!n) {
        fail(P, at, "repeat count 0; a count is at least 1");
        return 0;
    }
    return (uint32_t)n;
}

static int put(pst *P, char c, size_t at)
{
    pplayout *o = P->o;
    uint32_t vs = o->stages - 1;
    if (++P->symbols > MAX_SYMBOLS)
        return fail(P, at, "the layout expands to more than 2^20 symbols");
    if (c == '|') {
        if (o->stages >= PPLAYOUT_MAX_STAGES)
            return fail(P, at, "more than 1024 virtual stages");
        o->layers[o->stages] = o->mtp[o->stages] = 0;
        o->stages++;
        return 0;
    }
    if (!P->first)
        P->first = c;
    P->last = c;
    switch (c) {
    case 'E':
        o->embeds++, o->embed_vs = vs;
        break;
    case 't':
        if (o->layers[vs] == UINT16_MAX)
            return fail(P, at, "more than 65535 layers in one stage");
        if (o->mtps)
            o->mtp_after_layers = 0;
        o->layers[vs]++, o->decoders++;
        break;
    case 'm':
        o->mtp[vs]++, o->mtps++, o->mtp_vs = vs;
        break;
    default: /* 'L' */
        o->losses++, o->loss_vs = vs;
        break;
    }
    return 0;
}

/* The group s[from, to): symbols and nested "(...)*n", each expanded into the layout. */
static int walk(pst *P, size_t from, size_t to)
{
    const char *s = P->s;
    size_t i = from;
    while (i < to) {
        char c = s[i];
        if (c == ',') {
            i++;
            continue;
        }
        if (c == '(') {
            size_t j = i + 1;
            for (int depth = 1; j < to; j++) {
                depth += s[j] == '(' ? 1 : s[j] == ')' ? -1 : 0;
                if (!depth)
                    break;
            }
            if (j >= to)
                return fail(P, i, "'(' without its ')'");
            if (s[j + 1] != '*')
                return fail(P, j, "a group must be repeated: (...)*n");
            size_t k = j + 1;
            uint32_t n = count_after(P, &k);
            if (!n)
                return -1;
            for (uint32_t r = 0; r < n; r++)
                if (walk(P, i + 1, j))
                    return -1;
            i = k;
            continue;
        }
        if (c == ')')
            return fail(P, i, "')' without its '('");
        if (c != 'E' && c != 't' && c != 'm' && c != 'L' && c != '|') {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown symbol '%c'; known: E (embedding), t (transformer layer), m (MTP "
                     "module), L (loss), | (next stage), x*n, (...)*n", c);
            return fail(P, i, msg);
        }
        size_t k = i + 1;
        uint32_t n = count_after(P, &k);
        if (!n)
            return -1;
        for (uint32_t r = 0; r < n; r++)
            if (put(P, c, i))
                return -1;
        i = k;
    }
    return 0;
}

int pplayout_parse(const char *s, pplayout *out, size_t *bad_at, char *why, size_t whysz)
{
    memset(out, 0, sizeof *out);
    out->stages = 1;
    out->mtp_after_layers = 1;
    pst P = { s, out, 0, 0, why, whysz, 0, 0 };
    if (!s[0]) {
        *bad_at = 0;
        snprintf(why, whysz, "an empty layout");
        return -1;
    }
    int rc = walk(&P, 0, strlen(s));
    *bad_at = P.bad_at;
    out->embed_first = P.first == 'E';
    out->loss_last = P.last == 'L';
    return rc;
}
