/* test_cfgdump.c - the resolved-configuration writer (cfgdump.h): every unit type prints exactly and
 * parses back to the same stored value, reals read back bit for bit, strings are quoted, nested tables
 * indent, and the FNV-1a 64 hash matches its published test vectors. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/cfg.h"
#include "config/cfgdump.h"

static void check_u64(enum cfg_type t, uint64_t v, const char *want,
                      int (*parse)(const char *, uint64_t *, char *, size_t))
{
    cfg_field f = { "k", t, 0, 0, 1, 0, NULL, NULL, 0, NULL, NULL };
    char buf[64], why[128];
    cfgdump_value(&f, &v, buf, sizeof buf);
    if (want)
        assert_string_equal(buf, want);
    uint64_t back = 0;
    if (parse(buf, &back, why, sizeof why))
        fail_msg("'%s' does not parse: %s", buf, why);
    assert_true(back == v);
}

static void units_round_trip(void **state)
{
    (void)state;
    check_u64(CFG_T_U64, 16, "16", cfg_parse_u64);
    check_u64(CFG_T_TIME, 90000, "90ns", cfg_parse_time_ps);
    check_u64(CFG_T_TIME, 0, "0ps", cfg_parse_time_ps);
    check_u64(CFG_T_TIME, 1500, "1500ps", cfg_parse_time_ps);
    check_u64(CFG_T_TIME, 2000000000000ull, "2s", cfg_parse_time_ps);
    check_u64(CFG_T_RATE, 32000, "32GT/s", cfg_parse_rate_mts);
    check_u64(CFG_T_RATE, 4800, "4800MT/s", cfg_parse_rate_mts);
    check_u64(CFG_T_FREQ, 2400000, "2400MHz", cfg_parse_freq_khz);
    check_u64(CFG_T_SIZE, 64ull << 30, "64GiB", cfg_parse_size_bytes);
    check_u64(CFG_T_SIZE, 80000000000ull, "80GB", cfg_parse_size_bytes);
    check_u64(CFG_T_SIZE, 68, "68B", cfg_parse_size_bytes);
    check_u64(CFG_T_BW, 25600000000ull, "25600MB/s", cfg_parse_bw_bps);
    check_u64(CFG_T_BW, 3350000000000ull, NULL, cfg_parse_bw_bps);
    check_u64(CFG_T_BW, 1, "1B/s", cfg_parse_bw_bps);
}

static void reals_bools_enums_strings(void **state)
{
    (void)state;
    char buf[128];
    const double vals[] = { 0.75, 0.1, 1.0 / 3.0, 989.4, 1e-300, 6.02e23 };
    cfg_field fd = { "k", CFG_T_DOUBLE, 0, 0, 1, 0, NULL, NULL, 0, NULL, NULL };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        cfgdump_value(&fd, &vals[i], buf, sizeof buf);
        assert_true(strtod(buf, NULL) == vals[i]);
    }
    cfgdump_value(&fd, &vals[0], buf, sizeof buf);
    assert_string_equal(buf, "0.75");
    int yes = 1, two = 2;
    cfg_field fb = { "k", CFG_T_BOOL, 0, 0, 1, 0, NULL, NULL, 0, NULL, NULL };
    cfgdump_value(&fb, &yes, buf, sizeof buf);
    assert_string_equal(buf, "true");
    static const char *const choices[] = { "off", "all-bank", "same-bank", NULL };
    cfg_field fe = { "k", CFG_T_ENUM, 0, 0, 1, 0, choices, NULL, 0, NULL, NULL };
    cfgdump_value(&fe, &two, buf, sizeof buf);
    assert_string_equal(buf, "same-bank");
    cfgdump_quote("say \"hi\"\\\n", buf, sizeof buf);
    assert_string_equal(buf, "\"say \\\"hi\\\"\\\\\\x0a\"");
}

struct inner { uint64_t lat_ps; };
struct outer { char name[16]; struct inner in; uint64_t n; };

static void nested_tables(void **state)
{
    (void)state;
    static const cfg_field sub[] = {
        { "latency", CFG_T_TIME, offsetof(struct outer, in.lat_ps), 0, 1, 0, NULL, NULL, 0, NULL, NULL },
        { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL },
    };
    static const cfg_field top[] = {
        { "name", CFG_T_STRING, offsetof(struct outer, name), 0, 1, 0, NULL, NULL, 16, NULL, NULL },
        { "inner", CFG_T_MAP, 0, 0, 1, 0, NULL, sub, 0, NULL, NULL },
        { "n", CFG_T_U64, offsetof(struct outer, n), 0, 1, 0, NULL, NULL, 0, NULL, NULL },
        { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL },
    };
    struct outer o = { "dev", { 20000 }, 3 };
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    cfgdump_fields(m, top, &o, 0, NULL, NULL);
    fclose(m);
    assert_string_equal(text, "name: \"dev\"\ninner:\n  latency: 20ns\nn: 3\n");
    free(text);
}

static void diff_one(void *ctx, const char *key, const char *value, const char *dflt)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 256 - n, "%s=%s/%s;", key, value, dflt);
}

static void diff_against_defaults(void **state)
{
    (void)state;
    struct o { uint64_t req, n, lat_ps; double eff; } a = { 7, 3, 20000, 0.5 }, d = { 1, 3, 10000, 0.5 };
    static const cfg_field sub[] = {
        { "latency", CFG_T_TIME, offsetof(struct o, lat_ps), 0, 1, 0, NULL, NULL, 0, NULL, NULL },
        { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL },
    };
    static const cfg_field top[] = {
        { "req", CFG_T_U64, offsetof(struct o, req), 1, 1, 0, NULL, NULL, 0, NULL, NULL },
        { "n", CFG_T_U64, offsetof(struct o, n), 0, 1, 0, NULL, NULL, 0, NULL, NULL },
        { "inner", CFG_T_MAP, 0, 0, 1, 0, NULL, sub, 0, NULL, NULL },
        { "eff", CFG_T_DOUBLE, offsetof(struct o, eff), 0, 0, 1, NULL, NULL, 0, NULL, NULL },
        { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL },
    };
    char out[256] = "";
    /* the required field has no default: left out; equal values too; the nested one with its path */
    cfgdump_diff(top, &a, &d, "x.", diff_one, out);
    assert_string_equal(out, "x.inner.latency=20ns/10ns;");
}

static void fnv1a64_vectors(void **state)
{
    (void)state;
    /* the FNV reference vectors (draft-eastlake-fnv, test suite): "", "a", "foobar" */
    assert_true(cfgdump_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    assert_true(cfgdump_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(cfgdump_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(units_round_trip),
        cmocka_unit_test(reals_bools_enums_strings),
        cmocka_unit_test(nested_tables),
        cmocka_unit_test(diff_against_defaults),
        cmocka_unit_test(fnv1a64_vectors),
    };
    return cmocka_run_group_tests_name("cfgdump", tests, NULL, NULL);
}
