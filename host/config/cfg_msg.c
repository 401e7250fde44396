/* cfg_msg.c - the words of configuration messages: values quoted and clipped, "did you mean" suggestions
 * (edit distance), errors at a node's file:line:column. */
#include "config/cfg.h"
#include "config/cfg_int.h"
#include "config/cfgnode.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small text helpers ---- */

/* Append printf output to buf (size sz, current length *len), truncating silently. */
void cfg_app(char *buf, size_t sz, size_t *len, const char *fmt, ...)
{
    if (*len >= sz)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf + *len, sz - *len, fmt, ap);
    va_end(ap);
    if (r > 0)
        *len = (size_t)r >= sz - *len ? sz - 1 : *len + (size_t)r;
}

void cfg_set_why(char *why, size_t whysz, const char *fmt, ...)
{
    if (!why || !whysz)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whysz, fmt, ap);
    va_end(ap);
}

/* s as quoted in a message: whole when short, else its first CFG_SHOW_MAX bytes (cut at a UTF-8
 * character boundary) and the full length, so that the reason after it always fits the message. */
const char *cfg_clip(const char *s, char *buf, size_t sz)
{
    size_t len = strlen(s);
    if (len <= CFG_SHOW_MAX)
        return s;
    size_t cut = CFG_SHOW_MAX;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(buf, sz, "%.*s... (%zu bytes)", (int)cut, s, len);
    return buf;
}

const char *cfg_kind_name(enum cfg_kind k)
{
    switch (k) {
    case CFG_MAP: return "a mapping";
    case CFG_SEQ: return "a sequence";
    default: return "a scalar";
    }
}

/* Optimal string alignment distance (Levenshtein plus adjacent transposition), ASCII case-insensitive.
 * O(|a|*|b|); keys longer than CFG_MAX_KEYLEN count as far from everything. */
int cfg_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > CFG_MAX_KEYLEN || lb > CFG_MAX_KEYLEN)
        return INT_MAX / 2;
    int d[CFG_MAX_KEYLEN + 1][CFG_MAX_KEYLEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int cost = ca != cb;
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

/* Whether a candidate at distance d is close enough to a typed word to suggest it. */
int cfg_close_enough(const char *typed, int d)
{
    int len = (int)strlen(typed);
    int limit = 1 + len / 5;
    if (limit > 3)
        limit = 3;
    return d <= limit && d < len;
}


/* ---- suggestions ---- */

int cfg_suggest(const char *typed, const char *const *choices)
{
    int best = -1, bestd = INT_MAX;
    for (int i = 0; typed && choices && choices[i]; i++) {
        int d = cfg_edit_distance(typed, choices[i]);
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return best >= 0 && cfg_close_enough(typed, bestd) ? best : -1;
}


/* ---- errors at a node ---- */

int cfg_errf(cxl_err *err, const cfg_node *at, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!at)
        return cxl_errf(err, CXL_ECONFIG, "%s", msg);
    return cxl_errf_at(err, CXL_ECONFIG, at->file, at->line, at->col, "%s", msg);
}
