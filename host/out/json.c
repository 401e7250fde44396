#include "out/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(json_w *w)
{
    memset(w, 0, sizeof *w);
    w->first[0] = 1;
}

void json_free(json_w *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static void put(json_w *w, const char *s, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *b = realloc(w->buf, cap);
        if (!b) {
            w->oom = 1;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

static void putf(json_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(json_w *w, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_string(json_w *w, const char *s)
{
    put(w, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            put(w, e, 2);
        } else if (c < 0x20) {
            putf(w, "\\u%04x", c);
        } else {
            put(w, (const char *)&c, 1);
        }
    }
    put(w, "\"", 1);
}

static void member(json_w *w, const char *key)
{
    if (w->depth > 0) {
        put(w, w->first[w->depth] ? "\n" : ",\n", w->first[w->depth] ? 1 : 2);
        w->first[w->depth] = 0;
        for (int i = 0; i < w->depth; i++)
            put(w, "  ", 2);
    }
    if (key) {
        put_string(w, key);
        put(w, ": ", 2);
    }
}

static void open_(json_w *w, const char *key, const char *br)
{
    member(w, key);
    put(w, br, 1);
    if (w->depth < 31)
        w->depth++;
    w->first[w->depth] = 1;
}

static void close_(json_w *w, const char *br)
{
    int empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty) {
        put(w, "\n", 1);
        for (int i = 0; i < w->depth; i++)
            put(w, "  ", 2);
    }
    put(w, br, 1);
    if (w->depth == 0)
        put(w, "\n", 1);
}

void json_obj_begin(json_w *w, const char *key) { open_(w, key, "{"); }
void json_obj_end(json_w *w) { close_(w, "}"); }
void json_arr_begin(json_w *w, const char *key) { open_(w, key, "["); }
void json_arr_end(json_w *w) { close_(w, "]"); }

void json_str(json_w *w, const char *key, const char *v)
{
    member(w, key);
    put_string(w, v);
}

void json_num(json_w *w, const char *key, double v)
{
    member(w, key);
    if (!isfinite(v))
        put(w, "null", 4);
    else
        putf(w, "%.10g", v);
}

void json_u64(json_w *w, const char *key, uint64_t v)
{
    member(w, key);
    putf(w, "%llu", (unsigned long long)v);
}
