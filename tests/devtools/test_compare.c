/* test_compare.c - descriptor traces (host/cxl/trace.c) and the two-backend comparison (host/devtools/compare.c).
 *
 * Traces: a file using every column and every notation, the defaults, and one case per kind of error
 * with its file:line:column; the random generator's variety and its round trip through CSV.
 * Comparison: csim against itself is equal on random streams over the presets asic, asic-switch,
 * pool-2x2 and local-ddr5; csim against analytical differs, with a report whose cycle is checked against
 * csim run alone; limits and bad backends; a backend hands over every completion before the cycle it
 * reports, also where its completion ring wraps (host/cxl/comp_ring.h). When the verilator backend is built, csim against verilator on
 * short random streams over several presets and seeds must be equal (skipped otherwise, and said so). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cxl/backend.h"
#include "cxl/comp_ring.h"
#include "devtools/compare.h"
#include "config/devcfg.h"
#include "tmpdir_fixture.h"
#include "cxl/trace.h"

#ifndef CXLSIM_SOURCE_DIR
#define CXLSIM_SOURCE_DIR "."
#endif

/* Random-stream sizes: small enough for the sanitizer build; the verilated model may be ~100x slower. */
#ifdef CXLSIM_SANITIZED
#define NRANDOM 150
#else
#define NRANDOM 400
#endif
#define NVERILATOR 200

static cxl_params params_of(const char *preset)
{
    devcfg c;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(preset, &c, &e) || devcfg_to_params(&c, &p, &e))
        fail_msg("%s: %s", preset, e.msg);
    return p;
}

static void parse_ok(const char *text, const cxl_params *p, trace *t)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (trace_parse(text, strlen(text), "t.csv", p, t, &e))
        fail_msg("unexpected error: %s:%d:%d: %s", e.file, e.line, e.col, e.msg);
}

/* ---- traces --------------------------------------------------------------------------------------- */

static void test_parse_every_column(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    const char *text = "\xEF\xBB\xBF# comment first\r\n"
                       "\n"
                       "  # an indented comment\n"
                       "id, requester ,bytes,base,footprint,not_before,pattern,stride,seed,gap_cycles,"
                       "max_outstanding,rd_weight,wr_weight\r\n"
                       "7,3,4K,0x1000,1MiB,100,random,,0xff,5,16,2,1\r\n"
                       "\n"
                       "# between rows\n"
                       "0x10,15,128,0,,0,stride,64,,,1,0,1\n"
                       ",0, 2M ,1G,4KiB,0x20,seq,0,0,0,64,1,0\n"
                       "9,1,64,0,0,0,STRIDE,0,0,0,1,1,1"; /* no newline at the end; bad pattern */
    trace t;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(trace_parse(text, strlen(text), "t.csv", &p, &t, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 10);
    assert_int_equal(e.col, 14);
    assert_non_null(strstr(e.msg, "pattern: 'STRIDE' is not a pattern; valid: seq, random, stride"));
    assert_null(t.d); /* a failed parse leaves nothing */

    /* the same without the last row (and a stride that fits its footprint) */
    const char *good = "\xEF\xBB\xBF# comment first\r\n"
                       "\n"
                       "  # an indented comment\n"
                       "id, requester ,bytes,base,footprint,not_before,pattern,stride,seed,gap_cycles,"
                       "max_outstanding,rd_weight,wr_weight\r\n"
                       "7,3,4K,0x1000,1MiB,100,random,,0xff,5,16,2,1\r\n"
                       "\n"
                       "# between rows\n"
                       "0x10,15,128,0,,0,stride,64,,,1,0,1\n"
                       ",0, 2M ,1G,4KiB,0x20,seq,0,0,0,64,1,0\n";
    parse_ok(good, &p, &t);
    assert_int_equal(t.n, 3);
    const cxl_desc *d = t.d;
    assert_int_equal(d[0].id, 7);
    assert_int_equal(d[0].requester, 3);
    assert_int_equal(d[0].bytes, 4096);
    assert_int_equal(d[0].base, 0x1000);
    assert_int_equal(d[0].footprint, 1u << 20);
    assert_int_equal(d[0].not_before, 100);
    assert_int_equal(d[0].pattern, CXL_PAT_RANDOM);
    assert_int_equal(d[0].seed, 255);
    assert_int_equal(d[0].gap_cycles, 5);
    assert_int_equal(d[0].max_outstanding, 16);
    assert_int_equal(d[0].rd_weight, 2);
    assert_int_equal(d[0].wr_weight, 1);
    assert_int_equal(t.line[0], 5);
    assert_int_equal(d[1].id, 16);
    assert_int_equal(d[1].requester, 15);
    assert_int_equal(d[1].pattern, CXL_PAT_STRIDE);
    assert_int_equal(d[1].stride, 64);
    assert_int_equal(d[1].rd_weight, 0);
    assert_int_equal(d[1].wr_weight, 1);
    assert_int_equal(t.line[1], 8);
    assert_int_equal(d[2].id, 3); /* empty id: the descriptor's position */
    assert_int_equal(d[2].bytes, 2u << 20);
    assert_int_equal(d[2].base, 1ull << 30);
    assert_int_equal(d[2].footprint, 4096);
    assert_int_equal(d[2].not_before, 0x20);
    assert_int_equal(d[2].max_outstanding, 64);
    trace_free(&t);
    assert_null(t.d);
}

static void test_parse_defaults_and_mix(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t;
    parse_ok("requester,bytes\n0,64\n1,128\n", &p, &t);
    assert_int_equal(t.n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(t.d[i].id, i + 1);
        assert_int_equal(t.d[i].base, 0);
        assert_int_equal(t.d[i].footprint, 0);
        assert_int_equal(t.d[i].not_before, 0);
        assert_int_equal(t.d[i].pattern, CXL_PAT_SEQ);
        assert_int_equal(t.d[i].max_outstanding, p.tags);
        assert_int_equal(t.d[i].rd_weight, 1);
        assert_int_equal(t.d[i].wr_weight, 0);
    }
    trace_free(&t);
    parse_ok("bytes,mix,requester\n64,2:1,0\n128, 0:255 ,1\n64,,2\n", &p, &t);
    assert_int_equal(t.d[0].rd_weight, 2);
    assert_int_equal(t.d[0].wr_weight, 1);
    assert_int_equal(t.d[1].rd_weight, 0);
    assert_int_equal(t.d[1].wr_weight, 255);
    assert_int_equal(t.d[2].rd_weight, 1);
    assert_int_equal(t.d[2].wr_weight, 0);
    assert_int_equal(t.d[2].requester, 2);
    trace_free(&t);
    /* only wr_weight given: reads keep their default weight 1 */
    parse_ok("requester,bytes,wr_weight\n0,64,1\n", &p, &t);
    assert_int_equal(t.d[0].rd_weight, 1);
    assert_int_equal(t.d[0].wr_weight, 1);
    trace_free(&t);
}

/* Every kind of error: code, line, column, and a phrase of the message. */
static void test_parse_errors(void **state)
{
    (void)state;
    cxl_params p = params_of("asic"); /* 16 requesters, 64 tags */
    static const struct {
        const char *text;
        int code, line, col;
        const char *msg;
    } cases[] = {
        { "", CXL_ECONFIG, 1, 1, "no header line" },
        { "# only a comment\n\n", CXL_ECONFIG, 2, 1, "no header line" },
        { "0,64\n", CXL_ECONFIG, 1, 1, "expected a header line" },
        { "requester,bytes,colour\n", CXL_ECONFIG, 1, 17, "unknown column 'colour'; valid columns: id," },
        { "requester,bytes,bytes\n", CXL_ECONFIG, 1, 17, "column 'bytes' given twice" },
        { "bytes,pattern\n", CXL_ECONFIG, 1, 1, "'requester' is required" },
        { "requester\n", CXL_ECONFIG, 1, 1, "'bytes' is required" },
        { "requester,bytes,rd_weight,mix\n", CXL_ECONFIG, 1, 27, "give either 'mix' or the weights" },
        { "requester,bytes\n", CXL_ECONFIG, 1, 1, "no descriptors after the header" },
        { "requester,bytes\n0,64\n1\n", CXL_ECONFIG, 3, 2, "1 fields, the header names 2 columns" },
        { "requester,bytes\n0,64,7\n", CXL_ECONFIG, 2, 6, "more fields than the header's 2 columns" },
        { "requester,bytes\n0,64\n16,64\n", CXL_ECONFIG, 3, 1, "'16' does not exist: the device has 16 requesters; valid: 0..15" },
        { "requester,bytes\n-1,64\n", CXL_ECONFIG, 2, 1, "is not a number" },
        { "requester,bytes\n0,100\n", CXL_ECONFIG, 2, 3, "not a positive multiple of 64" },
        { "requester,bytes\n0,0\n", CXL_ECONFIG, 2, 3, "not a positive multiple of 64" },
        { "requester,bytes\n0,4X\n", CXL_ECONFIG, 2, 3, "optionally with a K, M, G or T suffix" },
        { "requester,bytes\n0,4Ki\n", CXL_ECONFIG, 2, 3, "is not a number" },
        { "requester,bytes\n0,99999999999999999999\n", CXL_ECONFIG, 2, 3, "too large" },
        { "requester,bytes\n0,16T\n", CXL_ECONFIG, 2, 3, "below 256 GiB" },
        { "requester,bytes,base\n0,64,0x41\n", CXL_ECONFIG, 2, 6, "not 64 B aligned" },
        { "requester,bytes,footprint\n0,64,100\n", CXL_ECONFIG, 2, 6, "multiple of 64 below 256 TiB" },
        { "requester,bytes,pattern\n0,64,Seq\n", CXL_ECONFIG, 2, 6, "valid: seq, random, stride" },
        { "requester,bytes,pattern\n0,128,stride\n", CXL_ECONFIG, 2, 7, "needs a stride" },
        { "requester,bytes,pattern,stride\n0,128,stride,128\n", CXL_ECONFIG, 2, 14, "below the footprint (128" },
        { "requester,bytes,stride\n0,128,65\n", CXL_ECONFIG, 2, 7, "stride: '65' is not a multiple of 64" },
        { "requester,bytes,max_outstanding\n0,64,65\n", CXL_ECONFIG, 2, 6, "outside 1..64" },
        { "requester,bytes,max_outstanding\n0,64,0\n", CXL_ECONFIG, 2, 6, "outside 1..64" },
        { "requester,bytes,rd_weight\n0,64,256\n", CXL_ECONFIG, 2, 6, "at most 255" },
        { "requester,bytes,rd_weight,wr_weight\n0,64,0,0\n", CXL_ECONFIG, 2, 6, "weights 0:0" },
        { "requester,bytes,mix\n0,64,2-1\n", CXL_ECONFIG, 2, 6, "is not R:W" },
        { "requester,bytes,mix\n0,64,0:0\n", CXL_ECONFIG, 2, 6, "weights 0:0" },
        { "requester,bytes,seed\n0,64,0x100000000\n", CXL_ECONFIG, 2, 6, "at most 4294967295" },
        { "requester,bytes,gap_cycles\n0,64,1K\n", CXL_ECONFIG, 2, 6, "valid: decimal or 0x-hex" },
        { "requester,bytes,not_before\n0,64,0x\n", CXL_ECONFIG, 2, 6, "is not a number" },
        { "id,requester,bytes\n5,0,64\n6,0,64\n 5,1,64\n", CXL_ECONFIG, 4, 2, "id 5 already used on line 2" },
        { "requester,bytes,id\n0,64,\n0,64,1\n", CXL_ECONFIG, 3, 6, "id 1 already used on line 2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace t;
        cxl_err e;
        cxl_err_clear(&e);
        int rc = trace_parse(cases[i].text, strlen(cases[i].text), "t.csv", &p, &t, &e);
        if (rc != cases[i].code || e.line != cases[i].line || e.col != cases[i].col || !strstr(e.msg, cases[i].msg) ||
            strcmp(e.file, "t.csv") || t.d)
            fail_msg("case %zu (%s): got %d %s:%d:%d: %s; want %d line %d col %d '%s'", i, cases[i].text, rc, e.file,
                     e.line, e.col, e.msg, cases[i].code, cases[i].line, cases[i].col, cases[i].msg);
    }
    /* a NUL byte, a line too long */
    trace t;
    cxl_err e;
    static const char nul[] = "requester,bytes\n0,6\0004\n";
    assert_int_equal(trace_parse(nul, sizeof nul - 1, "t.csv", &p, &t, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.col, 4);
    size_t n = TRACE_MAX_LINE + 100;
    char *big = malloc(n + 32);
    assert_non_null(big);
    int k = sprintf(big, "requester,bytes\n0,64");
    memset(big + k, ' ', n);
    strcpy(big + k + n, "\n");
    assert_int_equal(trace_parse(big, strlen(big), "t.csv", &p, &t, &e), CXL_ELIMIT);
    assert_int_equal(e.line, 2);
    assert_non_null(strstr(e.msg, "line longer than"));
    free(big);
}

/* Garbage never crashes the reader: random texts from the characters a trace uses (ASan watches). */
static void test_parse_garbage(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    static const char chars[] = "0123456789,,,,\n\n#: xXKMGTiB-abcdefrq\r\t";
    static const char *const heads[] = { "", "requester,bytes\n", "requester,bytes,mix,pattern,id,stride\n" };
    uint64_t s = 12345;
    char text[400];
    int ok = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = (size_t)snprintf(text, sizeof text, "%s", heads[i % 3]);
        size_t len = n + (size_t)(i % 97) * 3;
        for (; n < len && n < sizeof text - 1; n++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            text[n] = chars[(s >> 33) % (sizeof chars - 1)];
        }
        text[n] = 0;
        trace t;
        cxl_err e;
        cxl_err_clear(&e);
        int rc = trace_parse(text, n, "g.csv", &p, &t, &e);
        if (rc == 0) {
            assert_true(t.n > 0);
            ok++;
            trace_free(&t);
        } else {
            assert_true(rc == CXL_ECONFIG || rc == CXL_ELIMIT);
            assert_true(e.line >= 1 && e.col >= 1 && e.msg[0]);
            assert_null(t.d);
        }
    }
    assert_true(ok > 0);
}

/* The requester check follows the device: 4 requesters on a custom device, 16 on asic. */
static void test_parse_follows_device(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    p.requesters = 4;
    const char *text = "requester,bytes\n3,64\n4,64\n";
    trace t;
    cxl_err e;
    assert_int_equal(trace_parse(text, strlen(text), "t.csv", &p, &t, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.msg, "valid: 0..3"));
    p.requesters = 16;
    parse_ok(text, &p, &t);
    trace_free(&t);
}

static void test_load_files(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(trace_load("/nonexistent/trace.csv", &p, &t, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "/nonexistent/trace.csv"));
    const char *path = tmpdir_write("bad.csv", "requester,bytes\n0,64\n\n# x\n0,65\n");
    assert_int_equal(trace_load(path, &p, &t, &e), CXL_ECONFIG);
    assert_string_equal(e.file, path);
    assert_int_equal(e.line, 5);
    assert_int_equal(e.col, 3);
    path = tmpdir_write("good.csv", "requester,bytes\r\n0,64\r\n1,1K\r\n");
    cxl_err_clear(&e);
    assert_int_equal(trace_load(path, &p, &t, &e), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.d[1].bytes, 1024);
    trace_free(&t);
    /* the shipped sample traces */
    const char *shipped[] = { CXLSIM_SOURCE_DIR "/configs/traces/mixed-4req.csv",
                              CXLSIM_SOURCE_DIR "/configs/traces/reads-writes.csv" };
    for (int i = 0; i < 2; i++) {
        if (trace_load(shipped[i], &p, &t, &e))
            fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
        assert_true(t.n >= 4);
        trace_free(&t);
    }
}

static void test_random_stream(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t, u;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(trace_random(&p, 42, 2000, &t, &e), 0);
    assert_int_equal(t.n, 2000);
    assert_null(t.line);
    int pat[3] = { 0 }, reads_only = 0, writes_only = 0, mixed = 0, held = 0, gapped = 0, capped = 0;
    int req_seen[CXL_MAX_REQ] = { 0 };
    uint64_t max_bytes = 0;
    for (size_t i = 0; i < t.n; i++) {
        const cxl_desc *d = &t.d[i];
        assert_int_equal(cxl_desc_check(&p, d, &e), 0);
        assert_int_equal(d->id, i + 1);
        assert_true(d->rd_weight || d->wr_weight);
        pat[d->pattern]++;
        reads_only += d->wr_weight == 0;
        writes_only += d->rd_weight == 0;
        mixed += d->rd_weight && d->wr_weight;
        held += d->not_before > 0;
        gapped += d->gap_cycles > 0;
        capped += d->max_outstanding < p.tags;
        req_seen[d->requester] = 1;
        if (d->bytes > max_bytes)
            max_bytes = d->bytes;
    }
    for (int k = 0; k < 3; k++)
        assert_true(pat[k] > 400);
    assert_true(reads_only > 100 && writes_only > 100 && mixed > 100);
    assert_true(held > 100 && gapped > 100 && capped > 100);
    for (uint32_t r = 0; r < p.requesters; r++)
        assert_true(req_seen[r]);
    assert_true(max_bytes > 4096);
    /* deterministic; another seed, another stream */
    assert_int_equal(trace_random(&p, 42, 2000, &u, &e), 0);
    assert_memory_equal(t.d, u.d, t.n * sizeof *t.d);
    trace_free(&u);
    assert_int_equal(trace_random(&p, 43, 2000, &u, &e), 0);
    assert_true(memcmp(t.d, u.d, t.n * sizeof *t.d) != 0);
    trace_free(&u);
    /* round trip through the CSV writer */
    char *text;
    size_t len;
    assert_int_equal(trace_to_csv(&t, &text, &len, &e), 0);
    assert_int_equal(strlen(text), len);
    parse_ok(text, &p, &u);
    assert_int_equal(u.n, t.n);
    assert_memory_equal(t.d, u.d, t.n * sizeof *t.d);
    free(text);
    trace_free(&u);
    trace_free(&t);
    /* the size limit */
    assert_int_equal(trace_random(&p, 1, (size_t)TRACE_MAX_DESCS + 1, &t, &e), CXL_ELIMIT);
    assert_null(t.d);
}

/* ---- the comparison --------------------------------------------------------------------------------- */

static void run_cmp(const cxl_params *p, const trace *t, const char *a, const char *b, int locate, cmp_result *r)
{
    cmp_opts o;
    cmp_default_opts(&o);
    o.backend_a = a;
    o.backend_b = b;
    o.locate = locate;
    cxl_err e;
    cxl_err_clear(&e);
    if (cmp_run(p, t, &o, r, &e))
        fail_msg("%s vs %s: %s", a, b, e.msg);
}

static void test_csim_equals_itself(void **state)
{
    (void)state;
    const char *presets[] = { "asic", "asic-switch", "pool-2x2", "local-ddr5" };
    for (int i = 0; i < 4; i++) {
        cxl_params p = params_of(presets[i]);
        for (uint64_t seed = 1; seed <= 2; seed++) {
            trace t;
            cxl_err e;
            assert_int_equal(trace_random(&p, seed, NRANDOM, &t, &e), 0);
            cmp_result r;
            run_cmp(&p, &t, "csim", "csim", 1, &r);
            if (!r.equal)
                fail_msg("%s seed %llu: csim differs from csim at cycle %llu: %s %s: %s vs %s", presets[i],
                         (unsigned long long)seed, (unsigned long long)r.diff.cycle, r.diff.unit, r.diff.field,
                         r.diff.a, r.diff.b);
            assert_int_equal(r.descriptors, NRANDOM);
            assert_int_equal(r.submitted, NRANDOM);
            assert_int_equal(r.completions, NRANDOM);
            assert_false(r.truncated);
            assert_int_equal(r.replays, 0);
            assert_true(r.cycles > 1000);
            /* one advance per cycle with completions at most, never one per cycle */
            assert_true(r.advances <= NRANDOM + 1);
            trace_free(&t);
        }
    }
}

/* The ring offers a kernel call its whole free space, one range at the tail, and keeps its completions
 * in order through the move: here 3 buffered from slot 1022 on, across the array's end. */
static void test_comp_ring_make_room(void **state)
{
    (void)state;
    static cxl_comp_ring r;
    memset(&r, 0, sizeof r);
    assert_int_equal(cxl_comp_ring_make_room(&r), CXL_COMP_RING);
    r.head = 1000; /* 1000 polled: empty, the head 24 slots before the end */
    assert_int_equal(cxl_comp_ring_make_room(&r), CXL_COMP_RING);
    assert_int_equal(cxl_comp_ring_tail(&r), 0);
    r.head = CXL_COMP_RING - 2;
    r.count = 0;
    for (uint64_t id = 1; id <= 3; id++) {
        r.c[cxl_comp_ring_tail(&r)].id = id;
        cxl_comp_ring_added(&r, 1);
    }
    assert_int_equal(cxl_comp_ring_make_room(&r), CXL_COMP_RING - 3);
    assert_int_equal(cxl_comp_ring_tail(&r), 3);
    r.c[cxl_comp_ring_tail(&r)].id = 4;
    cxl_comp_ring_added(&r, 1);
    cxl_completion out[8];
    assert_int_equal(cxl_comp_ring_poll(&r, out, 8), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i].id, (uint64_t)i + 1);
}

/* A backend that has reached cycle X has handed over every completion before X, wherever the head of
 * its completion ring stands (host/cxl/comp_ring.h). 1000 completions polled one at a time leave the head 24
 * slots before the ring's end; 48 one-line reads then complete within one advance. The kernel used to
 * be offered only those 24 slots (the free range up to the array's end) and kept the other 24 in the
 * model while the backend reported the cycle after them: compare, csim against itself, differed when two
 * completions of one cycle straddled the ring's end (asic, --random 2000000: after 128,000 = 125 x 1024
 * completions). */
static void test_ring_end_hands_over_all(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    cxl_backend *b;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_open("csim", &p, &b, &e), 0);
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.bytes = CXL_LINE_BYTES;
    d.max_outstanding = 1;
    d.rd_weight = 1;
    cxl_completion c[64];
    uint64_t id = 0;
    for (int i = 0; i < 1000; i++) {
        d.id = ++id;
        d.base = (uint64_t)i * CXL_LINE_BYTES;
        assert_int_equal(cxl_backend_submit(b, &d, 1, &e), 0);
        assert_int_equal(cxl_backend_advance(b, UINT64_MAX, 1, &e), 0);
        assert_int_equal(cxl_backend_poll(b, c, 64), 1);
        assert_int_equal(c[0].id, id);
    }
    cxl_desc batch[48];
    for (int i = 0; i < 48; i++) {
        d.id = ++id;
        d.requester = (uint16_t)(i % 3);
        d.base = (uint64_t)i << 20;
        batch[i] = d;
    }
    assert_int_equal(cxl_backend_submit(b, batch, 48, &e), 0);
    uint64_t until = cxl_backend_now(b) + 1000000;
    assert_int_equal(cxl_backend_advance(b, until, 0, &e), 0);
    assert_int_equal(cxl_backend_now(b), until);
    size_t n = cxl_backend_poll(b, c, 64);
    if (n != 48)
        fail_msg("reached cycle %llu with %zu of the 48 completions handed over", (unsigned long long)until, n);
    for (size_t i = 0; i < n; i++)
        assert_true(c[i].end_cycle < until);
    assert_true(cxl_backend_idle(b));
    /* the same with stop on completion: every completion of the cycle it stops at, in one advance */
    for (int i = 0; i < 48; i++)
        batch[i].id = ++id;
    assert_int_equal(cxl_backend_submit(b, batch, 48, &e), 0);
    size_t total = 0;
    while (total < 48) {
        assert_int_equal(cxl_backend_advance(b, UINT64_MAX, 1, &e), 0);
        uint64_t now = cxl_backend_now(b);
        n = cxl_backend_poll(b, c, 64);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(c[i].end_cycle, now - 1);
        total += n;
        /* nothing left for this cycle: advancing to where it stands hands over nothing more */
        assert_int_equal(cxl_backend_advance(b, now, 1, &e), 0);
        assert_int_equal(cxl_backend_poll(b, c, 64), 0);
    }
    assert_int_equal(total, 48);
    cxl_backend_close(b);
}

/* Any backend pair: analytical against itself is equal too. */
static void test_analytical_equals_itself(void **state)
{
    (void)state;
    cxl_params p = params_of("pool-2x2");
    trace t;
    cxl_err e;
    assert_int_equal(trace_random(&p, 11, NRANDOM, &t, &e), 0);
    cmp_result r;
    run_cmp(&p, &t, "analytical", "analytical", 1, &r);
    assert_true(r.equal);
    assert_int_equal(r.completions, NRANDOM);
    trace_free(&t);
}

/* Ids in any order (not 1..n) are matched through the id index. */
static void test_ids_any_order(void **state)
{
    (void)state;
    cxl_params p = params_of("asic-switch");
    trace t;
    parse_ok("id,requester,bytes,mix,pattern\n900,0,4K,1:0,seq\n7,0,1K,0:1,random\n55,1,64,1:1,seq\n"
             "1,1,2K,2:1,random\n",
             &p, &t);
    cmp_result r;
    run_cmp(&p, &t, "csim", "csim", 1, &r);
    assert_true(r.equal);
    assert_int_equal(r.completions, 4);
    trace_free(&t);
}

/* csim against analytical: the first completion differs; the report is checked against csim alone. */
static void test_csim_vs_analytical(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t;
    parse_ok("requester,bytes,mix\n2,4K,1:0\n", &p, &t);
    cmp_result r;
    run_cmp(&p, &t, "csim", "analytical", 0, &r);
    assert_false(r.equal);
    assert_false(r.located);
    assert_int_equal(r.replays, 0);
    assert_string_equal(r.diff.unit, "requester 2");
    assert_string_equal(r.diff.field, "completion id 1 end_cycle");
    /* csim alone: when does id 1 complete? */
    cxl_backend *b;
    cxl_err e;
    assert_int_equal(cxl_backend_open("csim", &p, &b, &e), 0);
    assert_int_equal(cxl_backend_submit(b, t.d, 1, &e), 0);
    cxl_completion c;
    size_t got = 0;
    while (!got) {
        assert_int_equal(cxl_backend_advance(b, cxl_backend_now(b) + 100000, 1, &e), 0);
        got = cxl_backend_poll(b, &c, 1);
    }
    cxl_backend_close(b);
    char want[64];
    snprintf(want, sizeof want, "%llu", (unsigned long long)c.end_cycle);
    /* whichever finishes first is the event; the other side says it had not by then */
    char late[64];
    snprintf(late, sizeof late, "not completed by cycle %llu", (unsigned long long)c.end_cycle);
    if (strstr(r.diff.a, "not completed")) { /* analytical first: csim (A) ran to its own completion */
        assert_string_equal(r.diff.a, late);
        assert_true(r.diff.cycle < c.end_cycle);
        snprintf(want, sizeof want, "%llu", (unsigned long long)r.diff.cycle);
        assert_string_equal(r.diff.b, want);
    } else { /* csim first: analytical (B) was run to the same cycle */
        assert_string_equal(r.diff.a, want);
        assert_int_equal(r.diff.cycle, c.end_cycle);
        assert_string_equal(r.diff.b, late);
    }
    assert_int_equal(r.completions, 0);

    /* with the statistics search: the first event is csim's first M2S flit, exact to the cycle */
    run_cmp(&p, &t, "csim", "analytical", 1, &r);
    assert_false(r.equal);
    assert_true(r.located);
    assert_true(r.replays >= 1);
    assert_string_equal(r.seen.field, "completion id 1 end_cycle");
    assert_string_equal(r.diff.unit, "link 0");
    assert_string_equal(r.diff.field, "stats link[0].flits[m2s]");
    assert_string_equal(r.diff.a, "1");
    assert_string_equal(r.diff.b, "0");
    assert_true(r.diff.cycle < r.seen.cycle);
    cxl_stats *st = malloc(sizeof *st);
    assert_non_null(st);
    for (int k = 0; k < 2; k++) { /* after cycle diff.cycle - 1: no flit yet; after diff.cycle: one */
        assert_int_equal(cxl_backend_open("csim", &p, &b, &e), 0);
        assert_int_equal(cxl_backend_submit(b, t.d, 1, &e), 0);
        assert_int_equal(cxl_backend_advance(b, r.diff.cycle + (uint64_t)k, 0, &e), 0);
        assert_int_equal(cxl_backend_stats(b, st, &e), 0);
        assert_int_equal(st->link[0].flits[0], (uint64_t)k);
        cxl_backend_close(b);
    }
    free(st);
    trace_free(&t);
}

/* On random streams and every preset kind the difference is found and reported in full. */
static void test_analytical_random(void **state)
{
    (void)state;
    const char *presets[] = { "asic", "pool-2x2", "local-ddr5" };
    for (int i = 0; i < 3; i++) {
        cxl_params p = params_of(presets[i]);
        trace t;
        cxl_err e;
        assert_int_equal(trace_random(&p, 5, 100, &t, &e), 0);
        cmp_result r;
        run_cmp(&p, &t, "csim", "analytical", 0, &r);
        assert_false(r.equal);
        assert_true(r.diff.unit[0] && r.diff.field[0] && r.diff.a[0] && r.diff.b[0]);
        assert_string_not_equal(r.diff.a, r.diff.b);
        assert_non_null(strstr(r.diff.field, "completion id"));
        assert_int_equal(strncmp(r.diff.unit, "requester ", 10), 0);
        assert_true(r.diff.cycle > 0 && r.diff.cycle <= r.cycles);
        /* analytical first: the same event seen from the other side */
        cmp_result s;
        run_cmp(&p, &t, "analytical", "csim", 0, &s);
        assert_false(s.equal);
        assert_string_equal(s.diff.field, r.diff.field);
        trace_free(&t);
    }
}

static void test_deterministic(void **state)
{
    (void)state;
    cxl_params p = params_of("pool-2x2");
    trace t;
    cxl_err e;
    assert_int_equal(trace_random(&p, 9, 120, &t, &e), 0);
    cmp_result a, b;
    run_cmp(&p, &t, "csim", "analytical", 1, &a);
    run_cmp(&p, &t, "csim", "analytical", 1, &b);
    assert_memory_equal(&a, &b, sizeof a);
    trace_free(&t);
}

static void test_max_cycles(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t;
    cxl_err e;
    assert_int_equal(trace_random(&p, 3, 200, &t, &e), 0);
    cmp_opts o;
    cmp_default_opts(&o);
    o.backend_a = o.backend_b = "csim";
    o.max_cycles = 5000;
    cmp_result r;
    assert_int_equal(cmp_run(&p, &t, &o, &r, &e), 0);
    assert_true(r.equal);
    assert_true(r.truncated);
    assert_int_equal(r.cycles, 5000);
    assert_true(r.completions < 200);
    /* a small step changes nothing but the number of calls */
    cmp_result full, stepped;
    o.max_cycles = 0;
    assert_int_equal(cmp_run(&p, &t, &o, &full, &e), 0);
    o.step_cycles = 97;
    assert_int_equal(cmp_run(&p, &t, &o, &stepped, &e), 0);
    assert_true(full.equal && stepped.equal);
    assert_int_equal(full.cycles, stepped.cycles);
    assert_true(stepped.advances > full.advances);
    trace_free(&t);
}

static void test_bad_backends(void **state)
{
    (void)state;
    cxl_params p = params_of("asic");
    trace t;
    parse_ok("requester,bytes\n0,64\n", &p, &t);
    cmp_opts o;
    cmp_default_opts(&o);
    assert_string_equal(o.backend_a, "csim");
    assert_string_equal(o.backend_b, "verilator");
    o.backend_b = "nope";
    cmp_result r;
    cxl_err e;
    assert_int_equal(cmp_run(&p, &t, &o, &r, &e), CXL_EUSAGE);
    assert_non_null(strstr(e.msg, "unknown backend 'nope'"));
    if (!cxl_backend_available("xrt")) {
        o.backend_b = "xrt";
        assert_int_equal(cmp_run(&p, &t, &o, &r, &e), CXL_EBACKEND);
    }
    trace_free(&t);
}

/* The point of it all: the RTL against the C model, when the verilator backend is built. */
static void test_csim_vs_verilator(void **state)
{
    (void)state;
    if (!cxl_backend_available("verilator")) {
        printf("[  SKIPPED ] csim vs verilator: the verilator backend is not built (%s)\n",
               cxl_backend_status("verilator"));
        skip();
    }
    const char *presets[] = { "asic", "asic-switch", "pool-2x2", "local-ddr5" };
    for (int i = 0; i < 4; i++) {
        cxl_params p = params_of(presets[i]);
        for (uint64_t seed = 1; seed <= 2; seed++) {
            trace t;
            cxl_err e;
            assert_int_equal(trace_random(&p, seed, NVERILATOR, &t, &e), 0);
            cmp_result r;
            run_cmp(&p, &t, "csim", "verilator", 1, &r);
            if (!r.equal)
                fail_msg("%s seed %llu: verilator differs from csim at cycle %llu: %s, %s: csim %s, verilator %s",
                         presets[i], (unsigned long long)seed, (unsigned long long)r.diff.cycle, r.diff.unit,
                         r.diff.field, r.diff.a, r.diff.b);
            assert_int_equal(r.completions, NVERILATOR);
            trace_free(&t);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_every_column),
        cmocka_unit_test(test_parse_defaults_and_mix),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_garbage),
        cmocka_unit_test(test_parse_follows_device),
        cmocka_unit_test(test_load_files),
        cmocka_unit_test(test_random_stream),
        cmocka_unit_test(test_csim_equals_itself),
        cmocka_unit_test(test_comp_ring_make_room),
        cmocka_unit_test(test_ring_end_hands_over_all),
        cmocka_unit_test(test_analytical_equals_itself),
        cmocka_unit_test(test_ids_any_order),
        cmocka_unit_test(test_csim_vs_analytical),
        cmocka_unit_test(test_analytical_random),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_max_cycles),
        cmocka_unit_test(test_bad_backends),
        cmocka_unit_test(test_csim_vs_verilator),
    };
    return cmocka_run_group_tests_name("compare", tests, tmpdir_setup, tmpdir_teardown);
}
