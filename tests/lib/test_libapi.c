/* test_libapi.c - libcxlsim's public C API (include/cxlsim/cxlsim.h) through the shared library: the version,
 * each call group on a shipped preset (device, probe, backend, training, collective, CXL transfer), the
 * errors (locations, "not built into this library", NULL arguments) and determinism. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cxlsim/cxlsim.h"

static void version(void **state)
{
    (void)state;
    assert_int_equal(cxlsim_api_version(), CXLSIM_API_VERSION);
    assert_int_equal(CXLSIM_API_VERSION, 20000);
    assert_true(strlen(cxlsim_version()) > 0);
    assert_string_equal(cxlsim_strerror(CXLSIM_ECONFIG), "configuration error");
    assert_string_equal(cxlsim_strerror(42), "unknown error");
}

static void devices(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_device_info info;
    cxlsim_device_info_init(&info);
    const char *sets[] = { "link.width=8" };
    assert_int_equal(cxlsim_device_load("asic", sets, 1, &d, &e), 0);
    assert_int_equal(cxlsim_device_info_get(d, &info, &e), 0);
    assert_string_equal(info.name, "asic");
    assert_false(info.local);
    assert_true(info.requesters > 0 && info.clk_khz > 0);
    cxlsim_device_free(d);
    const char *const *names = cxlsim_device_presets();
    assert_non_null(names[0]);
    /* a string, and an error in it located at its line and column */
    assert_int_equal(cxlsim_device_load_string("extends: asic\nname: mine\n", "mine.yaml", NULL, 0, &d, &e), 0);
    cxlsim_device_info_get(d, &info, &e);
    assert_string_equal(info.name, "mine");
    cxlsim_device_free(d);
    assert_int_equal(cxlsim_device_load_string("extends: asic\nlink:\n  widht: 8\n", "bad.yaml", NULL, 0, &d, &e),
                     CXLSIM_ECONFIG);
    assert_null(d);
    assert_string_equal(e.file, "bad.yaml");
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.message, "width"));
    char buf[2048];
    assert_non_null(strstr(cxlsim_error_format(&e, buf, sizeof buf), "bad.yaml:3:"));
    assert_int_equal(cxlsim_device_load("no-such-device", NULL, 0, &d, &e), CXLSIM_ECONFIG);
    const char *bad_set[] = { "link.width" };
    assert_true(cxlsim_device_load("asic", bad_set, 1, &d, &e) < 0);
    assert_int_equal(cxlsim_device_load(NULL, NULL, 0, &d, &e), CXLSIM_EUSAGE);
}

/* One 64 KiB read on the named backend: the completion's end cycle. */
static uint64_t one_read(const char *backend, cxlsim_stats *s)
{
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_backend *b;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    assert_int_equal(cxlsim_backend_open(d, backend, &b, &e), 0);
    assert_true(cxlsim_backend_idle(b));
    assert_true(cxlsim_backend_space(b, 0) > 0);
    cxlsim_desc desc = { .size = sizeof desc, .id = 7, .bytes = 65536, .read_weight = 1, .pattern = CXLSIM_SEQ };
    assert_int_equal(cxlsim_backend_submit(b, &desc, 1, &e), 0);
    cxlsim_completion c;
    cxlsim_completion_init(&c);
    size_t got = 0;
    for (int i = 0; i < 1000 && !got; i++) {
        assert_int_equal(cxlsim_backend_advance(b, cxlsim_backend_now(b) + 10000, 1, &e), 0);
        got = cxlsim_backend_poll(b, &c, 1);
    }
    assert_int_equal(got, 1);
    assert_int_equal(c.id, 7);
    assert_int_equal(c.lines, 1024);
    assert_int_equal(cxlsim_backend_stats(b, s, &e), 0);
    cxlsim_backend_close(b);
    cxlsim_device_free(d);
    return c.end_cycle;
}

static void backends(void **state)
{
    (void)state;
    cxlsim_stats s1, s2;
    cxlsim_stats_init(&s1);
    cxlsim_stats_init(&s2);
    uint64_t t1 = one_read("csim", &s1), t2 = one_read("csim", &s2);
    assert_int_equal(t1, t2); /* deterministic */
    assert_int_equal(s1.reads, 1024);
    assert_true(s1.read_latency_ns[0] > 0 && s1.read_gbps > 0);
    assert_true(one_read("analytical", &s2) > 0);
    assert_true(cxlsim_backend_available("csim"));
    assert_false(cxlsim_backend_available("nope"));
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_backend *b;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    /* verilator and xrt, loaded from their modules or reported missing: lib_verilator, test_libxrt */
    assert_int_equal(cxlsim_backend_open(d, "nope", &b, &e), CXLSIM_EBACKEND);
    assert_non_null(strstr(e.message, "unknown backend 'nope'"));
    assert_int_equal(cxlsim_backend_open(d, NULL, &b, &e), 0);
    cxlsim_desc bad = { .size = sizeof bad, .id = 1, .bytes = 100, .read_weight = 1 }; /* not a multiple of 64 */
    assert_true(cxlsim_backend_submit(b, &bad, 1, &e) < 0);
    assert_non_null(strstr(e.message, "64"));
    assert_true(strlen(e.message) > 0);
    cxlsim_backend_close(b);
    cxlsim_backend_close(NULL);
    cxlsim_device_free(d);
}

static void probe(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    cxlsim_probe_options o = { .size = sizeof o, .quick = 1, .seed = 1, .mixes = "1:0" };
    cxlsim_probe_result r;
    cxlsim_probe_result_init(&r);
    assert_int_equal(cxlsim_probe(d, &o, &r, &e), 0);
    assert_true(r.idle_read_latency_ns > r.local_idle_read_latency_ns);
    assert_int_equal(r.nmixes, 1);
    assert_true(r.bandwidth_gbps[0] > 0);
    assert_int_equal(r.ncurves, 1);
    assert_int_equal(r.curve_points, 6);
    o.backend = "verilator"; /* where its module is built, lib_verilator runs it */
    if (!cxlsim_backend_available("verilator"))
        assert_int_equal(cxlsim_probe(d, &o, &r, &e), CXLSIM_EBACKEND);
    /* the xrt options (the command's --xclbin, --card): checked, and refused with another backend */
    const char *bad[] = { "xclbim=k.xclbin" }, *xrt[] = { "xclbin=k.xclbin", "card=0" };
    o.backend = NULL;
    o.backend_options = bad;
    o.nbackend_options = 1;
    assert_int_equal(cxlsim_probe(d, &o, &r, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "backend option 'xclbim=k.xclbin': valid: xclbin=FILE"));
    o.backend_options = xrt;
    o.nbackend_options = 2;
    assert_int_equal(cxlsim_probe(d, &o, &r, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "'xclbin=k.xclbin' needs backend xrt (backend is 'csim')"));
    o.backend_options = NULL;
    assert_int_equal(cxlsim_probe(d, &o, &r, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "options is NULL"));
    cxlsim_device_free(d);
}

static void training_and_collectives(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_experiment *x;
    const char *sets[] = { "training.global_batch=64" };
    assert_int_equal(cxlsim_experiment_load("llama2-7b-2x8-h100", sets, 1, &x, &e), 0);
    cxlsim_train_result r;
    cxlsim_train_result_init(&r);
    assert_int_equal(cxlsim_train(x, NULL, &r, &e), 0);
    assert_true(r.iteration_s > 0 && r.tokens_per_s > 0 && r.mfu > 0 && r.mfu < 1);
    double sum = 0;
    for (int i = 0; i < CXLSIM_BK_N; i++)
        sum += r.breakdown_s[i];
    assert_true(fabs(sum - r.iteration_s) < 1e-6 * r.iteration_s);
    assert_string_equal(cxlsim_breakdown_name(CXLSIM_BK_COMPUTE), "compute");
    /* the experiment's cluster: a 1 GiB all-reduce over 8 GPUs of a node, ring/Simple, against the
     * closed form 2(n-1)/n S/B: above it by the chunk rounding and the latencies only */
    cxlsim_cluster *c;
    assert_int_equal(cxlsim_cluster_from_experiment(x, &c, &e), 0);
    uint32_t gpn, nodes;
    assert_int_equal(cxlsim_cluster_shape(c, &gpn, &nodes), 0);
    assert_int_equal(gpn, 8);
    assert_int_equal(nodes, 2);
    cxlsim_collective q = { .size = sizeof q, .op = CXLSIM_ALLREDUCE, .bytes = 1ull << 30, .ranks = 8,
                            .algo = CXLSIM_ALGO_RING, .proto = CXLSIM_PROTO_SIMPLE };
    cxlsim_collective_result cr;
    cxlsim_collective_result_init(&cr);
    assert_int_equal(cxlsim_collective_time(c, &q, &cr, &e), 0);
    assert_true(cr.time_ps > 0 && cr.loops > 0);
    q.bytes = 2ull << 30;
    cxlsim_collective_result cr2;
    cxlsim_collective_result_init(&cr2);
    assert_int_equal(cxlsim_collective_time(c, &q, &cr2, &e), 0);
    assert_true(cr2.time_ps > cr.time_ps * 19 / 10 && cr2.time_ps < cr.time_ps * 21 / 10);
    q.ranks = 16;
    q.algo = CXLSIM_ALGO_AUTO;
    q.proto = CXLSIM_PROTO_AUTO;
    assert_int_equal(cxlsim_collective_time(c, &q, &cr2, &e), 0);
    assert_true(cr2.algo == CXLSIM_ALGO_RING || cr2.algo == CXLSIM_ALGO_TREE);
    q.ranks = 7;
    q.ranks_per_node = 2;
    assert_int_equal(cxlsim_collective_time(c, &q, &cr2, &e), CXLSIM_ECONFIG);
    assert_non_null(strstr(e.message, "does not divide"));
    cxlsim_cluster_free(c);
    cxlsim_experiment_free(x);
    assert_int_equal(cxlsim_cluster_load("dgx-a100", "a100-80gb", &c, &e), 0);
    cxlsim_cluster_free(c);
    assert_int_equal(cxlsim_experiment_load_string("model: llama2-7b\n", "x.yaml", NULL, 0, &x, &e), CXLSIM_ECONFIG);
    assert_int_equal(cxlsim_experiment_load("no-such", NULL, 0, &x, &e), CXLSIM_ECONFIG);
}

/* An experiment from YAML text takes overrides as the command's --set: applied before the checks, and
 * their errors name the key. */
static void experiment_string_overrides(void **state)
{
    (void)state;
    static const char yaml[] = "name: s\nmodel: llama2-7b\ngpu: h100-sxm\n"
                               "cluster: { extends: dgx-h100, nodes: 2 }\ntraining: { global_batch: 64, tp: 2 }\n";
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_experiment *x;
    cxlsim_cluster *c;
    uint32_t nodes = 0;
    const char *four[] = { "cluster.nodes=4", "training.tp=4" };
    assert_int_equal(cxlsim_experiment_load_string(yaml, "s.yaml", four, 2, &x, &e), 0);
    assert_int_equal(cxlsim_cluster_from_experiment(x, &c, &e), 0);
    assert_int_equal(cxlsim_cluster_shape(c, NULL, &nodes), 0);
    assert_int_equal(nodes, 4);
    cxlsim_cluster_free(c);
    cxlsim_experiment_free(x);
    const char *unknown[] = { "training.tpp=4" };
    assert_int_equal(cxlsim_experiment_load_string(yaml, "s.yaml", unknown, 1, &x, &e), CXLSIM_ECONFIG);
    assert_null(x);
    assert_non_null(strstr(e.message, "tpp"));
    assert_non_null(strstr(e.file, "--set training.tpp"));
    const char *range[] = { "training.tp=0" };
    assert_int_equal(cxlsim_experiment_load_string(yaml, "s.yaml", range, 1, &x, &e), CXLSIM_ECONFIG);
    assert_non_null(strstr(e.file, "--set training.tp"));
    const char *malformed[] = { "training.tp" };
    assert_int_equal(cxlsim_experiment_load_string(yaml, "s.yaml", malformed, 1, &x, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "training.tp"));
    assert_int_equal(cxlsim_experiment_load_string(yaml, "s.yaml", NULL, 1, &x, &e), CXLSIM_EUSAGE);
}

static void transfers(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    cxlsim_memory *m;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    assert_int_equal(cxlsim_memory_open(d, NULL, 1, 0, &m, &e), 0);
    int64_t alone, loaded;
    assert_int_equal(cxlsim_memory_transfer(m, 0, 0, 0, 1 << 20, 1, 0, &alone, &e), 0);
    assert_true(alone > 0);
    cxlsim_memory_close(m);
    /* the same read beside a 16 MiB write already running takes longer */
    assert_int_equal(cxlsim_memory_open(d, "csim", 1, 0, &m, &e), 0);
    assert_int_equal(cxlsim_memory_start(m, 0, 0, 0, 16 << 20, 0, 1, 0, 5, &e), 0);
    assert_int_equal(cxlsim_memory_transfer(m, 0, 0, 0, 1 << 20, 1, 0, &loaded, &e), 0);
    assert_true(loaded > alone);
    int64_t t;
    uint32_t tag;
    assert_int_equal(cxlsim_memory_next(m, INT64_MAX, &t, &tag, &e), 1);
    assert_int_equal(tag, 5);
    assert_int_equal(cxlsim_memory_next(m, INT64_MAX, &t, &tag, &e), 0);
    assert_int_equal(cxlsim_memory_start(m, 0, 0, 0, 64, 1, 0, 0, 1, &e), CXLSIM_EUSAGE); /* in the past */
    cxlsim_memory_close(m);
    int rc = cxlsim_memory_open(d, "verilator", 1, 0, &m, &e); /* from its module where built */
    assert_int_equal(rc, cxlsim_backend_available("verilator") ? 0 : CXLSIM_EBACKEND);
    cxlsim_memory_close(rc ? NULL : m);
    cxlsim_device_free(d);
}

/* Sized structs (cxlsim.h): a caller built against an older, shorter struct gets the defaults of the fields
 * it lacks and nothing beyond its size is read; a size below the first released layout is refused. */
static void sized_structs(void **state)
{
    (void)state;
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d;
    assert_int_equal(cxlsim_device_load("asic", NULL, 0, &d, &e), 0);
    /* probe options as API 1.0 had them (no backend_options, nbackend_options), in a buffer of exactly that
     * size: ASan reports any read past it; the xrt options default to none, so the probe runs on csim */
    size_t old = CXLSIM_SIZE_MIN(cxlsim_probe_options, mixes);
    assert_true(old < sizeof(cxlsim_probe_options));
    cxlsim_probe_options full;
    cxlsim_probe_options_init(&full);
    full.size = old;
    full.quick = 1;
    full.seed = 1;
    full.mixes = "1:0";
    cxlsim_probe_options *o = malloc(old);
    assert_non_null(o);
    memcpy(o, &full, old);
    cxlsim_probe_result r, want;
    cxlsim_probe_result_init(&r);
    cxlsim_probe_result_init(&want);
    assert_int_equal(cxlsim_probe(d, o, &r, &e), 0);
    full.size = sizeof full;
    assert_int_equal(cxlsim_probe(d, &full, &want, &e), 0);
    assert_int_equal(r.nmixes, 1);
    assert_true(r.bandwidth_gbps[0] == want.bandwidth_gbps[0] && r.simulated_cycles == want.simulated_cycles);
    /* a field the old size does not reach is not read, whatever the bytes after it hold */
    const char *xrt[] = { "xclbin=k.xclbin" };
    full.backend_options = xrt;
    full.nbackend_options = 1;
    full.size = old;
    assert_int_equal(cxlsim_probe(d, &full, &r, &e), 0);
    /* below the first released layout: refused, naming the struct and its init function */
    size_t tiny = offsetof(cxlsim_probe_options, mixes);
    memcpy(o, &tiny, sizeof tiny); /* o->size, through memcpy: o is shorter than the struct */
    assert_int_equal(cxlsim_probe(d, o, &r, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "cxlsim_probe: cxlsim_probe_options.size is"));
    assert_non_null(strstr(e.message, "cxlsim_probe_options_init()"));
    free(o);
    r.size = 0;
    assert_int_equal(cxlsim_probe(d, NULL, &r, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "cxlsim_probe_result.size is 0"));
    cxlsim_device_info info = { 0 }; /* no init: size 0 */
    assert_int_equal(cxlsim_device_info_get(d, &info, &e), CXLSIM_EUSAGE);
    assert_int_equal(info.channels, 0);
    /* descriptors: element 0's size is the stride, every one must carry it */
    cxlsim_backend *b;
    assert_int_equal(cxlsim_backend_open(d, NULL, &b, &e), 0);
    cxlsim_desc two[2];
    cxlsim_desc_init(&two[0]);
    cxlsim_desc_init(&two[1]);
    two[0].bytes = two[1].bytes = 64;
    two[0].read_weight = two[1].read_weight = 1;
    two[1].size = 8;
    assert_int_equal(cxlsim_backend_submit(b, two, 2, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "descriptor 1 has size 8"));
    two[0].size = 8;
    assert_int_equal(cxlsim_backend_submit(b, two, 2, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "cxlsim_desc.size is 8"));
    cxlsim_backend_close(b);
    /* collectives: a request of size 0 is refused; an err of size 0 is not written */
    cxlsim_cluster *c;
    assert_int_equal(cxlsim_cluster_load("dgx-a100", "a100-80gb", &c, &e), 0);
    cxlsim_collective q = { .op = CXLSIM_ALLREDUCE, .bytes = 1 << 20, .ranks = 8 }; /* no size */
    cxlsim_collective_result cr;
    cxlsim_collective_result_init(&cr);
    assert_int_equal(cxlsim_collective_time(c, &q, &cr, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "cxlsim_collective.size is 0"));
    cxlsim_error small = { .size = 4, .code = 99 };
    assert_int_equal(cxlsim_collective_time(c, &q, &cr, &small), CXLSIM_EUSAGE);
    assert_int_equal(small.code, 99);
    assert_int_equal(small.message[0], 0);
    char buf[256];
    assert_non_null(strstr(cxlsim_error_format(&small, buf, sizeof buf), "cxlsim_error.size is 4"));
    cxlsim_cluster_free(c);
    cxlsim_device_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version),  cmocka_unit_test(devices),
        cmocka_unit_test(backends), cmocka_unit_test(probe),
        cmocka_unit_test(training_and_collectives), cmocka_unit_test(experiment_string_overrides),
        cmocka_unit_test(transfers), cmocka_unit_test(sized_structs),
    };
    return cmocka_run_group_tests_name("libapi", tests, NULL, NULL);
}
