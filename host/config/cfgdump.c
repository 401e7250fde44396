/* cfgdump.c - bound configurations back to canonical YAML (cfgdump.h). */
#include "config/cfgdump.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The largest unit of the list that divides v exactly (units from largest to smallest; the last is 1). */
static void exact_unit(char *buf, size_t sz, uint64_t v, const uint64_t *scale, const char *const *unit, int n)
{
    for (int i = 0; i < n; i++)
        if (scale[i] == 1 || (v && v % scale[i] == 0)) {
            snprintf(buf, sz, "%" PRIu64 "%s", v / scale[i], unit[i]);
            return;
        }
}

/* Sizes: whichever of the largest binary and the largest decimal unit dividing v gives the smaller
 * number (80GB, not 78125000KiB; 64GiB, not 68719476736B). */
static void size_text(char *buf, size_t sz, uint64_t v)
{
    static const uint64_t bin[] = { 1ull << 40, 1ull << 30, 1ull << 20, 1ull << 10, 1 };
    static const char *const binu[] = { "TiB", "GiB", "MiB", "KiB", "B" };
    static const uint64_t dec[] = { 1000000000000ull, 1000000000ull, 1000000ull, 1000ull, 1 };
    static const char *const decu[] = { "TB", "GB", "MB", "KB", "B" };
    int b = 0, d = 0;
    while (bin[b] > 1 && (!v || v % bin[b]))
        b++;
    while (dec[d] > 1 && (!v || v % dec[d]))
        d++;
    if (v / bin[b] < v / dec[d])
        snprintf(buf, sz, "%" PRIu64 "%s", v / bin[b], binu[b]);
    else
        snprintf(buf, sz, "%" PRIu64 "%s", v / dec[d], decu[d]);
}

/* The shortest %g form that reads back to the same double. */
static void real_text(char *buf, size_t sz, double d)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sz, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

void cfgdump_quote(const char *s, char *buf, size_t sz)
{
    size_t n = 0;
    if (sz < 3) {
        if (sz)
            buf[0] = '\0';
        return;
    }
    buf[n++] = '"';
    for (; *s && n + 5 < sz; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(buf + n, sz - n, "\\x%02x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

void cfgdump_value(const cfg_field *f, const void *dst, char *buf, size_t sz)
{
    static const uint64_t tscale[] = { 1000000000000ull, 1000000000ull, 1000000ull, 1000ull, 1 };
    static const char *const tunit[] = { "s", "ms", "us", "ns", "ps" };
    static const uint64_t rscale[] = { 1000, 1 };
    static const char *const runit[] = { "GT/s", "MT/s" };
    static const uint64_t fscale[] = { 1000000, 1000, 1 };
    static const char *const funit[] = { "GHz", "MHz", "kHz" };
    static const uint64_t bscale[] = { 1000000000000ull, 1000000000ull, 1000000ull, 1000ull, 1 };
    static const char *const bunit[] = { "TB/s", "GB/s", "MB/s", "KB/s", "B/s" };
    uint64_t u = 0;
    if (f->type <= CFG_T_BW)
        memcpy(&u, dst, sizeof u);
    switch (f->type) {
    case CFG_T_U64: snprintf(buf, sz, "%" PRIu64, u); break;
    case CFG_T_TIME: exact_unit(buf, sz, u, tscale, tunit, 5); break;
    case CFG_T_RATE: exact_unit(buf, sz, u, rscale, runit, 2); break;
    case CFG_T_FREQ: exact_unit(buf, sz, u, fscale, funit, 3); break;
    case CFG_T_SIZE: size_text(buf, sz, u); break;
    case CFG_T_BW: exact_unit(buf, sz, u, bscale, bunit, 5); break;
    case CFG_T_DOUBLE: real_text(buf, sz, *(const double *)dst); break;
    case CFG_T_BOOL: snprintf(buf, sz, "%s", *(const int *)dst ? "true" : "false"); break;
    case CFG_T_ENUM: {
        int v = *(const int *)dst, n = 0;
        while (f->choices && f->choices[n])
            n++;
        snprintf(buf, sz, "%s", v >= 0 && v < n ? f->choices[v] : "?");
        break;
    }
    case CFG_T_STRING: cfgdump_quote((const char *)dst, buf, sz); break;
    default: snprintf(buf, sz, "~"); break;
    }
}

void cfgdump_fields(FILE *out, const cfg_field *fields, const void *base, int indent, cfgdump_custom_fn custom,
                    void *ctx)
{
    char v[1200];
    for (const cfg_field *f = fields; f->key; f++) {
        const void *dst = (const char *)base + f->offset;
        if (f->type == CFG_T_RETIRED)
            continue;
        if (f->type == CFG_T_MAP) {
            fprintf(out, "%*s%s:\n", indent, "", f->key);
            cfgdump_fields(out, f->sub, dst, indent + 2, custom, ctx);
        } else if (f->type == CFG_T_CUSTOM) {
            if (custom)
                custom(out, f, dst, indent, ctx);
        } else {
            cfgdump_value(f, dst, v, sizeof v);
            fprintf(out, "%*s%s: %s\n", indent, "", f->key, v);
        }
    }
}

void cfgdump_diff(const cfg_field *fields, const void *obj, const void *dflt, const char *prefix, cfgdump_diff_fn fn,
                  void *ctx)
{
    char key[256], v[1200], d[1200];
    for (const cfg_field *f = fields; f->key; f++) {
        snprintf(key, sizeof key, "%s%s", prefix, f->key);
        if (f->type == CFG_T_MAP) {
            char sub[sizeof key + 1];
            snprintf(sub, sizeof sub, "%s.", key);
            cfgdump_diff(f->sub, (const char *)obj + f->offset, (const char *)dflt + f->offset, sub, fn, ctx);
            continue;
        }
        if (f->type == CFG_T_CUSTOM || f->required)
            continue;
        cfgdump_value(f, (const char *)obj + f->offset, v, sizeof v);
        cfgdump_value(f, (const char *)dflt + f->offset, d, sizeof d);
        if (strcmp(v, d))
            fn(ctx, key, v, d);
    }
}

uint64_t cfgdump_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}
