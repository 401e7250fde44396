/* test_ctrace.c - the streaming Chrome trace writer: timestamps printed exactly from picoseconds (floored
 * to whole nanoseconds, three decimals of microseconds), lanes that keep overlapping activities apart,
 * the window, gzip output that decompresses to the plain trace, the command-line parsers, and a full
 * disk reported as CXL_EIO with nothing left behind. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "out/ctrace.h"

static char text[1 << 16];

/* the file's contents (gunzipped when gz) into text; unlinks it */
static size_t slurp(const char *path)
{
    gzFile g = gzopen(path, "rb"); /* reads plain files as they are */
    assert_non_null(g);
    int n = gzread(g, text, sizeof text - 1);
    gzclose(g);
    unlink(path);
    assert_true(n >= 0);
    text[n] = 0;
    return (size_t)n;
}

/* a trace on a temporary file named into path[64], with window [w0, w1] */
static ctrace *open_tmp(char *path, const char *suffix, int64_t w0, int64_t w1)
{
    snprintf(path, 64, "/tmp/ctrace_test_%ld%s", (long)getpid(), suffix);
    cxl_err e;
    ctrace *ct = NULL;
    assert_int_equal(ctrace_open(&ct, path, w0, w1, &e), 0);
    return ct;
}

/* finish ct and read its file back into text */
static void close_and_read(ctrace *ct, const char *path)
{
    cxl_err e;
    assert_int_equal(ctrace_finish(ct, &e), 0);
    slurp(path);
}

#define HAS(needle) assert_non_null(strstr(text, (needle)))

static void exact_timestamps(void **state)
{
    (void)state;
    char path[64];
    ctrace *ct = open_tmp(path, ".json", 0, INT64_MAX);
    ctrace_process(ct, 0, "stage \"0\"");
    ctrace_thread(ct, 0, 0, "compute");
    /* 991.888670 us + 192.195803 us ends at 1184.084473 us: the next slice starts there, no overlap */
    ctrace_slice(ct, 0, 0, "kernel", "a", 991888670, 1184084473, NULL, 0);
    ctrace_slice(ct, 0, 0, "kernel", "b", 1184084473, 1276653433, NULL, 0);
    /* sub-nanosecond ends floor the same way on both sides */
    ctrace_slice(ct, 0, 0, "kernel", "c", 1276653433, 1276653999, NULL, 0);
    ctrace_arg a[3] = { { .key = "bytes", .type = CTRACE_U64, .u = 4096 },
                        { .key = "mix", .type = CTRACE_STR, .s = "8:7" },
                        { .key = "gbps", .type = CTRACE_NUM, .d = 1.5 } };
    ctrace_slice(ct, 0, 0, "cxl", "d", 2000000000000, 2000000000001, a, 3);
    const char *series[2] = { "out", "in" };
    double v[2] = { 1, 0.25 };
    ctrace_counter(ct, 0, "nvlink", series, v, 2, 5000);
    ctrace_flow(ct, 1, 7, 0, 0, "pp", "send", 1000000);
    ctrace_flow(ct, 0, 7, 0, 0, "pp", "send", 1000000);
    close_and_read(ct, path);
    HAS("\"name\":\"a\",\"pid\":0,\"tid\":0,\"cat\":\"kernel\",\"ts\":991.888,\"dur\":192.196");
    HAS("\"name\":\"b\",\"pid\":0,\"tid\":0,\"cat\":\"kernel\",\"ts\":1184.084,\"dur\":92.569");
    HAS("\"ts\":1276.653,\"dur\":0.000");
    HAS("\"ts\":2000000.000,\"dur\":0.000,\"args\":{\"bytes\":4096,\"mix\":\"8:7\",\"gbps\":1.5}");
    HAS("\"ph\":\"C\",\"name\":\"nvlink\",\"pid\":0,\"ts\":0.005,\"args\":{\"out\":1,\"in\":0.25}");
    HAS("\"ph\":\"f\",\"name\":\"send\",\"pid\":0,\"tid\":0,\"cat\":\"pp\",\"id\":7,\"ts\":1.000,\"bp\":\"e\"");
    HAS("stage \\\"0\\\"");
    assert_null(strstr(text, "displayTimeUnit"));
}

static void lanes_keep_overlaps_apart(void **state)
{
    (void)state;
    char path[64];
    ctrace *ct = open_tmp(path, ".json", 0, INT64_MAX);
    ctrace_lanes L = { .pid = 3, .tid0 = 100, .name = "sends" };
    assert_int_equal(ctrace_lane(ct, &L, 0, 10), 100);
    assert_int_equal(ctrace_lane(ct, &L, 5, 20), 101);  /* overlaps the first */
    assert_int_equal(ctrace_lane(ct, &L, 10, 30), 100); /* starts where the first ended */
    assert_int_equal(ctrace_lane(ct, &L, 12, 13), 102); /* both busy */
    assert_int_equal(ctrace_lane(ct, &L, 25, 40), 101);
    assert_int_equal(L.n, 3);
    ctrace_lanes_free(&L);
    close_and_read(ct, path);
    HAS("\"tid\":100,\"args\":{\"name\":\"sends\"}");
    HAS("\"tid\":102,\"args\":{\"name\":\"sends #3\"}");
}

static void window_clips_and_gzip_round_trips(void **state)
{
    (void)state;
    char path[64];
    ctrace *ct = open_tmp(path, ".json.gz", 1000000, 2000000); /* 1 us to 2 us */
    assert_false(ctrace_in_window(ct, 0, 999999));
    assert_true(ctrace_in_window(ct, 0, 1000000));
    ctrace_slice(ct, 0, 0, "k", "before", 0, 500000, NULL, 0);
    ctrace_slice(ct, 0, 0, "k", "across", 500000, 1500000, NULL, 0);
    ctrace_slice(ct, 0, 0, "k", "over", 0, 3000000, NULL, 0);
    ctrace_slice(ct, 0, 0, "k", "after", 2500000, 3000000, NULL, 0);
    /* counters: the value before the window shows at its start */
    const char *series[1] = { "v" };
    double one = 1, two = 2, three = 3, five = 5;
    ctrace_counter(ct, 0, "c", series, &one, 1, 500000);
    ctrace_counter(ct, 0, "d", series, &five, 1, 200000);
    ctrace_counter(ct, 0, "c", series, &two, 1, 700000);
    ctrace_counter(ct, 0, "c", series, &three, 1, 1500000);
    ctrace_counter(ct, 0, "c", series, &one, 1, 2500000);
    /* enough events to pass several buffers through the compression thread */
    for (int i = 0; i < 40000; i++)
        ctrace_slice(ct, 1, 0, "k", "filler", 1000000 + i, 1000000 + i + 1, NULL, 0);
    cxl_err e;
    assert_int_equal(ctrace_finish(ct, &e), 0);
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    assert_int_equal(gzdirect(g), 0); /* really compressed */
    gzclose(g);
    slurp(path);
    assert_null(strstr(text, "before"));
    assert_null(strstr(text, "after"));
    HAS("\"name\":\"across\",\"pid\":0,\"tid\":0,\"cat\":\"k\",\"ts\":1.000,\"dur\":0.500");
    HAS("\"name\":\"over\",\"pid\":0,\"tid\":0,\"cat\":\"k\",\"ts\":1.000,\"dur\":1.000");
    HAS("\"name\":\"c\",\"pid\":0,\"ts\":1.000,\"args\":{\"v\":2}}");
    HAS("\"name\":\"d\",\"pid\":0,\"ts\":1.000,\"args\":{\"v\":5}}");
    HAS("\"name\":\"c\",\"pid\":0,\"ts\":1.500,\"args\":{\"v\":3}}");
    assert_null(strstr(text, "\"ts\":0.500"));
    assert_null(strstr(text, "\"ts\":2.500"));
}

static void command_line_values(void **state)
{
    (void)state;
    cxl_err e;
    int64_t t0, t1;
    assert_int_equal(ctrace_parse_window("2ms:3.5ms", &t0, &t1, &e), 0);
    assert_true(t0 == 2000000000 && t1 == 3500000000);
    assert_int_equal(ctrace_parse_window("1s:", &t0, &t1, &e), 0);
    assert_true(t0 == 1000000000000 && t1 == INT64_MAX);
    assert_int_equal(ctrace_parse_window("3ms:1ms", &t0, &t1, &e), CXL_ECONFIG);
    assert_int_equal(ctrace_parse_window("5", &t0, &t1, &e), CXL_ECONFIG);
    assert_int_equal(ctrace_parse_window("1:2ms", &t0, &t1, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "unit"));
    uint8_t m[8];
    assert_int_equal(ctrace_parse_stages("0,3,5-7", 8, m, &e), 0);
    static const uint8_t want[8] = { 1, 0, 0, 1, 0, 1, 1, 1 };
    assert_memory_equal(m, want, 8);
    assert_int_equal(ctrace_parse_stages("8", 8, m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "0-7"));
    assert_int_equal(ctrace_parse_stages("3-1", 8, m, &e), CXL_ECONFIG);
    assert_int_equal(ctrace_parse_stages("1,,2", 8, m, &e), CXL_ECONFIG);
    assert_int_equal(ctrace_parse_stages("-1", 8, m, &e), CXL_ECONFIG);
    assert_int_equal(ctrace_parse_stages("1;2", 8, m, &e), CXL_ECONFIG);
}

/* /dev/full through a link in a temporary folder (a writer that replaced its destination would replace
 * the link, never the device) */
static void full_disk_is_an_error(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK))
        skip();
    char dir[] = "/tmp/ctrace_full_XXXXXX", link[64];
    assert_non_null(mkdtemp(dir));
    snprintf(link, sizeof link, "%s/full", dir);
    assert_int_equal(symlink("/dev/full", link), 0);
    cxl_err e;
    ctrace *ct;
    assert_int_equal(ctrace_open(&ct, link, 0, INT64_MAX, &e), 0);
    for (int i = 0; i < 30000 && !ctrace_failed(ct, NULL); i++)
        ctrace_slice(ct, 0, 0, "k", "x", i, i + 1, NULL, 0);
    assert_int_equal(ctrace_failed(ct, NULL), CXL_EIO);
    assert_int_equal(ctrace_finish(ct, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, link));
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(link);
    assert_int_equal(rmdir(dir), 0); /* nothing else left in it */
}

/* ctrace_end hands the complete trace on uncommitted: nothing at the destination until the caller's
 * commit; an abort instead leaves nothing at all */
static void end_hands_the_file_on(void **state)
{
    (void)state;
    char dir[] = "/tmp/ctrace_end_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.json", dir);
    for (int commit = 0; commit < 2; commit++) {
        cxl_err e;
        ctrace *ct;
        outfile *f;
        assert_int_equal(ctrace_open(&ct, path, 0, INT64_MAX, &e), 0);
        ctrace_slice(ct, 0, 0, "k", "x", 0, 1000, NULL, 0);
        assert_int_equal(ctrace_end(ct, &f, &e), 0);
        assert_non_null(f);
        assert_int_not_equal(access(path, F_OK), 0);
        if (!commit) {
            outfile_abort(f);
            assert_int_equal(rmdir(dir), 0); /* no temporary file left */
            assert_non_null(mkdtemp(strcpy(dir, "/tmp/ctrace_end_XXXXXX")));
            snprintf(path, sizeof path, "%s/t.json", dir);
            continue;
        }
        assert_int_equal(outfile_commit(f, &e), 0);
        slurp(path);
        HAS("\"name\":\"x\"");
    }
    assert_int_equal(rmdir(dir), 0);
}

/* run-level metadata: the object comes after the events as "otherData", copied, the last one counts,
 * and the file ends as a JSON object should, plain and compressed alike */
static void other_data_after_the_events(void **state)
{
    (void)state;
    const char *suffix[2] = { ".json", ".json.gz" };
    for (int gz = 0; gz < 2; gz++) {
        char path[64], obj[64];
        ctrace *ct = open_tmp(path, suffix[gz], 0, INT64_MAX);
        cxl_err e;
        snprintf(obj, sizeof obj, "{\"old\":1}");
        assert_int_equal(ctrace_other_data(ct, obj, strlen(obj), &e), 0);
        snprintf(obj, sizeof obj, "{\"commit\":\"abc\",\"schema_version\":1}");
        assert_int_equal(ctrace_other_data(ct, obj, strlen(obj), &e), 0);
        memset(obj, 'x', sizeof obj); /* the trace holds its own copy */
        ctrace_slice(ct, 0, 0, "k", "x", 0, 1000, NULL, 0);
        close_and_read(ct, path);
        const char *ev = strstr(text, "\"name\":\"x\""), *other = strstr(text, "\"otherData\":");
        assert_non_null(ev);
        assert_non_null(other);
        assert_true(ev < other);
        assert_string_equal(other, "\"otherData\":{\"commit\":\"abc\",\"schema_version\":1}}\n");
        assert_null(strstr(text, "old"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_timestamps),
        cmocka_unit_test(lanes_keep_overlaps_apart),
        cmocka_unit_test(window_clips_and_gzip_round_trips),
        cmocka_unit_test(command_line_values),
        cmocka_unit_test(full_disk_is_an_error),
        cmocka_unit_test(end_hands_the_file_on),
        cmocka_unit_test(other_data_after_the_events),
    };
    return cmocka_run_group_tests_name("ctrace", tests, NULL, NULL);
}
