/* cfg_bind.c - binding a configuration mapping to a C struct through a cfg_field table (cfg.h): types, units,
 * ranges, unknown keys with suggestions. */
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

/* ---- binding ---- */

static const char *type_desc(enum cfg_type t)
{
    switch (t) {
    case CFG_T_U64: return "a non-negative integer, e.g. 16";
    case CFG_T_TIME: return "a time with a unit (ps, ns, us, ms, s), e.g. 90ns";
    case CFG_T_RATE: return "a transfer rate (MT/s, GT/s), e.g. 32GT/s";
    case CFG_T_FREQ: return "a frequency (Hz, kHz, MHz, GHz), e.g. 1.5GHz";
    case CFG_T_SIZE: return "a size (B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB), e.g. 64KiB";
    case CFG_T_BW: return "a bandwidth (B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, or bits: Kb/s, Mb/s, Gb/s, Tb/s), e.g. 25.6GB/s or 200Gb/s";
    case CFG_T_DOUBLE: return "a number, e.g. 0.75";
    case CFG_T_BOOL: return "true or false";
    case CFG_T_ENUM: return "one of the choices";
    case CFG_T_STRING: return "a string";
    case CFG_T_MAP: return "a mapping";
    default: return "a value";
    }
}

static const char *stored_unit(enum cfg_type t)
{
    switch (t) {
    case CFG_T_TIME: return " ps";
    case CFG_T_RATE: return " MT/s";
    case CFG_T_FREQ: return " kHz";
    case CFG_T_SIZE: return " B";
    case CFG_T_BW: return " B/s";
    default: return "";
    }
}

/* What a field accepts, for messages: the type description, or the choices of an enum. */
static void expect_desc(const cfg_field *f, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    if (f->type != CFG_T_ENUM || !f->choices) {
        cfg_app(buf, sz, &len, "%s", type_desc(f->type));
        return;
    }
    cfg_app(buf, sz, &len, "one of: ");
    for (int i = 0; f->choices[i]; i++)
        cfg_app(buf, sz, &len, "%s%s", i ? ", " : "", f->choices[i]);
}

static void key_path(char *buf, size_t sz, const char *section, const char *key)
{
    if (section && *section)
        snprintf(buf, sz, "%s.%s", section, key);
    else
        snprintf(buf, sz, "%s", key);
}

static void field_list(const cfg_field *fields, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const cfg_field *f = fields; f->key; f++)
        if (f->type != CFG_T_RETIRED)
            cfg_app(buf, sz, &len, "%s%s", len ? ", " : "", f->key);
}

static void help_suffix(const cfg_field *f, char *buf, size_t sz)
{
    if (f->help && *f->help)
        snprintf(buf, sz, " (%s: %s)", f->key, f->help);
    else
        buf[0] = '\0';
}

/* A range applies unless min > max. min == max == 0 also means "no range": that is what a field table
 * written with designated initializers gets by default, and "only 0 is valid" is never a useful range. */
static int has_range(const cfg_field *f)
{
    return !(f->min > f->max) && !(f->min == 0 && f->max == 0);
}

static int range_error(cxl_err *err, const cfg_field *f, const cfg_node *n, const char *path, const char *shown,
                       const char *help)
{
    const char *unit = stored_unit(f->type);
    if (f->type != CFG_T_DOUBLE && f->min >= 0 && f->max < 18446744073709551616.0)
        return cfg_errf(err, n, "'%s' = %s is out of range: valid values are %" PRIu64 "%s to %" PRIu64 "%s%s", path,
                        shown, (uint64_t)f->min, unit, (uint64_t)f->max, unit, help);
    return cfg_errf(err, n, "'%s' = %s is out of range: valid values are %.15g%s to %.15g%s%s", path, shown, f->min,
                    unit, f->max, unit, help);
}

static int bind_field(const cfg_field *f, const cfg_node *n, const char *path, void *base, cxl_err *err)
{
    char help[300], why[512], shown[300], cut[CFG_CLIP_SZ];
    help_suffix(f, help, sizeof help);
    void *dst = (char *)base + f->offset;

    if (f->type == CFG_T_CUSTOM) {
        if (!f->custom)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_CUSTOM without a handler", path);
        int rc = f->custom(n, dst, err);
        if (rc && err && err->code == 0)
            cfg_errf(err, n, "bad value for '%s'%s", path, help);
        return rc ? (rc < 0 ? rc : CXL_ECONFIG) : 0;
    }
    if (f->type == CFG_T_MAP) {
        char keys[600];
        if (!f->sub)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_MAP without a sub-table", path);
        if (n->kind != CFG_MAP) {
            field_list(f->sub, keys, sizeof keys);
            if (n->kind == CFG_SCALAR)
                return cfg_errf(err, n, "'%s' must be a mapping with keys %s; got the scalar '%s'%s", path, keys,
                                cfg_clip(n->str, cut, sizeof cut), help);
            return cfg_errf(err, n, "'%s' must be a mapping with keys %s; got %s%s", path, keys,
                            cfg_kind_name(n->kind), help);
        }
        return cfg_bind(n, NULL, path, f->sub, dst, NULL, err);
    }
    if (n->kind != CFG_SCALAR) {
        expect_desc(f, shown, sizeof shown);
        return cfg_errf(err, n, "'%s' must be %s; got %s%s", path, shown, cfg_kind_name(n->kind), help);
    }

    /* YAML traps, refused rather than guessed (docs/config.md, "YAML"): a plain ~, null or empty value
     * is YAML's null, not the text "~"; a quoted number or boolean is a string in YAML. */
    if (n->plain && (!n->str[0] || !strcmp(n->str, "~") || !strcmp(n->str, "null") || !strcmp(n->str, "Null") ||
                     !strcmp(n->str, "NULL")))
        return cfg_errf(err, n, "'%s' has no value ('%s' is YAML's null); give a value, or remove the key to "
                        "keep the default%s", path, n->str, help);
    if (!n->plain && (f->type == CFG_T_U64 || f->type == CFG_T_DOUBLE || f->type == CFG_T_BOOL)) {
        expect_desc(f, shown, sizeof shown);
        return cfg_errf(err, n, "'%s' = \"%s\" is quoted, which makes it a string in YAML; expected %s, "
                        "written without quotes%s", path, cfg_clip(n->str, cut, sizeof cut), shown, help);
    }
    const char *s = cfg_clip(n->str, cut, sizeof cut);
    snprintf(shown, sizeof shown, "'%s'", s);
    uint64_t u = 0;
    int bad = 0;
    switch (f->type) {
    case CFG_T_U64: bad = cfg_parse_u64(n->str, &u, why, sizeof why); break;
    case CFG_T_TIME: bad = cfg_parse_time_ps(n->str, &u, why, sizeof why); break;
    case CFG_T_RATE: bad = cfg_parse_rate_mts(n->str, &u, why, sizeof why); break;
    case CFG_T_FREQ: bad = cfg_parse_freq_khz(n->str, &u, why, sizeof why); break;
    case CFG_T_SIZE: bad = cfg_parse_size_bytes(n->str, &u, why, sizeof why); break;
    case CFG_T_BW: bad = cfg_parse_bw_bps(n->str, &u, why, sizeof why); break;
    case CFG_T_DOUBLE: {
        double d = 0;
        if (cfg_parse_double(n->str, &d, why, sizeof why))
            return cfg_errf(err, n, "'%s' = '%s': %s%s", path, s, why, help);
        if (has_range(f) && (d < f->min || d > f->max))
            return range_error(err, f, n, path, shown, help);
        *(double *)dst = d;
        return 0;
    }
    case CFG_T_BOOL:
        if (strcmp(n->str, "true") == 0)
            *(int *)dst = 1;
        else if (strcmp(n->str, "false") == 0)
            *(int *)dst = 0;
        else
            return cfg_errf(err, n, "'%s' = '%s': expected true or false%s", path, s, help);
        return 0;
    case CFG_T_ENUM: {
        if (!f->choices)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_ENUM without choices", path);
        char list[600];
        size_t len = 0;
        const char *best = NULL;
        int bestd = INT_MAX;
        list[0] = '\0';
        for (int i = 0; f->choices[i]; i++) {
            if (strcmp(f->choices[i], n->str) == 0) {
                *(int *)dst = i;
                return 0;
            }
            cfg_app(list, sizeof list, &len, "%s%s", i ? ", " : "", f->choices[i]);
            int d = cfg_edit_distance(n->str, f->choices[i]);
            if (d < bestd) {
                bestd = d;
                best = f->choices[i];
            }
        }
        if (best && cfg_close_enough(n->str, bestd))
            return cfg_errf(err, n, "'%s' = '%s' is not a valid choice; did you mean '%s'? Choices: %s%s", path, s,
                            best, list, help);
        return cfg_errf(err, n, "'%s' = '%s' is not a valid choice; choices: %s%s", path, s, list, help);
    }
    case CFG_T_STRING: {
        size_t len = strlen(n->str);
        if (f->str_size == 0 || len >= f->str_size)
            return cfg_errf(err, n, "'%s' = '%s' is too long (%zu bytes; at most %zu)%s", path, s, len,
                            f->str_size ? f->str_size - 1 : 0, help);
        memcpy(dst, n->str, len + 1);
        return 0;
    }
    default:
        return cxl_errf(err, CXL_EINTERNAL, "field '%s' has an unknown type %d", path, (int)f->type);
    }
    if (bad)
        return cfg_errf(err, n, "'%s' = '%s': %s%s", path, s, why, help);
    if (f->type != CFG_T_U64)
        snprintf(shown, sizeof shown, "'%s' (%" PRIu64 "%s)", s, u, stored_unit(f->type));
    if (has_range(f) && ((double)u < f->min || (double)u > f->max))
        return range_error(err, f, n, path, shown, help);
    *(uint64_t *)dst = u;
    return 0;
}

int cfg_bind(const cfg_node *map, const cfg_node *parent, const char *section, const cfg_field *fields,
             void *base, int *seen, cxl_err *err)
{
    char path[256], keys[600], help[300];
    size_t nf = 0;
    if (!fields || !base)
        return cxl_errf(err, CXL_EINTERNAL, "cfg_bind: NULL field table or base");
    while (fields[nf].key)
        nf++;
    if (seen)
        memset(seen, 0, nf * sizeof *seen);
    /* "'link'" or "the top level", and "in 'link'" or "at the top level", for messages. */
    char what[300], scope[300];
    if (section && *section) {
        snprintf(what, sizeof what, "'%s'", section);
        snprintf(scope, sizeof scope, "in '%s'", section);
    } else {
        snprintf(what, sizeof what, "the top level");
        snprintf(scope, sizeof scope, "at the top level");
    }

    if (map && map->kind != CFG_MAP) {
        field_list(fields, keys, sizeof keys);
        if (map->kind == CFG_SCALAR)
            return cfg_errf(err, map, "%s must be a mapping with keys %s; got the scalar '%s'", what, keys,
                            map->str);
        return cfg_errf(err, map, "%s must be a mapping with keys %s; got %s", what, keys, cfg_kind_name(map->kind));
    }

    /* Present keys, in file order. O(keys * fields). */
    for (size_t i = 0; map && i < map->n; i++) {
        const cfg_node *k = map->keys[i];
        size_t j = 0;
        while (j < nf && strcmp(fields[j].key, k->str) != 0)
            j++;
        char cut[CFG_CLIP_SZ];
        key_path(path, sizeof path, section, j == nf ? cfg_clip(k->str, cut, sizeof cut) : k->str);
        if (j == nf) {
            const char *best = NULL;
            int bestd = INT_MAX;
            for (size_t t = 0; t < nf; t++) {
                if (fields[t].type == CFG_T_RETIRED)
                    continue;
                int d = cfg_edit_distance(k->str, fields[t].key);
                if (d < bestd) {
                    bestd = d;
                    best = fields[t].key;
                }
            }
            field_list(fields, keys, sizeof keys);
            if (best && cfg_close_enough(k->str, bestd))
                return cfg_errf(err, k, "unknown key '%s'; did you mean '%s'? Valid keys %s: %s", path, best, scope,
                                keys);
            return cfg_errf(err, k, "unknown key '%s'; valid keys %s: %s", path, scope, keys);
        }
        if (fields[j].type == CFG_T_RETIRED)
            return cfg_errf(err, k, "key '%s' is no longer accepted: %s", path, fields[j].help);
        if (seen)
            seen[j] = 1;
        int rc = bind_field(&fields[j], map->vals[i], path, base, err);
        if (rc)
            return rc;
    }

    /* Required keys that are absent. */
    for (size_t j = 0; j < nf; j++) {
        if (!fields[j].required || (map && cfg_map_find(map, fields[j].key) >= 0))
            continue;
        key_path(path, sizeof path, section, fields[j].key);
        help_suffix(&fields[j], help, sizeof help);
        const cfg_node *at = map ? map : parent;
        if (!map && section && *section)
            return cfg_errf(err, at, "missing required key '%s' (section '%s' is absent)%s", path, section, help);
        expect_desc(&fields[j], keys, sizeof keys);
        return cfg_errf(err, at, "missing required key '%s'; expected %s%s", path, keys, help);
    }
    return 0;
}
