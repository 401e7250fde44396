/* test_cfg.c - cmocka suite for host/cfg: unit parsers, loading, extends, binding, and one test per error
 * class with its exact file:line:column.
 *
 * Fixture files are written into a fresh mkdtemp folder under /tmp per test and removed afterwards.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/cfg.h"

/* ---- fixture: a temporary folder ---- */

enum { FX_MAX = 16 };

struct fx {
    char dir[64];
    char *made[FX_MAX]; /* files and folders, removed in reverse order */
    int isdir[FX_MAX];
    int n;
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/test_cfg.XXXXXX");
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *fx = *state;
    int rc = 0;
    for (int i = fx->n - 1; i >= 0; i--) {
        if ((fx->isdir[i] ? rmdir(fx->made[i]) : unlink(fx->made[i])) != 0)
            rc = -1;
        free(fx->made[i]);
    }
    if (rmdir(fx->dir) != 0)
        rc = -1;
    free(fx);
    return rc;
}

/* Full path of rel inside the fixture folder, into the caller's buffer. */
static const char *fx_path(const struct fx *fx, const char *rel, char *buf, size_t sz)
{
    snprintf(buf, sz, "%s/%s", fx->dir, rel);
    return buf;
}

static char *fx_track(struct fx *fx, const char *rel, int isdir)
{
    assert_true(fx->n < FX_MAX);
    size_t sz = strlen(fx->dir) + strlen(rel) + 2;
    char *p = malloc(sz);
    assert_non_null(p);
    snprintf(p, sz, "%s/%s", fx->dir, rel);
    fx->made[fx->n] = p;
    fx->isdir[fx->n] = isdir;
    fx->n++;
    return p;
}

static void fx_mkdir(struct fx *fx, const char *rel)
{
    char *p = fx_track(fx, rel, 1);
    assert_int_equal(mkdir(p, 0700), 0);
}

static const char *fx_write(struct fx *fx, const char *rel, const char *text)
{
    char *p = fx_track(fx, rel, 0);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return p;
}

/* ---- assertions on errors ---- */

/* The error has this code and location, and its message contains every string of the NULL-terminated
 * list. */
static void check_err(const cxl_err *e, int code, const char *file, int line, int col, ...)
{
    char shown[2048];
    cxl_err_format(e, shown, sizeof shown);
    if (e->code != code || strcmp(e->file, file) != 0 || e->line != line || e->col != col) {
        print_error("expected code %d at %s:%d:%d, got code %d: %s\n", code, file, line, col, e->code, shown);
        fail();
    }
    va_list ap;
    va_start(ap, col);
    for (const char *want = va_arg(ap, const char *); want; want = va_arg(ap, const char *)) {
        if (!strstr(e->msg, want)) {
            print_error("message lacks \"%s\": %s\n", want, shown);
            va_end(ap);
            fail();
        }
    }
    va_end(ap);
}

static void check_mark(const cfg_node *n, const char *file, int line, int col)
{
    const char *f = NULL;
    int l = 0, c = 0;
    assert_non_null(n);
    cfg_mark(n, &f, &l, &c);
    assert_string_equal(f, file);
    assert_int_equal(l, line);
    assert_int_equal(c, col);
}

/* ---- parsers ---- */

static void ok_parse(int (*fn)(const char *, uint64_t *, char *, size_t), const char *s, uint64_t want)
{
    uint64_t v = 0xdeadbeef;
    char why[256] = "";
    if (fn(s, &v, why, sizeof why) != 0) {
        print_error("'%s' rejected: %s\n", s, why);
        fail();
    }
    if (v != want) {
        print_error("'%s' gave %llu, want %llu\n", s, (unsigned long long)v, (unsigned long long)want);
        fail();
    }
}

static void bad_parse(int (*fn)(const char *, uint64_t *, char *, size_t), const char *s, const char *want_why)
{
    uint64_t v = 12345;
    char why[256] = "";
    if (fn(s, &v, why, sizeof why) != -1) {
        print_error("'%s' accepted as %llu\n", s ? s : "(null)", (unsigned long long)v);
        fail();
    }
    assert_int_equal(v, 12345); /* untouched on failure */
    if (!strstr(why, want_why)) {
        print_error("'%s': reason \"%s\" lacks \"%s\"\n", s ? s : "(null)", why, want_why);
        fail();
    }
}

static void test_parse_u64(void **state)
{
    (void)state;
    ok_parse(cfg_parse_u64, "0", 0);
    ok_parse(cfg_parse_u64, "16", 16);
    bad_parse(cfg_parse_u64, "007", "leading zero");  /* YAML 1.1 octal or 1.2 decimal: refused */
    bad_parse(cfg_parse_u64, "010", "YAML 1.1 reads it as octal");
    ok_parse(cfg_parse_u64, "18446744073709551615", UINT64_MAX);
    bad_parse(cfg_parse_u64, "18446744073709551616", "too large");
    bad_parse(cfg_parse_u64, "99999999999999999999999", "too large");
    bad_parse(cfg_parse_u64, "-1", "negative");
    bad_parse(cfg_parse_u64, "+1", "non-negative integer");
    bad_parse(cfg_parse_u64, " 1", "non-negative integer");
    bad_parse(cfg_parse_u64, "", "empty");
    bad_parse(cfg_parse_u64, NULL, "empty");
    bad_parse(cfg_parse_u64, "12ns", "unexpected 'ns'");
    bad_parse(cfg_parse_u64, "1_000", "unexpected '_000'");
    bad_parse(cfg_parse_u64, "0x10", "unexpected 'x10'");
    bad_parse(cfg_parse_u64, "1.5", "unexpected '.5'");
    bad_parse(cfg_parse_u64, "1 ", "unexpected ' '");
}

static void test_parse_time(void **state)
{
    (void)state;
    ok_parse(cfg_parse_time_ps, "0ps", 0);
    ok_parse(cfg_parse_time_ps, "1ps", 1);
    ok_parse(cfg_parse_time_ps, "90ns", 90000);
    ok_parse(cfg_parse_time_ps, "90 ns", 90000);
    ok_parse(cfg_parse_time_ps, "1.5us", 1500000);
    ok_parse(cfg_parse_time_ps, "2ms", 2000000000ULL);
    ok_parse(cfg_parse_time_ps, "1s", 1000000000000ULL);
    ok_parse(cfg_parse_time_ps, "18446744073709551615ps", UINT64_MAX);
    ok_parse(cfg_parse_time_ps, "18446744.073709551615s", UINT64_MAX);
    bad_parse(cfg_parse_time_ps, "90", "needs a unit, e.g. 90ns");
    bad_parse(cfg_parse_time_ps, "90nsec", "unknown unit 'nsec'; accepted units: ps, ns, us, ms, s");
    bad_parse(cfg_parse_time_ps, "90NS", "unknown unit 'NS'");
    bad_parse(cfg_parse_time_ps, "90  ns", "unknown unit ' ns'");
    bad_parse(cfg_parse_time_ps, "90ns ", "unknown unit 'ns '");
    bad_parse(cfg_parse_time_ps, "-5ns", "negative");
    bad_parse(cfg_parse_time_ps, "+5ns", "expected a number");
    bad_parse(cfg_parse_time_ps, ".5ns", "expected a number");
    bad_parse(cfg_parse_time_ps, "1.ns", "digits after the decimal point");
    bad_parse(cfg_parse_time_ps, "1e3ns", "unknown unit 'e3ns'");
    bad_parse(cfg_parse_time_ps, "ns", "expected a number");
    bad_parse(cfg_parse_time_ps, "", "empty");
    bad_parse(cfg_parse_time_ps, "18446744073709551616ps", "too large");
    bad_parse(cfg_parse_time_ps, "18446745s", "too large");
}

static void test_parse_time_exact(void **state)
{
    (void)state;
    /* Binary floating point would give 14199.999...: the parser works on the decimal digits. */
    ok_parse(cfg_parse_time_ps, "14.2ns", 14200);
    ok_parse(cfg_parse_time_ps, "0.1ns", 100);
    ok_parse(cfg_parse_time_ps, "0.001ns", 1);
    ok_parse(cfg_parse_time_ps, "0.000001us", 1);
    ok_parse(cfg_parse_time_ps, "14.20000000000000000000000000000ns", 14200);
    ok_parse(cfg_parse_time_ps, "0000000000000000000000000000014.2ns", 14200);
    ok_parse(cfg_parse_time_ps, "3.000000000001s", 3000000000001ULL);
    bad_parse(cfg_parse_time_ps, "0.5ps", "not a whole number of ps");
    bad_parse(cfg_parse_time_ps, "0.0001ns", "not a whole number of ps");
    bad_parse(cfg_parse_time_ps, "1.0000000000001s", "not a whole number of ps");
    bad_parse(cfg_parse_time_ps, "0.00000000000000000000000000001s", "not a whole number");
    bad_parse(cfg_parse_time_ps, "1.00000000000000000000000000000000000000000000000000000000000000001ns",
              "too many digits");
}

static void test_parse_rate(void **state)
{
    (void)state;
    ok_parse(cfg_parse_rate_mts, "32GT/s", 32000);
    ok_parse(cfg_parse_rate_mts, "2.5GT/s", 2500);
    ok_parse(cfg_parse_rate_mts, "8000MT/s", 8000);
    ok_parse(cfg_parse_rate_mts, "64 GT/s", 64000);
    bad_parse(cfg_parse_rate_mts, "0.0005GT/s", "not a whole number of MT/s");
    bad_parse(cfg_parse_rate_mts, "32", "needs a unit, e.g. 32GT/s");
    bad_parse(cfg_parse_rate_mts, "32Gbps", "accepted units: MT/s, GT/s");
}

static void test_parse_freq(void **state)
{
    (void)state;
    ok_parse(cfg_parse_freq_khz, "2.5GHz", 2500000);
    ok_parse(cfg_parse_freq_khz, "100MHz", 100000);
    ok_parse(cfg_parse_freq_khz, "1kHz", 1);
    ok_parse(cfg_parse_freq_khz, "2000Hz", 2);
    ok_parse(cfg_parse_freq_khz, "1.5 GHz", 1500000);
    bad_parse(cfg_parse_freq_khz, "1500Hz", "not a whole number of kHz");
    bad_parse(cfg_parse_freq_khz, "0.5kHz", "not a whole number of kHz");
    bad_parse(cfg_parse_freq_khz, "2.5ghz", "accepted units: Hz, kHz, MHz, GHz");
    bad_parse(cfg_parse_freq_khz, "1", "needs a unit, e.g. 1.5GHz");
}

static void test_parse_size(void **state)
{
    (void)state;
    ok_parse(cfg_parse_size_bytes, "64B", 64);
    ok_parse(cfg_parse_size_bytes, "64KiB", 65536);
    ok_parse(cfg_parse_size_bytes, "1.5KB", 1500);
    ok_parse(cfg_parse_size_bytes, "0.5KiB", 512);
    ok_parse(cfg_parse_size_bytes, "16GiB", 17179869184ULL);
    ok_parse(cfg_parse_size_bytes, "1TB", 1000000000000ULL);
    ok_parse(cfg_parse_size_bytes, "1TiB", 1099511627776ULL);
    ok_parse(cfg_parse_size_bytes, "0.25MiB", 262144);
    ok_parse(cfg_parse_size_bytes, "17179869183GiB", 18446744072635809792ULL);
    /* 2^-30 TiB = 1 KiB exactly, though its 21 significant digits exceed uint64 before reduction */
    ok_parse(cfg_parse_size_bytes, "0.000000000931322574615478515625TiB", 1024);
    bad_parse(cfg_parse_size_bytes, "17179869184GiB", "too large");
    bad_parse(cfg_parse_size_bytes, "1.0000001KiB", "not a whole number of B");
    bad_parse(cfg_parse_size_bytes, "0.1B", "not a whole number of B");
    bad_parse(cfg_parse_size_bytes, "4kb", "accepted units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB");
    bad_parse(cfg_parse_size_bytes, "4096", "needs a unit, e.g. 64KiB");
    ok_parse(cfg_parse_size_bytes, "1PiB", 1ULL << 50);   /* so that a range up to 1 PiB can be written */
    ok_parse(cfg_parse_size_bytes, "2PB", 2000000000000000ULL);
}

static void test_parse_bw(void **state)
{
    (void)state;
    ok_parse(cfg_parse_bw_bps, "25.6GB/s", 25600000000ULL);
    ok_parse(cfg_parse_bw_bps, "1GiB/s", 1073741824ULL);
    ok_parse(cfg_parse_bw_bps, "100B/s", 100);
    ok_parse(cfg_parse_bw_bps, "64 GB/s", 64000000000ULL);
    ok_parse(cfg_parse_bw_bps, "1.5KiB/s", 1536);
    bad_parse(cfg_parse_bw_bps, "25.6GB", "unknown unit 'GB'; accepted units: B/s, KB/s");
    ok_parse(cfg_parse_bw_bps, "200Gb/s", 25000000000ULL); /* bit rates: 1 b/s = 1/8 B/s */
    ok_parse(cfg_parse_bw_bps, "25.6Gb/s", 3200000000ULL);
    ok_parse(cfg_parse_bw_bps, "8Kb/s", 1000);
    bad_parse(cfg_parse_bw_bps, "0.001Kb/s", "not a whole number of B/s");
    bad_parse(cfg_parse_bw_bps, "25.6gb/s", "unknown unit 'gb/s'");
    bad_parse(cfg_parse_bw_bps, "0.5B/s", "not a whole number of B/s");
    bad_parse(cfg_parse_bw_bps, "25.6", "needs a unit, e.g. 25.6GB/s");
}

static void test_parse_double(void **state)
{
    (void)state;
    double d = 0;
    char why[256];
    assert_int_equal(cfg_parse_double("0.75", &d, why, sizeof why), 0);
    assert_true(d == 0.75);
    assert_int_equal(cfg_parse_double("-1.5", &d, why, sizeof why), 0);
    assert_true(d == -1.5);
    assert_int_equal(cfg_parse_double("1e3", &d, why, sizeof why), 0);
    assert_true(d == 1000.0);
    assert_int_equal(cfg_parse_double("3", &d, why, sizeof why), 0);
    assert_true(d == 3.0);
    d = 42;
    const char *bad[] = {"", "abc", "1.5x", "nan", "inf", "-inf", "0x1p3", " 1", "1e", "-", "1e400", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (cfg_parse_double(bad[i], &d, why, sizeof why) != -1) {
            print_error("'%s' accepted\n", bad[i]);
            fail();
        }
        assert_true(d == 42);
        assert_true(why[0] != '\0');
    }
    assert_int_equal(cfg_parse_double(NULL, &d, NULL, 0), -1); /* why is optional */
}

/* ---- binding tables used by the load tests ---- */

struct link_cfg {
    uint64_t width, latency_ps, rate_mts;
    int mode, retimer;
    char name[8];
};

struct sys_cfg {
    struct link_cfg link;
    uint64_t mem_bytes, bw_bps, clk_khz, seed, lanes_sum;
    double util;
};

static const char *const modes[] = {"flit68", "flit256", "latopt", NULL};

static const cfg_field link_fields[] = {
    {.key = "width", .type = CFG_T_U64, .offset = offsetof(struct link_cfg, width), .required = 1, .min = 1,
     .max = 16, .help = "lanes per link"},
    {.key = "latency", .type = CFG_T_TIME, .offset = offsetof(struct link_cfg, latency_ps), .min = 1000,
     .max = 100000, .help = "PHY + retimer latency, e.g. 20ns"},
    {.key = "rate", .type = CFG_T_RATE, .offset = offsetof(struct link_cfg, rate_mts)},
    {.key = "mode", .type = CFG_T_ENUM, .offset = offsetof(struct link_cfg, mode), .choices = modes},
    {.key = "retimer", .type = CFG_T_BOOL, .offset = offsetof(struct link_cfg, retimer)},
    {.key = "name", .type = CFG_T_STRING, .offset = offsetof(struct link_cfg, name), .str_size = 8},
    {.key = "lanes", .type = CFG_T_RETIRED, .help = "'lanes' became 'width': write width: <lanes>"},
    {.key = NULL},
};

/* CFG_T_CUSTOM example: a sequence of integers, summed. */
static int bind_lanes(const cfg_node *n, void *dst, cxl_err *err)
{
    if (cfg_kind(n) != CFG_SEQ)
        return cfg_errf(err, n, "'lanes' must be a sequence of integers, e.g. [1, 2]");
    uint64_t sum = 0;
    for (size_t i = 0; i < cfg_seq_size(n); i++) {
        const cfg_node *it = cfg_seq_at(n, i);
        uint64_t v;
        char why[128];
        if (!cfg_scalar(it) || cfg_parse_u64(cfg_scalar(it), &v, why, sizeof why))
            return cfg_errf(err, it, "'lanes[%zu]': %s", i, cfg_scalar(it) ? why : "must be an integer");
        sum += v;
    }
    *(uint64_t *)dst = sum;
    return 0;
}

static const cfg_field sys_fields[] = {
    {.key = "link", .type = CFG_T_MAP, .offset = offsetof(struct sys_cfg, link), .required = 1,
     .sub = link_fields},
    {.key = "memory", .type = CFG_T_SIZE, .offset = offsetof(struct sys_cfg, mem_bytes)},
    {.key = "bandwidth", .type = CFG_T_BW, .offset = offsetof(struct sys_cfg, bw_bps)},
    {.key = "clock", .type = CFG_T_FREQ, .offset = offsetof(struct sys_cfg, clk_khz)},
    {.key = "utilisation", .type = CFG_T_DOUBLE, .offset = offsetof(struct sys_cfg, util), .min = 0, .max = 1},
    {.key = "seed", .type = CFG_T_U64, .offset = offsetof(struct sys_cfg, seed)},
    {.key = "lanes", .type = CFG_T_CUSTOM, .offset = offsetof(struct sys_cfg, lanes_sum), .custom = bind_lanes},
    {.key = NULL},
};

static const char good_yaml[] = "# a complete configuration\n"
                                "link:\n"
                                "  width: 8\n"
                                "  latency: 14.2ns\n"
                                "  rate: 32GT/s\n"
                                "  mode: flit256\n"
                                "  retimer: true\n"
                                "  name: cxl0\n"
                                "memory: 16GiB\n"
                                "bandwidth: 25.6GB/s\n"
                                "clock: 2.5GHz\n"
                                "utilisation: 0.75\n"
                                "seed: 42\n"
                                "lanes: [1, 2, 3]\n";

/* Load text expected to succeed. */
static cfg_doc *load_ok(const char *name, const char *text)
{
    cfg_doc *doc = NULL;
    cxl_err e;
    int rc = cfg_load_text(name, text, NULL, NULL, &doc, &e);
    if (rc != 0) {
        char buf[2048];
        cxl_err_format(&e, buf, sizeof buf);
        print_error("load failed: %s\n", buf);
        fail();
    }
    assert_int_equal(e.code, 0);
    assert_non_null(doc);
    return doc;
}

/* Load text, bind it with sys_fields, and expect the error with the given location and message parts. */
#define BIND_ERR(text, line, col, ...)                                                                         \
    do {                                                                                                       \
        cfg_doc *doc_ = load_ok("t.yaml", (text));                                                             \
        struct sys_cfg c_;                                                                                     \
        memset(&c_, 0, sizeof c_);                                                                             \
        cxl_err e_;                                                                                            \
        cxl_err_clear(&e_);                                                                                    \
        assert_int_equal(cfg_bind(cfg_root(doc_), NULL, NULL, sys_fields, &c_, NULL, &e_), CXL_ECONFIG);      \
        check_err(&e_, CXL_ECONFIG, "t.yaml", (line), (col), __VA_ARGS__, NULL);                               \
        cfg_free(doc_);                                                                                        \
    } while (0)

/* Load text and expect a load error. */
#define LOAD_ERR(text, line, col, ...)                                                                         \
    do {                                                                                                       \
        cfg_doc *doc_ = (cfg_doc *)1;                                                                          \
        cxl_err e_;                                                                                            \
        assert_int_equal(cfg_load_text("t.yaml", (text), NULL, NULL, &doc_, &e_), CXL_ECONFIG);               \
        assert_null(doc_);                                                                                     \
        check_err(&e_, CXL_ECONFIG, "t.yaml", (line), (col), __VA_ARGS__, NULL);                               \
    } while (0)

/* ---- loading ---- */

static void test_load_file_good(void **state)
{
    struct fx *fx = *state;
    const char *path = fx_write(fx, "good.yaml", good_yaml);
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(path, NULL, NULL, &doc, &e), 0);
    const cfg_node *root = cfg_root(doc);
    assert_int_equal(cfg_kind(root), CFG_MAP);
    assert_int_equal(cfg_map_size(root), 7);
    assert_string_equal(cfg_map_key(root, 0), "link");
    assert_string_equal(cfg_map_key(root, 6), "lanes");
    check_mark(cfg_map_key_node(root, 0), path, 2, 1);

    const cfg_node *link = cfg_map_get(root, "link");
    assert_int_equal(cfg_kind(link), CFG_MAP);
    check_mark(link, path, 3, 3);
    assert_string_equal(cfg_scalar(cfg_map_get(link, "latency")), "14.2ns");
    check_mark(cfg_map_get(link, "latency"), path, 4, 12);
    check_mark(cfg_map_key_node(link, 1), path, 4, 3);

    const cfg_node *lanes = cfg_map_get(root, "lanes");
    assert_int_equal(cfg_kind(lanes), CFG_SEQ);
    assert_int_equal(cfg_seq_size(lanes), 3);
    assert_string_equal(cfg_scalar(cfg_seq_at(lanes, 2)), "3");
    check_mark(cfg_seq_at(lanes, 2), path, 14, 15);

    /* Accessors on the wrong kind or out of range answer empty. */
    assert_null(cfg_scalar(link));
    assert_int_equal(cfg_map_size(lanes), 0);
    assert_int_equal(cfg_seq_size(link), 0);
    assert_null(cfg_seq_at(lanes, 3));
    assert_null(cfg_map_key(root, 7));
    assert_null(cfg_map_value(root, 7));
    assert_null(cfg_map_key_node(lanes, 0));
    assert_null(cfg_map_get(lanes, "x"));
    assert_null(cfg_map_get(root, "absent"));
    assert_null(cfg_map_get(NULL, "link"));
    assert_null(cfg_root(NULL));
    cfg_free(doc);
    cfg_free(NULL);
}

static void test_bind_good(void **state)
{
    (void)state;
    cfg_doc *doc = load_ok("good.yaml", good_yaml);
    struct sys_cfg c;
    memset(&c, 0, sizeof c);
    int seen[8];
    cxl_err e;
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, seen, &e), 0);
    assert_int_equal(c.link.width, 8);
    assert_int_equal(c.link.latency_ps, 14200);
    assert_int_equal(c.link.rate_mts, 32000);
    assert_int_equal(c.link.mode, 1);
    assert_int_equal(c.link.retimer, 1);
    assert_string_equal(c.link.name, "cxl0");
    assert_int_equal(c.mem_bytes, 17179869184ULL);
    assert_int_equal(c.bw_bps, 25600000000ULL);
    assert_int_equal(c.clk_khz, 2500000);
    assert_true(c.util == 0.75);
    assert_int_equal(c.seed, 42);
    assert_int_equal(c.lanes_sum, 6);
    for (int i = 0; i < 7; i++)
        assert_int_equal(seen[i], 1);
    cfg_free(doc);
}

static void test_bind_defaults_and_seen(void **state)
{
    (void)state;
    cfg_doc *doc = load_ok("t.yaml", "link: {width: 4, retimer: false}\nseed: 0\n");
    struct sys_cfg c;
    memset(&c, 0, sizeof c);
    c.link.latency_ps = 20000; /* defaults pre-filled by the caller survive */
    c.link.retimer = 1;
    c.mem_bytes = 4096;
    c.seed = 99;
    int seen[7] = {9, 9, 9, 9, 9, 9, 9};
    cxl_err e;
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, seen, &e), 0);
    assert_int_equal(c.link.width, 4);
    assert_int_equal(c.link.latency_ps, 20000);
    assert_int_equal(c.link.retimer, 0);
    assert_int_equal(c.mem_bytes, 4096);
    assert_int_equal(c.seed, 0);
    const int want[7] = {1, 0, 0, 0, 0, 1, 0};
    for (int i = 0; i < 7; i++)
        assert_int_equal(seen[i], want[i]);

    /* Binding a section by itself, as callers do for optional sections. */
    struct link_cfg l;
    memset(&l, 0, sizeof l);
    assert_int_equal(cfg_bind(cfg_map_get(cfg_root(doc), "link"), cfg_root(doc), "link", link_fields, &l, NULL,
                              &e), 0);
    assert_int_equal(l.width, 4);
    cfg_free(doc);
}

static void test_extends_deep_merge(void **state)
{
    struct fx *fx = *state;
    const char *base = fx_write(fx, "base.yaml",
                                "link:\n"
                                "  width: 16\n"
                                "  latency: 20ns\n"
                                "  mode: flit68\n"
                                "memory: 1GiB\n"
                                "lanes: [1, 1]\n");
    const char *child = fx_write(fx, "child.yaml",
                                 "extends: base.yaml\n"
                                 "link:\n"
                                 "  latency: 10ns\n"
                                 "seed: 7\n"
                                 "lanes: [4]\n");
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), 0);
    const cfg_node *root = cfg_root(doc);

    /* Parent order, overrides in place, new keys appended; `extends` removed. */
    assert_int_equal(cfg_map_size(root), 4);
    assert_string_equal(cfg_map_key(root, 0), "link");
    assert_string_equal(cfg_map_key(root, 1), "memory");
    assert_string_equal(cfg_map_key(root, 2), "lanes");
    assert_string_equal(cfg_map_key(root, 3), "seed");
    assert_null(cfg_map_get(root, "extends"));

    const cfg_node *link = cfg_map_get(root, "link");
    assert_int_equal(cfg_map_size(link), 3);
    assert_string_equal(cfg_scalar(cfg_map_get(link, "width")), "16");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "latency")), "10ns");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "mode")), "flit68");
    /* Inherited values point at the parent; overrides and merged maps at the child. */
    check_mark(cfg_map_get(link, "width"), base, 2, 10);
    check_mark(cfg_map_get(link, "mode"), base, 4, 9);
    check_mark(cfg_map_get(root, "memory"), base, 5, 9);
    check_mark(cfg_map_get(link, "latency"), child, 3, 12);
    check_mark(link, child, 3, 3);
    check_mark(cfg_map_key_node(root, 0), child, 2, 1);
    check_mark(cfg_map_key_node(root, 1), base, 5, 1);
    check_mark(root, child, 1, 1);

    /* Sequences replace, they do not concatenate. */
    const cfg_node *lanes = cfg_map_get(root, "lanes");
    assert_int_equal(cfg_seq_size(lanes), 1);
    check_mark(lanes, child, 5, 8);

    struct sys_cfg c;
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_bind(root, NULL, NULL, sys_fields, &c, NULL, &e), 0);
    assert_int_equal(c.link.width, 16);
    assert_int_equal(c.link.latency_ps, 10000);
    assert_int_equal(c.mem_bytes, 1073741824ULL);
    assert_int_equal(c.lanes_sum, 4);
    cfg_free(doc);
}

static void test_extends_chain_relative(void **state)
{
    struct fx *fx = *state;
    char base[256], mid[256];
    fx_mkdir(fx, "sub");
    fx_write(fx, "base.yaml", "link: {width: 2, latency: 5ns}\nseed: 1\n");
    fx_write(fx, "sub/mid.yaml", "extends: ../base.yaml\nlink: {width: 4}\nmemory: 1KiB\n");
    const char *top = fx_write(fx, "top.yaml", "extends: sub/mid.yaml\nseed: 3\n");
    fx_path(fx, "sub/../base.yaml", base, sizeof base);
    fx_path(fx, "sub/mid.yaml", mid, sizeof mid);

    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(top, NULL, NULL, &doc, &e), 0);
    const cfg_node *root = cfg_root(doc);
    const cfg_node *link = cfg_map_get(root, "link");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "width")), "4");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "latency")), "5ns");
    assert_string_equal(cfg_scalar(cfg_map_get(root, "seed")), "3");
    /* A parent's parent is found relative to the parent's folder, and marks say so. */
    check_mark(cfg_map_get(link, "latency"), base, 1, 27);
    check_mark(cfg_map_get(link, "width"), mid, 2, 15);
    check_mark(cfg_map_get(root, "memory"), mid, 3, 9);
    check_mark(cfg_map_get(root, "seed"), top, 2, 7);
    cfg_free(doc);
}

/* cfg_each_file: every file read, the loaded one first, then its parents in chain order; presets and
 * text read no file; the first non-zero result stops the walk */
struct seen {
    char path[4][256];
    int n;
};

static int note_file(void *ctx, const char *path)
{
    struct seen *s = ctx;
    if (s->n == 4)
        return 7;
    snprintf(s->path[s->n++], sizeof s->path[0], "%s", path);
    return 0;
}

static int stop_at_first(void *ctx, const char *path)
{
    (void)path;
    ++*(int *)ctx;
    return 9;
}

static void test_each_file_lists_the_chain(void **state)
{
    struct fx *fx = *state;
    char base[256], mid[256], top[256];
    fx_mkdir(fx, "each");
    fx_write(fx, "each/base.yaml", "seed: 1\n");
    fx_write(fx, "each/mid.yaml", "extends: base.yaml\nseed: 2\n");
    snprintf(top, sizeof top, "%s", fx_write(fx, "each/top.yaml", "extends: mid.yaml\nseed: 3\n"));
    fx_path(fx, "each/base.yaml", base, sizeof base);
    fx_path(fx, "each/mid.yaml", mid, sizeof mid);
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(top, NULL, NULL, &doc, &e), 0);
    struct seen s = {0};
    assert_int_equal(cfg_each_file(doc, note_file, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.path[0], top);
    assert_string_equal(s.path[1], mid);
    assert_string_equal(s.path[2], base);
    int calls = 0;
    assert_int_equal(cfg_each_file(doc, stop_at_first, &calls), 9);
    assert_int_equal(calls, 1);
    cfg_free(doc);
    assert_int_equal(cfg_load_text("<text>", "seed: 1\n", NULL, NULL, &doc, &e), 0);
    assert_int_equal(cfg_each_file(doc, stop_at_first, &calls), 0);
    cfg_free(doc);
}

struct presets {
    int calls;
};

static int resolve_preset(void *ctx, const char *name, const char **text, const char **display_name)
{
    struct presets *p = ctx;
    p->calls++;
    static const struct {
        const char *name, *display, *text;
    } table[] = {
        {"asic", "<preset asic>", "link:\n  width: 16\n  latency: 20ns\nmemory: 1GiB\n"},
        {"asic-fast", "<preset asic-fast>", "extends: asic\nlink:\n  latency: 10ns\n"},
        {"loop1", "<preset loop1>", "extends: loop2\n"},
        {"loop2", "<preset loop2>", "seed: 1\nextends: loop1\n"},
        {"broken", "<preset broken>", "link: {width: 4\n"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *text = table[i].text;
            *display_name = table[i].display;
            return 0;
        }
    }
    return -1;
}

static void test_extends_resolver(void **state)
{
    struct fx *fx = *state;
    const char *child = fx_write(fx, "child.yaml", "extends: asic-fast\nseed: 5\n");
    struct presets p = {0};
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(child, resolve_preset, &p, &doc, &e), 0);
    assert_int_equal(p.calls, 2);
    const cfg_node *root = cfg_root(doc);
    const cfg_node *link = cfg_map_get(root, "link");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "width")), "16");
    assert_string_equal(cfg_scalar(cfg_map_get(link, "latency")), "10ns");
    check_mark(cfg_map_get(link, "width"), "<preset asic>", 2, 10);
    check_mark(cfg_map_get(link, "latency"), "<preset asic-fast>", 3, 12);
    check_mark(cfg_map_get(root, "seed"), child, 2, 7);
    cfg_free(doc);

    /* Text that is not from a file may extend a preset too. */
    p.calls = 0;
    assert_int_equal(cfg_load_text("<cmdline>", "extends: asic\nmemory: 2GiB\n", resolve_preset, &p, &doc, &e), 0);
    assert_string_equal(cfg_scalar(cfg_map_get(cfg_root(doc), "memory")), "2GiB");
    check_mark(cfg_map_get(cfg_root(doc), "memory"), "<cmdline>", 2, 9);
    cfg_free(doc);
}

static void test_extends_file_before_resolver(void **state)
{
    struct fx *fx = *state;
    /* A file named like a preset, next to the child, wins over the preset. */
    const char *asic = fx_write(fx, "asic", "link: {width: 1}\n");
    const char *child = fx_write(fx, "child.yaml", "extends: asic\n");
    struct presets p = {0};
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(child, resolve_preset, &p, &doc, &e), 0);
    assert_int_equal(p.calls, 0);
    const cfg_node *w = cfg_map_get(cfg_map_get(cfg_root(doc), "link"), "width");
    assert_string_equal(cfg_scalar(w), "1");
    check_mark(w, asic, 1, 15);
    cfg_free(doc);
}

static void test_extends_type_change(void **state)
{
    (void)state;
    struct presets p = {0};
    cfg_doc *doc = NULL;
    cxl_err e;
    /* A scalar over a map replaces it (binding will then report the wrong type at the child's value). */
    assert_int_equal(cfg_load_text("t.yaml", "extends: asic\nlink: 3\n", resolve_preset, &p, &doc, &e), 0);
    const cfg_node *link = cfg_map_get(cfg_root(doc), "link");
    assert_string_equal(cfg_scalar(link), "3");
    struct sys_cfg c;
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, NULL, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "t.yaml", 2, 7, "'link' must be a mapping", "got the scalar '3'", NULL);
    cfg_free(doc);
}

/* ---- error classes ---- */

static void test_err_syntax(void **state)
{
    struct fx *fx = *state;
    const char *path = fx_write(fx, "bad.yaml", "link:\n  width: 8\n    latency: 20ns\n");
    cfg_doc *doc = (cfg_doc *)1;
    cxl_err e;
    assert_int_equal(cfg_load_file(path, NULL, NULL, &doc, &e), CXL_ECONFIG);
    assert_null(doc);
    check_err(&e, CXL_ECONFIG, path, 3, 12, "YAML syntax error", "mapping values are not allowed in this context",
              NULL);
    /* With libyaml's context and its mark. */
    LOAD_ERR("lanes: [1, 2\nseed: 3\n", 2, 5, "YAML syntax error: did not find expected ',' or ']'",
             "while parsing a flow sequence at line 1, column 8");
    LOAD_ERR("name: 'cxl0\n", 2, 1, "found unexpected end of stream", "while scanning a quoted scalar at line 1");
    LOAD_ERR("link:\n\twidth: 8\n", 2, 1, "YAML syntax error");
    /* Bytes that are not UTF-8: the byte itself, at its own line and column (libyaml names the byte
     * after a bad lead byte: a Latin-1 e-acute before a newline was "byte 0x0A"). */
    LOAD_ERR("seed: 1\nname: \xff\n", 2, 7, "invalid input", "0xFF");
    LOAD_ERR("seed: 1\n# caf\xe9\n", 2, 6, "byte 0xE9", "not UTF-8");
    LOAD_ERR("seed: 1 # \xc3\xa9\xc0\x80\n", 1, 12, "byte 0xC0", "not UTF-8"); /* overlong NUL after an e-acute */
    LOAD_ERR("seed: 1 # \xed\xa0\x80\n", 1, 11, "byte 0xED");                    /* a UTF-16 surrogate */
}

static void test_err_syntax_in_parent(void **state)
{
    struct fx *fx = *state;
    const char *base = fx_write(fx, "base.yaml", "seed: 1\nlink: {width: 4\n");
    const char *child = fx_write(fx, "child.yaml", "extends: base.yaml\n");
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, base, 3, 1, "YAML syntax error", "while parsing a flow mapping at line 2, column 7",
              NULL);
    /* The same in a preset. */
    struct presets p = {0};
    assert_int_equal(cfg_load_text("t.yaml", "extends: broken\n", resolve_preset, &p, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "<preset broken>", 2, 1, "YAML syntax error", NULL);
}

static void test_err_unknown_key_suggest(void **state)
{
    (void)state;
    BIND_ERR("link:\n  width: 8\n  latnecy: 20ns\n", 3, 3, "unknown key 'link.latnecy'", "did you mean 'latency'?",
             "Valid keys in 'link': width, latency, rate, mode, retimer, name");
    BIND_ERR("link: {width: 8}\nbandwith: 1GB/s\n", 2, 1, "unknown key 'bandwith'", "did you mean 'bandwidth'?",
             "Valid keys at the top level: link, memory, bandwidth, clock, utilisation, seed, lanes");
    BIND_ERR("link: {width: 8, Width: 8}\n", 1, 18, "unknown key 'link.Width'", "did you mean 'width'?");
}

/* A retired key is refused at itself with its message; key lists and suggestions leave it out (the valid
 * keys of 'link' above end at 'name'). */
static void test_err_retired_key(void **state)
{
    (void)state;
    BIND_ERR("link:\n  width: 8\n  lanes: 8\n", 3, 3, "key 'link.lanes' is no longer accepted: 'lanes' became "
             "'width': write width: <lanes>");
    BIND_ERR("link: {lane: 8}\n", 1, 8, "unknown key 'link.lane'; valid keys in 'link': width, latency, rate, "
             "mode, retimer, name");
}

static void test_err_unknown_key_no_suggest(void **state)
{
    (void)state;
    BIND_ERR("link: {width: 8}\ncolour: blue\n", 2, 1, "unknown key 'colour'",
             "valid keys at the top level: link, memory, bandwidth, clock, utilisation, seed, lanes");
    cfg_doc *doc = load_ok("t.yaml", "link: {width: 8}\ncolour: blue\n");
    struct sys_cfg c;
    cxl_err e;
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, NULL, &e), CXL_ECONFIG);
    assert_null(strstr(e.msg, "did you mean"));
    cfg_free(doc);
}

static void test_err_duplicate_key(void **state)
{
    (void)state;
    LOAD_ERR("seed: 1\nlink:\n  width: 8\n  latency: 9ns\n  width: 4\n", 5, 3, "duplicate key 'link.width'",
             "first defined at line 3, column 3");
    LOAD_ERR("seed: 1\nmemory: 1GiB\nseed: 2\n", 3, 1, "duplicate key 'seed'", "first defined at line 1");
    LOAD_ERR("link: {width: 1, rate: 8GT/s, width: 2}\n", 1, 31, "duplicate key 'link.width'",
             "first defined at line 1, column 8");
    /* Three occurrences: the second one is reported. */
    LOAD_ERR("a: 1\nb: 1\na: 2\nb: 2\na: 3\n", 3, 1, "duplicate key 'a'", "first defined at line 1");
    /* Inside a sequence element. */
    LOAD_ERR("ports:\n  - {id: 1}\n  - {id: 2, id: 3}\n", 3, 13, "duplicate key 'ports[1].id'", "first defined at line 3, column 6");
}

static void test_err_wrong_type_scalar_for_map(void **state)
{
    (void)state;
    BIND_ERR("link: 8\n", 1, 7, "'link' must be a mapping with keys width, latency, rate, mode, retimer, name",
             "got the scalar '8'");
    BIND_ERR("link: [8]\n", 1, 7, "'link' must be a mapping", "got a sequence");
    /* The whole document given to cfg_bind as a scalar section. */
    cfg_doc *doc = load_ok("t.yaml", "seed: 1\nlink: x\n");
    struct link_cfg l;
    cxl_err e;
    assert_int_equal(cfg_bind(cfg_map_get(cfg_root(doc), "link"), cfg_root(doc), "link", link_fields, &l, NULL, &e),
                     CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "t.yaml", 2, 7, "'link' must be a mapping with keys width", NULL);
    cfg_free(doc);
}

static void test_err_wrong_type_map_for_scalar(void **state)
{
    (void)state;
    BIND_ERR("link:\n  width:\n    lanes: 8\n", 3, 5, "'link.width' must be a non-negative integer, e.g. 16",
             "got a mapping", "lanes per link");
    BIND_ERR("link: {width: 8, latency: [1ns]}\n", 1, 27, "'link.latency' must be a time with a unit",
             "got a sequence");
    BIND_ERR("link: {width: 8, mode: {a: 1}}\n", 1, 24, "'link.mode' must be one of: flit68, flit256, latopt",
             "got a mapping");
    BIND_ERR("link: {width: 8}\nlanes: 4\n", 2, 8, "'lanes' must be a sequence of integers");
    BIND_ERR("link: {width: 8}\nlanes: [1, x]\n", 2, 12, "'lanes[1]'", "non-negative integer");
}

static void test_err_u64_with_unit(void **state)
{
    (void)state;
    BIND_ERR("link: {width: 8}\nseed: 12ns\n", 2, 7, "'seed' = '12ns'", "not a plain integer", "unexpected 'ns'");
    BIND_ERR("link: {width: -2}\n", 1, 15, "'link.width' = '-2'", "negative");
    BIND_ERR("link: {width: }\n", 1, 15, "'link.width' has no value ('' is YAML's null)");
    BIND_ERR("link: {width: ~}\n", 1, 15, "'link.width' has no value ('~' is YAML's null)");
    BIND_ERR("link: {width: null}\n", 1, 15, "'link.width' has no value ('null' is YAML's null)");
    BIND_ERR("link: {width: \"8\"}\n", 1, 15, "'link.width' = \"8\" is quoted", "written without quotes");
}

static void test_err_bad_unit(void **state)
{
    (void)state;
    BIND_ERR("link:\n  width: 8\n  latency: 20nsec\n", 3, 12, "'link.latency' = '20nsec'", "unknown unit 'nsec'",
             "accepted units: ps, ns, us, ms, s", "PHY + retimer latency");
    BIND_ERR("link: {width: 8}\nbandwidth: 25.6GB\n", 2, 12, "'bandwidth' = '25.6GB'",
             "accepted units: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s");
    BIND_ERR("link: {width: 8}\nmemory: 0.3B\n", 2, 9, "'memory' = '0.3B'", "not a whole number of B");
}

static void test_err_needs_unit(void **state)
{
    (void)state;
    BIND_ERR("link: {width: 8, latency: 90}\n", 1, 27, "'link.latency' = '90'", "needs a unit, e.g. 90ns");
    BIND_ERR("link: {width: 8, rate: 32}\n", 1, 24, "'link.rate' = '32'", "needs a unit, e.g. 32GT/s");
}

static void test_err_out_of_range(void **state)
{
    (void)state;
    BIND_ERR("link:\n  width: 32\n", 2, 10, "'link.width' = '32' is out of range", "valid values are 1 to 16",
             "lanes per link");
    BIND_ERR("link:\n  width: 0\n", 2, 10, "valid values are 1 to 16");
    BIND_ERR("link:\n  width: 4\n  latency: 0.5ns\n", 3, 12, "'link.latency' = '0.5ns' (500 ps) is out of range",
             "valid values are 1000 ps to 100000 ps");
    BIND_ERR("link: {width: 4}\nutilisation: 1.5\n", 2, 14, "'utilisation' = '1.5' is out of range",
             "valid values are 0 to 1");
    /* Bounds are inclusive. */
    cfg_doc *doc = load_ok("t.yaml", "link: {width: 16, latency: 100ns}\nutilisation: 0\n");
    struct sys_cfg c;
    cxl_err e;
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, NULL, &e), 0);
    assert_int_equal(c.link.width, 16);
    assert_int_equal(c.link.latency_ps, 100000);
    cfg_free(doc);
}

static void test_err_missing_required(void **state)
{
    (void)state;
    BIND_ERR("seed: 1\nlink:\n  latency: 20ns\n", 3, 3, "missing required key 'link.width'",
             "a non-negative integer", "lanes per link");
    BIND_ERR("seed: 1\nmemory: 1GiB\n", 1, 1, "missing required key 'link'", "a mapping");

    /* Absent section, checked by the caller: reported at the parent. */
    cfg_doc *doc = load_ok("t.yaml", "seed: 1\nmemory: 1GiB\n");
    struct link_cfg l;
    cxl_err e;
    assert_int_equal(cfg_bind(NULL, cfg_root(doc), "link", link_fields, &l, NULL, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "t.yaml", 1, 1, "missing required key 'link.width'", "section 'link' is absent",
              NULL);
    /* Without a parent there is no location. */
    assert_int_equal(cfg_bind(NULL, NULL, "link", link_fields, &l, NULL, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "", 0, 0, "missing required key 'link.width'", NULL);
    cfg_free(doc);
}

static void test_err_enum(void **state)
{
    (void)state;
    BIND_ERR("link: {width: 8, mode: flit512}\n", 1, 24, "'link.mode' = 'flit512' is not a valid choice",
             "choices: flit68, flit256, latopt");
    BIND_ERR("link: {width: 8, mode: flit265}\n", 1, 24, "did you mean 'flit256'?",
             "Choices: flit68, flit256, latopt");
    BIND_ERR("link: {width: 8, mode: turbo}\n", 1, 24, "'turbo' is not a valid choice; choices: flit68");
}

static void test_err_bool_and_string(void **state)
{
    (void)state;
    BIND_ERR("link: {width: 8, retimer: yes}\n", 1, 27, "'link.retimer' = 'yes': expected true or false");
    BIND_ERR("link: {width: 8, retimer: 1}\n", 1, 27, "expected true or false");
    BIND_ERR("link: {width: 8, name: verylongname}\n", 1, 24, "'link.name' = 'verylongname' is too long (12 bytes; at most 7)");
    BIND_ERR("link: {width: 8}\nutilisation: high\n", 2, 14, "'utilisation' = 'high'", "not a number");
}

static void test_err_extends_not_found(void **state)
{
    struct fx *fx = *state;
    char tried[256];
    const char *child = fx_write(fx, "child.yaml", "seed: 1\nextends: nope.yaml\n");
    fx_path(fx, "nope.yaml", tried, sizeof tried);
    cfg_doc *doc = NULL;
    cxl_err e;
    struct presets p = {0};
    assert_int_equal(cfg_load_file(child, resolve_preset, &p, &doc, &e), CXL_ECONFIG);
    assert_null(doc);
    assert_int_equal(p.calls, 1);
    check_err(&e, CXL_ECONFIG, child, 2, 10, "extends: 'nope.yaml' not found", tried,
              "no preset named 'nope.yaml'", NULL);
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, child, 2, 10, "'nope.yaml' not found", tried, "no preset resolver", NULL);
    /* Not a name at all. */
    LOAD_ERR("extends: [a, b]\n", 1, 10, "'extends' must name one parent", "not a sequence");
    LOAD_ERR("extends:\n", 1, 9, "'extends' is empty");
}

/* A FIFO, a character device, a folder and a file over the size bound are refused before any read that
 * could block or run away (a FIFO without a writer used to block forever, /dev/zero to fill memory). */
static void test_err_not_regular(void **state)
{
    struct fx *fx = *state;
    const char *fifo = fx_track(fx, "fifo.yaml", 0), *dir = fx_track(fx, "sub.yaml", 1);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(fifo, NULL, NULL, &doc, &e), CXL_EIO);
    assert_null(doc);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_int_equal(cfg_load_file("/dev/zero", NULL, NULL, &doc, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_int_equal(cfg_load_file(dir, NULL, NULL, &doc, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "Is a directory"));
    const char *child = fx_write(fx, "child.yaml", "seed: 1\nextends: fifo.yaml\n");
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), CXL_EIO);
    check_err(&e, CXL_EIO, child, 2, 10, "extends: cannot read", "not a regular file", NULL);
    /* 16 MiB and one byte of comment */
    const char *big = fx_track(fx, "big.yaml", 0);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    assert_int_equal(fseek(f, (16L << 20), SEEK_SET), 0);
    assert_int_equal(fputc('#', f), '#');
    fclose(f);
    assert_int_equal(cfg_load_file(big, NULL, NULL, &doc, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "larger than 16 MiB"));
}

static void test_err_extends_cycle(void **state)
{
    struct fx *fx = *state;
    const char *a = fx_write(fx, "a.yaml", "extends: b.yaml\nseed: 1\n");
    const char *b = fx_write(fx, "b.yaml", "seed: 2\nextends: a.yaml\n");
    const char *self = fx_write(fx, "self.yaml", "extends: ./self.yaml\n");
    char chain[1024];
    snprintf(chain, sizeof chain, "cyclic extends: %s -> %s -> %s", a, b, a);
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(a, NULL, NULL, &doc, &e), CXL_ECONFIG);
    assert_null(doc);
    check_err(&e, CXL_ECONFIG, b, 2, 10, chain, NULL);
    /* A path spelled differently is still the same file. */
    snprintf(chain, sizeof chain, "cyclic extends: %s -> %s", self, self);
    assert_int_equal(cfg_load_file(self, NULL, NULL, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, self, 1, 10, chain, NULL);
    /* Presets. */
    struct presets p = {0};
    assert_int_equal(cfg_load_text("t.yaml", "extends: loop1\n", resolve_preset, &p, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "<preset loop2>", 2, 10,
              "cyclic extends: t.yaml -> <preset loop1> -> <preset loop2> -> <preset loop1>", NULL);
}

struct chain_presets {
    char text[40][32];
    char name[40][16];
};

/* Presets p0 -> p1 -> ... -> p39. */
static int resolve_chain(void *ctx, const char *name, const char **text, const char **display_name)
{
    struct chain_presets *c = ctx;
    int i;
    char end;
    if (sscanf(name, "p%d%c", &i, &end) != 1 || i < 0 || i >= 40)
        return -1;
    *text = c->text[i];
    *display_name = c->name[i];
    return 0;
}

static void test_err_limits(void **state)
{
    (void)state;
    struct chain_presets *c = calloc(1, sizeof *c);
    assert_non_null(c);
    for (int i = 0; i < 40; i++) {
        snprintf(c->name[i], sizeof c->name[i], "<p%d>", i);
        if (i < 39)
            snprintf(c->text[i], sizeof c->text[i], "extends: p%d\n", i + 1);
        else
            snprintf(c->text[i], sizeof c->text[i], "seed: 39\n");
    }
    cfg_doc *doc = NULL;
    cxl_err e;
    /* 20 parents are fine... */
    assert_int_equal(cfg_load_text("t.yaml", "extends: p20\n", resolve_chain, c, &doc, &e), 0);
    assert_string_equal(cfg_scalar(cfg_map_get(cfg_root(doc), "seed")), "39");
    check_mark(cfg_map_get(cfg_root(doc), "seed"), "<p39>", 1, 7);
    cfg_free(doc);
    /* ...40 are not: reported where the 33rd would be named. */
    assert_int_equal(cfg_load_text("t.yaml", "extends: p0\n", resolve_chain, c, &doc, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "<p31>", 1, 10, "chain deeper than 32 parents", NULL);
    free(c);

    /* Nesting is bounded, so hostile input cannot exhaust the stack. */
    char deep[256];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "a: ");
    for (int i = 0; i < 70; i++)
        deep[n++] = '[';
    for (int i = 0; i < 70; i++)
        deep[n++] = ']';
    deep[n++] = '\n';
    deep[n] = '\0';
    LOAD_ERR(deep, 1, 68, "nesting deeper than 64 levels");
}

static void test_err_anchor_alias(void **state)
{
    (void)state;
    LOAD_ERR("seed: 1\nlink: &l {width: 8}\n", 2, 7, "anchor '&l' is not allowed");
    LOAD_ERR("a: &x 1\n", 1, 4, "anchor '&x' is not allowed");
    /* An alias to an anchor reports the anchor first, which is where the value is written. */
    LOAD_ERR("a: &x 1\nb: *x\n", 1, 4, "anchor '&x'");
    /* An alias without its anchor is rejected at the alias. */
    LOAD_ERR("seed: 1\nb: *x\n", 2, 4, "alias '*x' is not allowed");
    LOAD_ERR("base: &b\n  x: 1\nother:\n  <<: *b\n", 1, 7, "anchor '&b'");
}

static void test_err_document_shape(void **state)
{
    (void)state;
    LOAD_ERR("seed: 1\n---\nseed: 2\n", 2, 1, "a second YAML document starts here");
    LOAD_ERR("- link\n- seed\n", 1, 1, "top level must be a mapping", "not a sequence");
    LOAD_ERR("just text\n", 1, 1, "top level must be a mapping", "not a scalar");
    LOAD_ERR("", 1, 1, "the file is empty");
    LOAD_ERR("# nothing but a comment\n", 1, 1, "the file is empty");
    LOAD_ERR("seed: 1\n[a, b]: 2\n", 2, 1, "a key must be a plain name, not a sequence");
    LOAD_ERR("name: \"a\\0b\"\n", 1, 7, "NUL character");
    /* One document with explicit markers is fine. */
    cfg_doc *doc = load_ok("t.yaml", "---\nseed: 1\n...\n");
    cfg_free(doc);
}

static void test_err_file_unreadable(void **state)
{
    struct fx *fx = *state;
    char path[256];
    fx_path(fx, "missing.yaml", path, sizeof path);
    cfg_doc *doc = (cfg_doc *)1;
    cxl_err e;
    assert_int_equal(cfg_load_file(path, NULL, NULL, &doc, &e), CXL_EIO);
    assert_null(doc);
    check_err(&e, CXL_EIO, path, 0, 0, "cannot read configuration file", "No such file", NULL);
    /* A folder where a parent file should be. */
    fx_mkdir(fx, "dir.yaml");
    const char *child = fx_write(fx, "child.yaml", "extends: dir.yaml\n");
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), CXL_EIO);
    check_err(&e, CXL_EIO, child, 1, 10, "extends: cannot read", NULL);
}

static void test_err_inherited_value_at_parent(void **state)
{
    struct fx *fx = *state;
    const char *base = fx_write(fx, "base.yaml", "link:\n  width: 8\n  latency: 20 nsec\n");
    const char *child = fx_write(fx, "child.yaml", "extends: base.yaml\nlink:\n  width: 4\n");
    cfg_doc *doc = NULL;
    cxl_err e;
    assert_int_equal(cfg_load_file(child, NULL, NULL, &doc, &e), 0);
    struct sys_cfg c;
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_bind(cfg_root(doc), NULL, NULL, sys_fields, &c, NULL, &e), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, base, 3, 12, "'link.latency' = '20 nsec'", "unknown unit 'nsec'", NULL);
    cfg_free(doc);
}

/* cfg_clip: short strings whole; long ones cut at 64 bytes, never inside a UTF-8 character, with the length */
static void test_cfg_clip(void **state)
{
    (void)state;
    char buf[CFG_CLIP_SZ], s[301];
    assert_string_equal(cfg_clip("asic", buf, sizeof buf), "asic");
    memset(s, 'b', 300);
    s[300] = '\0';
    char want[100];
    snprintf(want, sizeof want, "%.64s... (300 bytes)", s);
    assert_string_equal(cfg_clip(s, buf, sizeof buf), want);
    memcpy(s + 63, "\xc3\xa9", 2); /* e acute across the cut: the cut moves before it */
    snprintf(want, sizeof want, "%.63s... (300 bytes)", s);
    assert_string_equal(cfg_clip(s, buf, sizeof buf), want);
}

static void test_cfg_errf_and_format(void **state)
{
    (void)state;
    cfg_doc *doc = load_ok("t.yaml", "seed: 1\nlink: {width: 8}\n");
    const cfg_node *w = cfg_map_get(cfg_map_get(cfg_root(doc), "link"), "width");
    cxl_err e;
    assert_int_equal(cfg_errf(&e, w, "width %s must be even, got %d", "here", 8), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "t.yaml", 2, 15, "width here must be even, got 8", NULL);
    char buf[256];
    cxl_err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "t.yaml:2:15: width here must be even, got 8");
    assert_int_equal(cfg_errf(&e, NULL, "no place"), CXL_ECONFIG);
    check_err(&e, CXL_ECONFIG, "", 0, 0, "no place", NULL);
    assert_int_equal(cfg_errf(NULL, w, "no record"), CXL_ECONFIG);
    cfg_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_parse_time_exact),
        cmocka_unit_test(test_parse_rate),
        cmocka_unit_test(test_parse_freq),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_bw),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test_setup_teardown(test_load_file_good, fx_setup, fx_teardown),
        cmocka_unit_test(test_bind_good),
        cmocka_unit_test(test_err_retired_key),
        cmocka_unit_test(test_bind_defaults_and_seen),
        cmocka_unit_test_setup_teardown(test_extends_deep_merge, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_extends_chain_relative, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_each_file_lists_the_chain, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_extends_resolver, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_extends_file_before_resolver, fx_setup, fx_teardown),
        cmocka_unit_test(test_extends_type_change),
        cmocka_unit_test_setup_teardown(test_err_syntax, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_err_syntax_in_parent, fx_setup, fx_teardown),
        cmocka_unit_test(test_err_unknown_key_suggest),
        cmocka_unit_test(test_err_unknown_key_no_suggest),
        cmocka_unit_test(test_err_duplicate_key),
        cmocka_unit_test(test_err_wrong_type_scalar_for_map),
        cmocka_unit_test(test_err_wrong_type_map_for_scalar),
        cmocka_unit_test(test_err_u64_with_unit),
        cmocka_unit_test(test_err_bad_unit),
        cmocka_unit_test(test_err_needs_unit),
        cmocka_unit_test(test_err_out_of_range),
        cmocka_unit_test(test_err_missing_required),
        cmocka_unit_test(test_err_enum),
        cmocka_unit_test(test_err_bool_and_string),
        cmocka_unit_test_setup_teardown(test_err_extends_not_found, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_err_extends_cycle, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_err_not_regular, fx_setup, fx_teardown),
        cmocka_unit_test(test_err_limits),
        cmocka_unit_test(test_err_anchor_alias),
        cmocka_unit_test(test_err_document_shape),
        cmocka_unit_test_setup_teardown(test_err_file_unreadable, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_err_inherited_value_at_parent, fx_setup, fx_teardown),
        cmocka_unit_test(test_cfg_clip),
        cmocka_unit_test(test_cfg_errf_and_format),
    };
    return cmocka_run_group_tests_name("cfg", tests, NULL, NULL);
}
