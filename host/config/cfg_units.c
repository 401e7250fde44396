/* cfg_units.c - numbers with units in configuration values ("90ns", "32GT/s", "64KiB", "25.6GB/s"), converted
 * exactly to the stored integer unit, and plain integers and doubles. */
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

/* ---- numbers and units ---- */

/* A unit is 2^p2 * 5^p5 of the stored unit, so every conversion is exact integer arithmetic. */
struct cfg_unit {
    const char *name;
    int p2, p5;
};

struct cfg_unit_kind {
    const struct cfg_unit *units;   /* terminated by name NULL */
    const char *stored;             /* stored unit, for messages */
    const char *example;
};

static const struct cfg_unit time_units[] = {
    {"ps", 0, 0}, {"ns", 3, 3}, {"us", 6, 6}, {"ms", 9, 9}, {"s", 12, 12}, {NULL, 0, 0}};
static const struct cfg_unit rate_units[] = {{"MT/s", 0, 0}, {"GT/s", 3, 3}, {NULL, 0, 0}};
static const struct cfg_unit freq_units[] = {
    {"Hz", -3, -3}, {"kHz", 0, 0}, {"MHz", 3, 3}, {"GHz", 6, 6}, {NULL, 0, 0}};
static const struct cfg_unit size_units[] = {
    {"B", 0, 0},    {"KB", 3, 3},    {"MB", 6, 6},    {"GB", 9, 9},    {"TB", 12, 12},
    {"PB", 15, 15}, {"KiB", 10, 0}, {"MiB", 20, 0}, {"GiB", 30, 0}, {"TiB", 40, 0}, {"PiB", 50, 0},
    {NULL, 0, 0}};
static const struct cfg_unit bw_units[] = {
    {"B/s", 0, 0},    {"KB/s", 3, 3},    {"MB/s", 6, 6},    {"GB/s", 9, 9},    {"TB/s", 12, 12},
    {"KiB/s", 10, 0}, {"MiB/s", 20, 0}, {"GiB/s", 30, 0}, {"TiB/s", 40, 0},
    /* bit rates (network links): 1 b/s = 2^-3 B/s */
    {"Kb/s", 0, 3},   {"Mb/s", 3, 6},   {"Gb/s", 6, 9},   {"Tb/s", 9, 12},  {NULL, 0, 0}};

static const struct cfg_unit_kind time_kind = {time_units, "ps", "90ns"};
static const struct cfg_unit_kind rate_kind = {rate_units, "MT/s", "32GT/s"};
static const struct cfg_unit_kind freq_kind = {freq_units, "kHz", "1.5GHz"};
static const struct cfg_unit_kind size_kind = {size_units, "B", "64KiB"};
static const struct cfg_unit_kind bw_kind = {bw_units, "B/s", "25.6GB/s"};

static void unit_list(const struct cfg_unit_kind *k, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const struct cfg_unit *u = k->units; u->name; u++)
        cfg_app(buf, sz, &len, "%s%s", u == k->units ? "" : ", ", u->name);
}

/* Divide the decimal number d[0..*n) (most significant first) by a small divisor in place; returns the
 * remainder. Leading zeros are stripped. */
static unsigned digits_div(unsigned char *d, size_t *n, unsigned divisor)
{
    unsigned rem = 0;
    for (size_t i = 0; i < *n; i++) {
        unsigned cur = rem * 10 + d[i];
        d[i] = (unsigned char)(cur / divisor);
        rem = cur % divisor;
    }
    size_t z = 0;
    while (z < *n && d[z] == 0)
        z++;
    memmove(d, d + z, *n - z);
    *n -= z;
    return rem;
}

/* "<digits>[.<digits>][ ]<unit>" -> stored unit, exactly: the digits are kept as a decimal string, divided
 * exactly by 2 and 5 where the unit and the decimal point require it, then multiplied up with overflow
 * checks. No floating point is involved. */
static int parse_unit_value(const char *s, const struct cfg_unit_kind *k, uint64_t *out, char *why, size_t whysz)
{
    char units[128];
    unit_list(k, units, sizeof units);
    if (!s || !*s) {
        cfg_set_why(why, whysz, "empty value; expected a number with a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    if (*s == '-') {
        cfg_set_why(why, whysz, "negative values are not allowed; expected e.g. %s", k->example);
        return -1;
    }
    if (!isdigit((unsigned char)*s)) {
        cfg_set_why(why, whysz, "expected a number with a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    const char *ip = s, *p = s;
    while (isdigit((unsigned char)*p))
        p++;
    size_t iplen = (size_t)(p - ip);
    const char *fp = NULL;
    size_t fplen = 0;
    if (*p == '.') {
        fp = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        fplen = (size_t)(p - fp);
        if (fplen == 0) {
            cfg_set_why(why, whysz, "expected digits after the decimal point, e.g. %s", k->example);
            return -1;
        }
    }
    if (*p == ' ' && p[1] != '\0')
        p++;
    if (*p == '\0') {
        cfg_set_why(why, whysz, "needs a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    const struct cfg_unit *u = k->units;
    while (u->name && strcmp(u->name, p) != 0)
        u++;
    if (!u->name) {
        cfg_set_why(why, whysz, "unknown unit '%s'; accepted units: %s", p, units);
        return -1;
    }

    /* Significant digits: integer part without leading zeros, fraction without trailing zeros. */
    while (iplen > 0 && *ip == '0') {
        ip++;
        iplen--;
    }
    while (fplen > 0 && fp[fplen - 1] == '0')
        fplen--;
    if (iplen + fplen > CFG_MAX_DIGITS) {
        cfg_set_why(why, whysz, "too many digits (at most %d significant digits)", CFG_MAX_DIGITS);
        return -1;
    }
    unsigned char d[CFG_MAX_DIGITS];
    size_t n = 0;
    for (size_t i = 0; i < iplen; i++)
        d[n++] = (unsigned char)(ip[i] - '0');
    for (size_t i = 0; i < fplen; i++)
        d[n++] = (unsigned char)(fp[i] - '0');
    size_t z = 0;
    while (z < n && d[z] == 0)
        z++;
    memmove(d, d + z, n - z);
    n -= z;

    /* value = D * 10^-F * 2^p2 * 5^p5 of the stored unit */
    int e2 = u->p2 - (int)fplen, e5 = u->p5 - (int)fplen;
    for (; e2 < 0; e2++)
        if (digits_div(d, &n, 2) != 0)
            goto not_whole;
    for (; e5 < 0; e5++)
        if (digits_div(d, &n, 5) != 0)
            goto not_whole;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (UINT64_MAX - d[i]) / 10)
            goto overflow;
        v = v * 10 + d[i];
    }
    for (; e2 > 0; e2--) {
        if (v > UINT64_MAX / 2)
            goto overflow;
        v *= 2;
    }
    for (; e5 > 0; e5--) {
        if (v > UINT64_MAX / 5)
            goto overflow;
        v *= 5;
    }
    *out = v;
    return 0;

not_whole:
    cfg_set_why(why, whysz, "not a whole number of %s (values are stored as integer %s; 1 %s is the smallest step)",
            k->stored, k->stored, k->stored);
    return -1;
overflow:
    cfg_set_why(why, whysz, "too large (at most %" PRIu64 " %s)", UINT64_MAX, k->stored);
    return -1;
}

int cfg_parse_time_ps(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &time_kind, out, why, whysz);
}

int cfg_parse_rate_mts(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &rate_kind, out, why, whysz);
}

int cfg_parse_freq_khz(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &freq_kind, out, why, whysz);
}

int cfg_parse_size_bytes(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &size_kind, out, why, whysz);
}

int cfg_parse_bw_bps(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &bw_kind, out, why, whysz);
}

int cfg_parse_u64(const char *s, uint64_t *out, char *why, size_t whysz)
{
    if (!s || !*s) {
        cfg_set_why(why, whysz, "empty value; expected a non-negative integer, e.g. 16");
        return -1;
    }
    if (*s == '-') {
        cfg_set_why(why, whysz, "negative values are not allowed; expected a non-negative integer, e.g. 16");
        return -1;
    }
    /* strtoull would accept leading space, a sign and "0x"; only plain decimal digits are allowed. */
    if (!isdigit((unsigned char)*s)) {
        cfg_set_why(why, whysz, "expected a non-negative integer, e.g. 16");
        return -1;
    }
    /* YAML 1.1 reads 010 as octal 8, YAML 1.2 as 10: refuse the ambiguity rather than pick one. */
    if (s[0] == '0' && isdigit((unsigned char)s[1])) {
        cfg_set_why(why, whysz, "leading zero: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write the number "
                "without leading zeros, e.g. 8");
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || v > UINT64_MAX) {
        cfg_set_why(why, whysz, "too large (at most %" PRIu64 ")", UINT64_MAX);
        return -1;
    }
    if (*end) {
        cfg_set_why(why, whysz, "not a plain integer (unexpected '%s' after the number); expected e.g. 16", end);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int cfg_parse_double(const char *s, double *out, char *why, size_t whysz)
{
    if (!s || !*s) {
        cfg_set_why(why, whysz, "empty value; expected a number, e.g. 0.75");
        return -1;
    }
    /* Decimal notation only: strtod would also take "inf", "nan", hex floats and leading space. Note that
     * strtod follows LC_NUMERIC; cxlsim never changes the locale. */
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p)) {
            cfg_set_why(why, whysz, "not a number (unexpected '%s'); expected e.g. 0.75 or 1e-3", p);
            return -1;
        }
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) {
        cfg_set_why(why, whysz, "not a number; expected e.g. 0.75 or 1e-3");
        return -1;
    }
    if (errno == ERANGE || !isfinite(v)) {
        cfg_set_why(why, whysz, "out of the range of a double");
        return -1;
    }
    *out = v;
    return 0;
}
