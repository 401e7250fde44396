/* test_requester.c - requester ports (hw/hls/requester.h) and the latency histogram (stats.h) against
 * their contracts: address patterns, the read/write mix, tags and max_outstanding, not_before and
 * gap_cycles, completion cycles and descriptor ordering, histogram bins.
 *
 * The requester is driven directly: requester_issue once per cycle, requester_complete when a test
 * decides the response arrives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_fixture.h"
#include "requester.h"
#include "stats.h"

typedef struct rq {
    cxl_requester r;
    cxl_stats st;
} rq;

static rq *rq_new(uint32_t tags)
{
    rq *h = test_calloc(1, sizeof *h);
    assert_non_null(h);
    requester_init(&h->r, tags);
    return h;
}

static cxl_desc desc(uint64_t id, uint64_t base, uint64_t lines, uint8_t pattern)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.base = base;
    d.bytes = lines * CXL_LINE_BYTES;
    d.pattern = pattern;
    d.max_outstanding = 256;
    d.rd_weight = 1;
    return d;
}

/* Issue at `now`; fails unless a request comes out. */
static cxl_msg must_issue(rq *h, uint64_t now)
{
    cxl_msg m;
    memset(&m, 0, sizeof m);
    assert_int_equal(requester_issue(&h->r, 3, 1, now, &m), 1);
    return m;
}

static void must_not_issue(rq *h, uint64_t now)
{
    cxl_msg m;
    assert_int_equal(requester_issue(&h->r, 3, 1, now, &m), 0);
}

/* Issue `n` lines one per cycle from `now`, each completed at once (so tags never run out), and collect
 * their addresses and classes. */
static void issue_n(rq *h, uint64_t now, uint32_t n, uint64_t *addr, uint8_t *cls)
{
    for (uint32_t i = 0; i < n; i++) {
        cxl_msg m = must_issue(h, now + i);
        if (addr)
            addr[i] = m.addr;
        if (cls)
            cls[i] = m.cls;
        cxl_completion c;
        requester_complete(&h->r, m.tag, now + i, &h->st, &c);
    }
}

/* ---- address patterns ---- */

/* SEQ: line i at base + 64 i; the message carries the requester index and host port it was given. */
static void test_seq_addresses(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc d = desc(1, 0x100000, 8, CXL_PAT_SEQ);
    assert_int_equal(requester_submit(&h->r, &d), 0);
    for (uint32_t i = 0; i < 8; i++) {
        cxl_msg m = must_issue(h, i);
        assert_int_equal(m.addr, 0x100000 + 64ull * i);
        assert_int_equal(m.cls, CXL_M2S_REQ);
        assert_int_equal(m.req, 3);
        assert_int_equal(m.host, 1);
    }
    must_not_issue(h, 8); /* all lines issued */
    test_free(h);
}

/* STRIDE: line i at base + (i * stride mod footprint): stride 192, footprint 512 gives offsets
 * 0, 192, 384, 576-512 = 64, 256, 448, 128, 320, 0, 192. */
static void test_stride_wraps_in_footprint(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc d = desc(2, 0x4000, 10, CXL_PAT_STRIDE);
    d.stride = 192;
    d.footprint = 512;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    uint64_t a[10];
    issue_n(h, 0, 10, a, NULL);
    static const uint64_t off[10] = { 0, 192, 384, 64, 256, 448, 128, 320, 0, 192 };
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(a[i], 0x4000 + off[i]);
    test_free(h);
}

/* RANDOM: every address a line of [base, base + footprint); the stream is a function of (seed, id)
 * only: the same pair gives the same addresses on another requester, at other cycles, with other
 * descriptors queued before it; changing either the seed or the id changes the stream. A 16-line
 * footprint drawn 1024 times sees every line (a sanity check of the spread, exact for this stream). */
static void random_stream(uint32_t seed, uint64_t id, uint64_t t0, int pad_before, uint64_t *a, uint32_t n)
{
    rq *h = rq_new(256);
    uint64_t t = t0;
    if (pad_before) {
        cxl_desc p = desc(99, 0, 5, CXL_PAT_SEQ);
        assert_int_equal(requester_submit(&h->r, &p), 0);
    }
    cxl_desc d = desc(id, 0x200000, n, CXL_PAT_RANDOM);
    d.footprint = 16 * 64;
    d.seed = seed;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    if (pad_before) {
        issue_n(h, t, 5, NULL, NULL);
        t += 5;
    }
    issue_n(h, t, n, a, NULL);
    test_free(h);
}

static void test_random_deterministic_within_footprint(void **state)
{
    (void)state;
    enum { N = 1024 };
    uint64_t *a = test_calloc(N, sizeof *a), *b = test_calloc(N, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    random_stream(7, 42, 0, 0, a, N);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < N; i++) {
        assert_true(a[i] >= 0x200000 && a[i] < 0x200000 + 16 * 64);
        assert_int_equal(a[i] % 64, 0);
        seen |= 1u << ((a[i] - 0x200000) / 64);
    }
    assert_int_equal(seen, 0xFFFF);
    random_stream(7, 42, 12345, 1, b, N);
    assert_memory_equal(a, b, N * sizeof *a);
    random_stream(8, 42, 0, 0, b, N);
    assert_memory_not_equal(a, b, N * sizeof *a);
    random_stream(7, 43, 0, 0, b, N);
    assert_memory_not_equal(a, b, N * sizeof *a);
    test_free(a);
    test_free(b);
}

/* ---- read/write mix ---- */

/* Line i is a write when floor((i+1) w / (r+w)) > floor(i w / (r+w)) (requester.h):
 * 2:1 -> R R W repeating; 1:1 -> R W; 1:2 -> R W W; 0:1 -> all W; 3:1 -> R R R W. Weights 0:0 mean
 * reads only. */
static void check_mix(uint8_t r, uint8_t w, const char *want)
{
    rq *h = rq_new(256);
    uint32_t n = (uint32_t)strlen(want);
    cxl_desc d = desc(5, 0, n, CXL_PAT_SEQ);
    d.rd_weight = r;
    d.wr_weight = w;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    uint8_t cls[64];
    issue_n(h, 0, n, NULL, cls);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(cls[i], want[i] == 'W' ? CXL_M2S_RWD : CXL_M2S_REQ);
    test_free(h);
}

static void test_mix(void **state)
{
    (void)state;
    check_mix(2, 1, "RRWRRWRRWRRW");
    check_mix(1, 1, "RWRWRWRW");
    check_mix(1, 2, "RWWRWWRWW");
    check_mix(0, 1, "WWWW");
    check_mix(3, 1, "RRRWRRRW");
    check_mix(0, 0, "RRRR");
    check_mix(1, 0, "RRRR");
}

/* ---- tags, max_outstanding, not_before, gap ---- */

/* Tags come lowest first and a freed tag is the next one handed out; with 4 tags no fifth request
 * issues, whatever max_outstanding says; the descriptor's max_outstanding bounds it when smaller. */
static void test_tags_and_max_outstanding(void **state)
{
    (void)state;
    rq *h = rq_new(4);
    cxl_desc d = desc(1, 0, 10, CXL_PAT_SEQ);
    d.max_outstanding = 8;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    for (uint16_t i = 0; i < 4; i++)
        assert_int_equal(must_issue(h, i).tag, i);
    must_not_issue(h, 4);
    must_not_issue(h, 5);
    cxl_completion c;
    assert_int_equal(requester_complete(&h->r, 2, 6, &h->st, &c), 0);
    assert_int_equal(must_issue(h, 7).tag, 2);
    must_not_issue(h, 8);
    test_free(h);

    h = rq_new(256);
    d.max_outstanding = 3;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    for (uint64_t t = 0; t < 3; t++)
        must_issue(h, t);
    for (uint64_t t = 3; t < 20; t++)
        must_not_issue(h, t);
    assert_int_equal(requester_complete(&h->r, 1, 20, &h->st, &c), 0);
    assert_int_equal(must_issue(h, 21).tag, 1);
    must_not_issue(h, 22);
    test_free(h);
}

/* not_before: nothing issues before it, the first line issues at it; gap_cycles: issues of one
 * descriptor are at least that far apart (nb 100, gap 3: lines at 100, 103, 106). quiet_until: no
 * descriptor -> UINT64_MAX; waiting -> the next issue cycle; anything outstanding -> 0. */
static void test_not_before_and_gap(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    assert_true(requester_quiet_until(&h->r) == UINT64_MAX);
    cxl_desc d = desc(9, 0, 3, CXL_PAT_SEQ);
    d.not_before = 100;
    d.gap_cycles = 3;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    assert_int_equal(requester_quiet_until(&h->r), 100);
    for (uint64_t t = 0; t < 100; t++)
        must_not_issue(h, t);
    cxl_msg m = must_issue(h, 100);
    assert_int_equal(requester_quiet_until(&h->r), 0);
    cxl_completion c;
    requester_complete(&h->r, m.tag, 101, &h->st, &c);
    assert_int_equal(requester_quiet_until(&h->r), 103);
    must_not_issue(h, 101);
    must_not_issue(h, 102);
    must_issue(h, 103);
    must_not_issue(h, 104);
    must_not_issue(h, 105);
    must_issue(h, 106);
    test_free(h);
}

/* A descriptor starts only when every earlier one has issued all its lines (descriptors start in
 * submission order): A (3 lines, max_outstanding 1) holds B back while A waits for a response; B
 * starts in the cycle after A's last line, while A's responses are still outstanding. */
static void test_descriptors_start_in_order(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc a = desc(1, 0x1000, 3, CXL_PAT_SEQ), b = desc(2, 0x8000, 1, CXL_PAT_SEQ);
    a.max_outstanding = 1;
    assert_int_equal(requester_submit(&h->r, &a), 0);
    assert_int_equal(requester_submit(&h->r, &b), 0);
    cxl_completion c;
    cxl_msg m = must_issue(h, 0);
    assert_int_equal(m.addr, 0x1000);
    must_not_issue(h, 1);
    requester_complete(&h->r, m.tag, 2, &h->st, &c);
    m = must_issue(h, 3);
    requester_complete(&h->r, m.tag, 4, &h->st, &c);
    m = must_issue(h, 5);
    assert_int_equal(m.addr, 0x1080);
    m = must_issue(h, 6);
    assert_int_equal(m.addr, 0x8000);
    test_free(h);
}

/* Completion: start = cycle of the first issue, end = cycle of the last response, per descriptor, in
 * the order descriptors finish (not submission order). A (3 lines) issues at 10, 11, 12, B (1 line) at
 * 13. B's response at 50 completes B first (start 13, end 50); A completes with its last response at
 * 62 (start 10). Latencies go to the read histogram: 50-13 = 37, 60-10 = 61-11 = 62-12 = 50. */
static void test_completion_cycles_and_order(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc a = desc(100, 0, 3, CXL_PAT_SEQ), b = desc(200, 0x1000, 1, CXL_PAT_SEQ);
    a.requester = 5;
    b.requester = 5;
    assert_int_equal(requester_submit(&h->r, &a), 0);
    assert_int_equal(requester_submit(&h->r, &b), 0);
    uint16_t t[4];
    for (uint32_t i = 0; i < 4; i++)
        t[i] = must_issue(h, 10 + i).tag;
    cxl_completion c;
    memset(&c, 0, sizeof c);
    assert_int_equal(requester_complete(&h->r, t[3], 50, &h->st, &c), 1);
    assert_int_equal(c.id, 200);
    assert_int_equal(c.start_cycle, 13);
    assert_int_equal(c.end_cycle, 50);
    assert_int_equal(c.lines, 1);
    assert_int_equal(c.requester, 5);
    assert_int_equal(requester_space(&h->r), CXL_DESCQ - 2); /* B's slot frees only after A */
    assert_int_equal(requester_complete(&h->r, t[0], 60, &h->st, &c), 0);
    assert_int_equal(requester_complete(&h->r, t[1], 61, &h->st, &c), 0);
    assert_int_equal(requester_complete(&h->r, t[2], 62, &h->st, &c), 1);
    assert_int_equal(c.id, 100);
    assert_int_equal(c.start_cycle, 10);
    assert_int_equal(c.end_cycle, 62);
    assert_int_equal(c.lines, 3);
    assert_int_equal(requester_space(&h->r), CXL_DESCQ);
    assert_int_equal(h->st.read_lat.count, 4);
    assert_int_equal(h->st.read_lat.linear[37], 1);
    assert_int_equal(h->st.read_lat.linear[50], 3);
    assert_int_equal(h->st.read_lat.sum, 37 + 3 * 50);
    assert_int_equal(h->st.read_lat.max, 50);
    assert_int_equal(h->st.read_bytes, 4 * 64);
    assert_int_equal(h->st.write_lat.count, 0);
    test_free(h);
}

/* Writes go to the write histogram and byte count. */
static void test_write_latency_recorded(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc d = desc(1, 0, 1, CXL_PAT_SEQ);
    d.rd_weight = 0;
    d.wr_weight = 1;
    assert_int_equal(requester_submit(&h->r, &d), 0);
    cxl_msg m = must_issue(h, 7);
    assert_int_equal(m.cls, CXL_M2S_RWD);
    cxl_completion c;
    assert_int_equal(requester_complete(&h->r, m.tag, 307, &h->st, &c), 1);
    assert_int_equal(h->st.write_lat.count, 1);
    assert_int_equal(h->st.write_lat.linear[300], 1);
    assert_int_equal(h->st.write_bytes, 64);
    assert_int_equal(h->st.read_bytes, 0);
    test_free(h);
}

/* The descriptor queue holds CXL_DESCQ descriptors; one more is refused. */
static void test_descq_full(void **state)
{
    (void)state;
    rq *h = rq_new(256);
    cxl_desc d = desc(1, 0, 1, CXL_PAT_SEQ);
    for (uint32_t i = 0; i < CXL_DESCQ; i++)
        assert_int_equal(requester_submit(&h->r, &d), 0);
    assert_int_equal(requester_space(&h->r), 0);
    assert_int_equal(requester_submit(&h->r, &d), -1);
    test_free(h);
}

/* ---- histogram ---- */

/* stats.h / cxl_types.h: bin i of linear holds latency == i for i < CXL_HIST_LINEAR (16384); log bin k
 * holds [16384 << k, 16384 << (k+1)); the last log bin takes everything above. */
static void test_hist_bins(void **state)
{
    (void)state;
    cxl_hist *h = test_calloc(1, sizeof *h);
    assert_non_null(h);
    hist_add(h, 0);
    hist_add(h, 1);
    hist_add(h, 16383);
    hist_add(h, 16384);
    hist_add(h, 32767);
    hist_add(h, 32768);
    hist_add(h, (uint64_t)CXL_HIST_LINEAR << 15);
    hist_add(h, ((uint64_t)CXL_HIST_LINEAR << 15) - 1);
    hist_add(h, UINT64_C(1) << 40);
    assert_int_equal(h->linear[0], 1);
    assert_int_equal(h->linear[1], 1);
    assert_int_equal(h->linear[16383], 1);
    assert_int_equal(h->log[0], 2);
    assert_int_equal(h->log[1], 1);
    assert_int_equal(h->log[14], 1);
    assert_int_equal(h->log[15], 2);
    assert_int_equal(h->count, 9);
    assert_int_equal(h->max, UINT64_C(1) << 40);
    uint64_t sum = 0 + 1 + 16383 + 16384 + 32767 + 32768 + ((uint64_t)CXL_HIST_LINEAR << 15) +
                   ((uint64_t)CXL_HIST_LINEAR << 15) - 1 + (UINT64_C(1) << 40);
    assert_int_equal(h->sum, sum);
    test_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_addresses),
        cmocka_unit_test(test_stride_wraps_in_footprint),
        cmocka_unit_test(test_random_deterministic_within_footprint),
        cmocka_unit_test(test_mix),
        cmocka_unit_test(test_tags_and_max_outstanding),
        cmocka_unit_test(test_not_before_and_gap),
        cmocka_unit_test(test_descriptors_start_in_order),
        cmocka_unit_test(test_completion_cycles_and_order),
        cmocka_unit_test(test_write_latency_recorded),
        cmocka_unit_test(test_descq_full),
        cmocka_unit_test(test_hist_bins),
    };
    return cmocka_run_group_tests_name("hw_requester", tests, NULL, NULL);
}
