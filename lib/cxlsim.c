/* cxlsim.c - libcxlsim: the public C API (include/cxlsim/cxlsim.h) over the host modules.
 *
 * Each handle owns the internal structs it wraps; every call converts between the public structs and the
 * internal ones at this one boundary, so the internal modules can change without changing the ABI. Only
 * the functions marked CXLSIM_API are exported (the library is built with -fvisibility=hidden). */
#include "cxlsim/cxlsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend_module.h"
#include "cxl/backend.h"
#include "config/clustercfg.h"
#include "train/collmodel.h"
#include "cxl/cxlmem.h"
#include "config/devcfg.h"
#include "config/expcfg.h"
#include "config/gpucfg.h"
#include "config/override.h"
#include "devtools/probe.h"
#include "cxl/stats_report.h"
#include "train/train.h"

#ifndef CXLSIM_VERSION
#define CXLSIM_VERSION "unknown"
#endif

struct cxlsim_device {
    devcfg cfg;
    cxl_params params;
};

struct cxlsim_experiment {
    expcfg cfg;
};

struct cxlsim_backend {
    cxl_backend *b;
    cxl_params params;
};

struct cxlsim_cluster {
    collmodel model;
};

struct cxlsim_memory {
    cxlmem *m;
    int64_t now_ps;
};

/* ---- sized structs (cxlsim.h, "Sized structs") ---- */

/* The end of each struct's first released fields (API 1.0's; probe options without the backend options of
 * 1.1): the smallest size the library takes. */
#define ERROR_MIN CXLSIM_SIZE_MIN(cxlsim_error, message)
#define DEVICE_INFO_MIN CXLSIM_SIZE_MIN(cxlsim_device_info, channels)
#define PROBE_OPTIONS_MIN CXLSIM_SIZE_MIN(cxlsim_probe_options, mixes)
#define PROBE_RESULT_MIN CXLSIM_SIZE_MIN(cxlsim_probe_result, simulated_cycles)
#define DESC_MIN CXLSIM_SIZE_MIN(cxlsim_desc, write_weight)
#define COMPLETION_MIN CXLSIM_SIZE_MIN(cxlsim_completion, lines)
#define STATS_MIN CXLSIM_SIZE_MIN(cxlsim_stats, devload)
#define TRAIN_RESULT_MIN CXLSIM_SIZE_MIN(cxlsim_train_result, cxl_backend)
#define COLLECTIVE_MIN CXLSIM_SIZE_MIN(cxlsim_collective, channels)
#define COLLECTIVE_RESULT_MIN CXLSIM_SIZE_MIN(cxlsim_collective_result, loops)

/* The size member of a caller's struct (its first member). */
static size_t size_of(const void *s)
{
    size_t n;
    memcpy(&n, s, sizeof n);
    return n;
}

/* 0 when the caller's struct `s` (type name `what`) holds at least its first released fields (min bytes). */
static int size_check(const void *s, size_t min, const char *what, cxl_err *e)
{
    size_t n = size_of(s);
    if (n >= min)
        return 0;
    return cxl_errf(e, CXL_EUSAGE, "%s.size is %zu, below its first released layout (%zu bytes): set it with "
                    "%s_init()", what, n, min, what);
}

/* The caller's struct src into the library's dst (full bytes): the fields that fit in src's size, the rest 0
 * (their defaults); dst's size becomes full. */
static void struct_in(void *dst, size_t full, const void *src)
{
    size_t n = size_of(src);
    memset(dst, 0, full);
    memcpy(dst, src, n < full ? n : full);
    memcpy(dst, &full, sizeof full);
}

/* The library's src (full bytes) out to the caller's dst: the fields that fit in dst's size, which stays. */
static void struct_out(void *dst, const void *src, size_t full)
{
    size_t n = size_of(dst);
    memcpy(dst, src, n < full ? n : full);
    memcpy(dst, &n, sizeof n);
}

/* ---- errors ---- */

/* Copy an internal error record into the caller's (may be NULL; not written when its size is below the first
 * layout's); returns the code. */
static int give(cxlsim_error *out, const cxl_err *e)
{
    int code = e->code ? e->code : CXL_EINTERNAL;
    if (out && size_of(out) >= ERROR_MIN) {
        cxlsim_error r;
        cxlsim_error_init(&r);
        r.code = code;
        r.line = e->line;
        r.column = e->col;
        snprintf(r.file, sizeof r.file, "%s", e->file);
        snprintf(r.message, sizeof r.message, "%s", e->msg);
        struct_out(out, &r, sizeof r);
    }
    return code;
}

static int usage(cxlsim_error *out, const char *what)
{
    cxl_err e;
    cxl_errf(&e, CXL_EUSAGE, "%s", what);
    return give(out, &e);
}

/* A bad struct size: CXLSIM_EUSAGE naming the call. */
static int bad_size(cxlsim_error *out, const char *call, const cxl_err *e)
{
    cxl_err w;
    cxl_errf(&w, CXL_EUSAGE, "%s: %s", call, e->msg);
    return give(out, &w);
}

static void ok(cxlsim_error *out)
{
    if (out && size_of(out) >= ERROR_MIN) {
        cxlsim_error r;
        cxlsim_error_init(&r);
        struct_out(out, &r, sizeof r);
    }
}

/* The end of every constructor: on rc, free the half-made handle h and report e; else clear err. */
static int made(int rc, void *h, const cxl_err *e, cxlsim_error *err)
{
    if (rc) {
        free(h);
        return give(err, e);
    }
    ok(err);
    return 0;
}

int cxlsim_api_version(void) { return CXLSIM_API_VERSION; }

const char *cxlsim_version(void) { return CXLSIM_VERSION; }

const char *cxlsim_strerror(int code)
{
    switch (code) {
    case CXLSIM_OK: return "ok";
    case CXLSIM_EINTERNAL: return "internal error";
    case CXLSIM_EUSAGE: return "bad argument";
    case CXLSIM_ECONFIG: return "configuration error";
    case CXLSIM_EBACKEND: return "backend not available";
    case CXLSIM_EIO: return "input/output error";
    case CXLSIM_ENOMEM: return "out of memory";
    case CXLSIM_ELIMIT: return "beyond the model's limits";
    case CXLSIM_EDEVICE: return "device failed";
    default: return "unknown error";
    }
}

char *cxlsim_error_format(const cxlsim_error *err, char *buf, size_t size)
{
    if (!buf || !size)
        return buf;
    if (!err) {
        buf[0] = '\0';
        return buf;
    }
    cxl_err e;
    if (size_check(err, ERROR_MIN, "cxlsim_error", &e)) {
        snprintf(buf, size, "%s", e.msg);
        return buf;
    }
    cxlsim_error r;
    struct_in(&r, sizeof r, err);
    e = (cxl_err){ .code = r.code, .line = r.line, .col = r.column };
    snprintf(e.file, sizeof e.file, "%s", r.file);
    snprintf(e.msg, sizeof e.msg, "%s", r.message);
    cxl_err_format(&e, buf, size);
    return buf;
}

/* The overrides "KEY=VALUE" into an override list (freed by the caller). */
static int parse_sets(const char *const *sets, size_t nsets, override_list *ov, cxl_err *e)
{
    if (nsets && !sets)
        return cxl_errf(e, CXL_EUSAGE, "sets is NULL with nsets %zu", nsets);
    for (size_t i = 0; i < nsets; i++) {
        if (!sets[i])
            return cxl_errf(e, CXL_EUSAGE, "sets[%zu] is NULL", i);
        int rc = override_parse(ov, sets[i], e);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- devices ---- */

/* Fill a new handle of `size` bytes with fill(h, src or yaml, overrides) and return it, or NULL with *rc and
 * err set: the loading shared by devices and experiments (yaml NULL: src is a file or preset name). */
typedef int (*fill_fn)(void *h, const char *src, const char *yaml, const char *name, const override_list *ov,
                       cxl_err *e);
static void *load_handle(size_t size, fill_fn fill, const char *src, const char *yaml, const char *name,
                         const char *const *sets, size_t nsets, int *rc, cxlsim_error *err)
{
    cxl_err e;
    cxl_err_clear(&e);
    override_list ov = { 0 };
    void *h = calloc(1, size);
    *rc = h ? parse_sets(sets, nsets, &ov, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!*rc)
        *rc = fill(h, src, yaml, name ? name : "<string>", &ov, &e);
    override_free(&ov);
    *rc = made(*rc, h, &e, err);
    return *rc ? NULL : h;
}

static int device_fill(void *h, const char *src, const char *yaml, const char *name, const override_list *ov,
                       cxl_err *e)
{
    cxlsim_device *d = h;
    int rc = yaml ? devcfg_load_text(name, yaml, ov, &d->cfg, e) : devcfg_load_with(src, ov, &d->cfg, e);
    return rc ? rc : devcfg_to_params(&d->cfg, &d->params, e);
}

int cxlsim_device_load(const char *path_or_preset, const char *const *sets, size_t nsets, cxlsim_device **out,
                       cxlsim_error *err)
{
    if (!path_or_preset || !out)
        return usage(err, "cxlsim_device_load: path_or_preset and out are required");
    int rc;
    *out = load_handle(sizeof **out, device_fill, path_or_preset, NULL, NULL, sets, nsets, &rc, err);
    return rc;
}

int cxlsim_device_load_string(const char *yaml, const char *display_name, const char *const *sets, size_t nsets,
                              cxlsim_device **out, cxlsim_error *err)
{
    if (!yaml || !out)
        return usage(err, "cxlsim_device_load_string: yaml and out are required");
    int rc;
    *out = load_handle(sizeof **out, device_fill, NULL, yaml, display_name, sets, nsets, &rc, err);
    return rc;
}

void cxlsim_device_free(cxlsim_device *dev) { free(dev); }

int cxlsim_device_info_get(const cxlsim_device *dev, cxlsim_device_info *dst, cxlsim_error *err)
{
    if (!dev || !dst)
        return usage(err, "cxlsim_device_info_get: dev and out are required");
    cxl_err e;
    if (size_check(dst, DEVICE_INFO_MIN, "cxlsim_device_info", &e))
        return bad_size(err, "cxlsim_device_info_get", &e);
    cxlsim_device_info info, *out = &info;
    cxlsim_device_info_init(out);
    snprintf(out->name, sizeof out->name, "%s", dev->cfg.name);
    snprintf(out->description, sizeof out->description, "%s", dev->cfg.description);
    snprintf(out->source, sizeof out->source, "%s", dev->cfg.source);
    out->local = dev->cfg.path == DEVCFG_PATH_LOCAL;
    out->clk_khz = dev->params.clk_khz;
    out->hosts = dev->params.hosts;
    out->devices = dev->params.devices;
    out->requesters = dev->params.requesters;
    out->tags = dev->params.tags;
    out->channels = (uint32_t)dev->cfg.dram.channels;
    struct_out(dst, out, sizeof *out);
    ok(err);
    return 0;
}

const char *const *cxlsim_device_presets(void) { return devcfg_preset_names(); }

/* ---- backends ---- */

int cxlsim_backend_available(const char *name) { return name && cxl_backend_available(name); }

/* CXLSIM_EBACKEND for a backend the library does not have: for one of the project's, the module it looked
 * for and why that did not load; else the names. */
static int backend_check(const char *name, cxl_err *e)
{
    if (cxl_backend_available(name))
        return 0;
    for (const char *const *n = cxl_backend_names(); *n; n++)
        if (!strcmp(*n, name)) {
            char why[768];
            cxl_backend_module_why(name, why, sizeof why);
            return cxl_errf(e, CXL_EBACKEND, "backend '%s' is not built into this library (libcxlsim has csim and "
                            "analytical, and loads xrt and verilator from their modules, cxlsim/backend_NAME.so "
                            "beside the library, built where the build found XRT and Verilator): %s", name, why);
        }
    return cxl_errf(e, CXL_EBACKEND, "unknown backend '%s'; valid: csim, analytical, verilator, xrt", name);
}

int cxlsim_backend_open(const cxlsim_device *dev, const char *name, cxlsim_backend **out, cxlsim_error *err)
{
    return cxlsim_backend_open_opts(dev, name, NULL, 0, out, err);
}

/* Backend options "KEY=VALUE" into o; the strings stay the caller's. */
static int backend_options(const char *const *opt, size_t n, cxl_backend_opts *o, cxl_err *e)
{
    memset(o, 0, sizeof *o);
    if (n && !opt)
        return cxl_errf(e, CXL_EUSAGE, "options is NULL with noptions %zu", n);
    for (size_t i = 0; i < n; i++) {
        const char *v = opt[i] ? strchr(opt[i], '=') : NULL;
        size_t k = v ? (size_t)(v - opt[i]) : 0;
        char *end = NULL;
        if (v && k == 6 && !strncmp(opt[i], "xclbin", k))
            o->xclbin = v + 1;
        else if (v && k == 4 && !strncmp(opt[i], "card", k))
            o->xrt_card = v + 1;
        else if (v && k == 10 && !strncmp(opt[i], "timeout_ms", k) &&
                 (o->xrt_timeout_ms = (unsigned)strtoul(v + 1, &end, 10)) > 0 && !*end && v[1] != '-')
            continue;
        else
            return cxl_errf(e, CXL_EUSAGE, "backend option '%s': valid: xclbin=FILE, card=N|BDF, timeout_ms=N (N >= 1)",
                            opt[i] ? opt[i] : "(null)");
    }
    return 0;
}

int cxlsim_backend_open_opts(const cxlsim_device *dev, const char *name, const char *const *options, size_t noptions,
                             cxlsim_backend **out, cxlsim_error *err)
{
    if (!dev || !out)
        return usage(err, "cxlsim_backend_open: dev and out are required");
    *out = NULL;
    name = name ? name : "csim";
    cxl_err e;
    cxl_err_clear(&e);
    cxlsim_backend *b = calloc(1, sizeof *b);
    if (!b)
        return give(err, &(cxl_err){ .code = CXL_ENOMEM, .msg = "out of memory" });
    b->params = dev->params;
    cxl_backend_opts o;
    int rc = backend_options(options, noptions, &o, &e);
    if (!rc)
        rc = backend_check(name, &e);
    if (!rc)
        rc = cxl_backend_open_opts(name, &b->params, &o, &b->b, &e);
    rc = made(rc, b, &e, err);
    *out = rc ? NULL : b;
    return rc;
}

void cxlsim_backend_close(cxlsim_backend *b)
{
    if (b)
        cxl_backend_close(b->b);
    free(b);
}

int cxlsim_backend_submit(cxlsim_backend *b, const cxlsim_desc *d, size_t n, cxlsim_error *err)
{
    if (!b || (n && !d))
        return usage(err, "cxlsim_backend_submit: b and d are required");
    cxl_err e;
    cxl_err_clear(&e);
    if (n && size_check(d, DESC_MIN, "cxlsim_desc", &e))
        return bad_size(err, "cxlsim_backend_submit", &e);
    size_t stride = n ? size_of(d) : 0; /* element 0's size: the caller's sizeof */
    cxl_desc *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return give(err, &(cxl_err){ .code = CXL_ENOMEM, .msg = "out of memory" });
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const void *caller = (const char *)d + i * stride;
        cxlsim_desc one, *s = &one;
        if (size_of(caller) != stride) {
            rc = cxl_errf(&e, CXL_EUSAGE, "cxlsim_backend_submit: descriptor %zu has size %zu, descriptor 0 %zu: "
                          "set every one with cxlsim_desc_init()", i, size_of(caller), stride);
            break;
        }
        struct_in(&one, sizeof one, caller);
        if (s->requester > UINT16_MAX || s->max_outstanding > UINT16_MAX || s->pattern > 255 ||
            s->read_weight > 255 || s->write_weight > 255)
            rc = cxl_errf(&e, CXL_EUSAGE, "descriptor %zu: requester, max_outstanding (<= 65535), pattern, "
                          "read_weight or write_weight (<= 255) out of range", i);
        v[i] = (cxl_desc){ .id = s->id, .base = s->base, .bytes = s->bytes, .footprint = s->footprint,
                           .not_before = s->not_before, .stride = s->stride, .seed = s->seed,
                           .gap_cycles = s->gap_cycles, .requester = (uint16_t)s->requester,
                           .max_outstanding = (uint16_t)(s->max_outstanding ? s->max_outstanding : b->params.tags),
                           .pattern = (uint8_t)s->pattern, .rd_weight = (uint8_t)s->read_weight,
                           .wr_weight = (uint8_t)s->write_weight };
    }
    if (!rc)
        rc = cxl_backend_submit(b->b, v, n, &e);
    free(v);
    if (rc)
        return give(err, &e);
    ok(err);
    return 0;
}

uint32_t cxlsim_backend_space(cxlsim_backend *b, uint32_t requester)
{
    return b && requester < b->params.requesters ? cxl_backend_space(b->b, requester) : 0;
}

int cxlsim_backend_advance(cxlsim_backend *b, uint64_t until, int stop_on_completion, cxlsim_error *err)
{
    if (!b)
        return usage(err, "cxlsim_backend_advance: b is required");
    cxl_err e;
    cxl_err_clear(&e);
    if (cxl_backend_advance(b->b, until, stop_on_completion, &e))
        return give(err, &e);
    ok(err);
    return 0;
}

uint64_t cxlsim_backend_now(cxlsim_backend *b) { return b ? cxl_backend_now(b->b) : 0; }

size_t cxlsim_backend_poll(cxlsim_backend *b, cxlsim_completion *out, size_t max)
{
    if (!b || !out || !max || size_of(out) < COMPLETION_MIN)
        return 0;
    size_t stride = size_of(out); /* element 0's size: the caller's sizeof */
    cxl_completion c[64];
    size_t got = 0;
    while (got < max) {
        size_t want = max - got < 64 ? max - got : 64;
        size_t k = cxl_backend_poll(b->b, c, want);
        for (size_t i = 0; i < k; i++) {
            cxlsim_completion one = { sizeof one, c[i].id, c[i].start_cycle, c[i].end_cycle, c[i].requester,
                                      c[i].lines };
            void *dst = (char *)out + (got + i) * stride;
            memcpy(dst, &stride, sizeof stride);
            struct_out(dst, &one, sizeof one);
        }
        got += k;
        if (k < want)
            break;
    }
    return got;
}

int cxlsim_backend_idle(cxlsim_backend *b) { return b ? cxl_backend_idle(b->b) : 1; }

int cxlsim_backend_stats(cxlsim_backend *b, cxlsim_stats *dst, cxlsim_error *err)
{
    if (!b || !dst)
        return usage(err, "cxlsim_backend_stats: b and out are required");
    cxl_err e;
    cxl_err_clear(&e);
    if (size_check(dst, STATS_MIN, "cxlsim_stats", &e))
        return bad_size(err, "cxlsim_backend_stats", &e);
    cxlsim_stats st, *out = &st;
    /* from an all-zero snapshot (the backend's start) to now; the histograms are large: heap */
    cxl_stats *s = calloc(2, sizeof *s);
    cxl_hist *scratch = calloc(1, sizeof *scratch);
    int rc = s && scratch ? cxl_backend_stats(b->b, &s[0], &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc) {
        window_stats w;
        window_stats_compute(&w, &s[0], &s[1], &b->params, scratch);
        cxlsim_stats_init(out);
        out->cycles = s[0].cycles;
        out->seconds = w.seconds;
        out->read_gbps = w.read_gbps;
        out->write_gbps = w.write_gbps;
        memcpy(out->read_latency_ns, w.read_lat_ns, sizeof out->read_latency_ns);
        memcpy(out->write_latency_ns, w.write_lat_ns, sizeof out->write_latency_ns);
        out->reads = w.reads;
        out->writes = w.writes;
        memcpy(out->link_utilisation, w.link_utilisation, sizeof out->link_utilisation);
        out->row_hit_rate = w.row_hit_rate;
        out->row_conflicts = w.row_conflicts;
        out->refreshes = w.refreshes;
        memcpy(out->devload, w.devload, sizeof out->devload);
        struct_out(dst, out, sizeof *out);
    }
    free(s);
    free(scratch);
    if (rc)
        return give(err, &e);
    ok(err);
    return 0;
}

/* ---- probe ---- */

int cxlsim_probe(const cxlsim_device *dev, const cxlsim_probe_options *opts, cxlsim_probe_result *dst,
                 cxlsim_error *err)
{
    if (!dev || !dst)
        return usage(err, "cxlsim_probe: dev and out are required");
    cxl_err e;
    cxl_err_clear(&e);
    if ((opts && size_check(opts, PROBE_OPTIONS_MIN, "cxlsim_probe_options", &e)) ||
        size_check(dst, PROBE_RESULT_MIN, "cxlsim_probe_result", &e))
        return bad_size(err, "cxlsim_probe", &e);
    cxlsim_probe_options in, *o = &in; /* the caller's fields; those beyond its size: defaults */
    cxlsim_probe_options_init(o);
    if (opts)
        struct_in(o, sizeof *o, opts);
    probe_opts po;
    probe_default_opts(&po);
    if (o->quick) { /* the command's --quick */
        po.idle_samples = 200;
        po.warmup_us = 5;
        po.window_us = 10;
        po.curve_points = 6;
    }
    po.seed = o->seed;
    po.backend = o->backend ? o->backend : "csim";
    if (o->mixes && probe_parse_mixes(&po, o->mixes))
        return usage(err, "cxlsim_probe: mixes is not a list of R:W (e.g. 100:0,2:1; each 0-255, not both 0; at most "
                          "16)");
    int rc = backend_options(o->backend_options, o->nbackend_options, &po.bo, &e);
    if (!rc && o->nbackend_options && strcmp(po.backend, "xrt")) /* as the command: --xclbin needs --backend xrt */
        rc = cxl_errf(&e, CXL_EUSAGE, "cxlsim_probe: backend option '%s' needs backend xrt (backend is '%s')",
                      o->backend_options[0], po.backend);
    if (rc || backend_check(po.backend, &e))
        return give(err, &e);
    devcfg ref;
    const char *refname = o->reference ? o->reference : "local-ddr5";
    if (devcfg_load(refname, &ref, &e))
        return give(err, &e);
    if (ref.path != DEVCFG_PATH_LOCAL)
        return usage(err, "cxlsim_probe: reference is not a local-DDR path (needs 'path: local')");
    probe_result *r = malloc(sizeof *r);
    cxlsim_probe_result *out = malloc(sizeof *out);
    rc = r && out ? probe_run(&dev->cfg, &ref, &po, r, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc) {
        cxlsim_probe_result_init(out);
        out->idle_read_latency_ns = r->idle_read_latency_ns;
        out->local_idle_read_latency_ns = r->local_idle_read_latency_ns;
        out->single_stream_gbps = r->single_stream_gbps;
        out->nmixes = r->nbw;
        for (uint32_t i = 0; i < r->nbw; i++) {
            out->mix_read[i] = r->bw_mix[i][0];
            out->mix_write[i] = r->bw_mix[i][1];
            out->bandwidth_gbps[i] = r->bw_gbps[i];
        }
        out->ncurves = r->ncurves;
        out->curve_points = r->ncurves ? r->curves[0].npoints : 0;
        for (uint32_t i = 0; i < r->ncurves; i++) {
            const probe_curve *c = &r->curves[i];
            out->curve_read[i] = c->rd;
            out->curve_write[i] = c->wr;
            out->curve_saturation_gbps[i] = c->saturation_gbps;
            for (uint32_t k = 0; k < c->npoints; k++)
                out->curve[i][k] = (cxlsim_probe_point){ c->pt[k].offered_gbps, c->pt[k].achieved_gbps,
                                                         c->pt[k].mean_latency_ns, c->pt[k].p99_latency_ns };
        }
        out->simulated_cycles = r->simulated_cycles;
        struct_out(dst, out, sizeof *out);
    }
    free(r);
    free(out);
    if (rc)
        return give(err, &e);
    ok(err);
    return 0;
}

/* ---- training ---- */

static int experiment_fill(void *h, const char *src, const char *yaml, const char *name, const override_list *ov,
                           cxl_err *e)
{
    cxlsim_experiment *x = h;
    return yaml ? expcfg_load_text(name, yaml, ov, &x->cfg, e) : expcfg_load_with(src, ov, 0, &x->cfg, e);
}

int cxlsim_experiment_load(const char *path_or_preset, const char *const *sets, size_t nsets,
                           cxlsim_experiment **out, cxlsim_error *err)
{
    if (!path_or_preset || !out)
        return usage(err, "cxlsim_experiment_load: path_or_preset and out are required");
    int rc;
    *out = load_handle(sizeof **out, experiment_fill, path_or_preset, NULL, NULL, sets, nsets, &rc, err);
    return rc;
}

int cxlsim_experiment_load_string(const char *yaml, const char *display_name, const char *const *sets,
                                  size_t nsets, cxlsim_experiment **out, cxlsim_error *err)
{
    if (!yaml || !out)
        return usage(err, "cxlsim_experiment_load_string: yaml and out are required");
    int rc;
    *out = load_handle(sizeof **out, experiment_fill, NULL, yaml, display_name, sets, nsets, &rc, err);
    return rc;
}

void cxlsim_experiment_free(cxlsim_experiment *x) { free(x); }

const char *cxlsim_breakdown_name(int bk) { return bk >= 0 && bk < TRAIN_BK_N ? train_bk_names[bk] : "?"; }

int cxlsim_train(const cxlsim_experiment *x, const char *backend, cxlsim_train_result *dst, cxlsim_error *err)
{
    if (!x || !dst)
        return usage(err, "cxlsim_train: x and out are required");
    cxl_err e;
    cxl_err_clear(&e);
    if (size_check(dst, TRAIN_RESULT_MIN, "cxlsim_train_result", &e))
        return bad_size(err, "cxlsim_train", &e);
    cxlsim_train_result res, *out = &res;
    if (x->cfg.cxl.memory != CXLCFG_NONE && backend_check(backend ? backend : x->cfg.cxl.backend, &e))
        return give(err, &e);
    train_opts o = { 0 };
    o.backend = backend;
    train_result r;
    memset(&r, 0, sizeof r);
    if (train_run(&x->cfg, &o, &r, &e)) {
        train_result_free(&r);
        return give(err, &e);
    }
    cxlsim_train_result_init(out);
    out->iteration_s = (double)r.iteration_ps * 1e-12;
    for (int i = 0; i < TRAIN_BK_N && i < CXLSIM_BK_N; i++)
        out->breakdown_s[i] = r.breakdown_s[i];
    out->tokens_per_s = r.tokens_per_s;
    out->mfu = r.mfu;
    out->model_flops = r.model_flops;
    out->events = r.events;
    out->flows = r.flows;
    out->kernels = r.kernels;
    out->stages = r.nstages;
    out->collective_kinds = r.ncolls;
    out->cxl_transfers = r.cxl_transfers;
    out->cxl_detailed_cycles = r.detailed_cycles;
    out->cxl_extrapolated_cycles = r.extrapolated_cycles;
    snprintf(out->cxl_backend, sizeof out->cxl_backend, "%s", r.cxl_backend);
    train_result_free(&r);
    struct_out(dst, out, sizeof *out);
    ok(err);
    return 0;
}

/* ---- collectives ---- */

static int cluster_new(const clustercfg *c, const gpucfg *g, cxlsim_cluster **out, cxlsim_error *err)
{
    cxl_err e;
    cxl_err_clear(&e);
    cxlsim_cluster *cl = calloc(1, sizeof *cl);
    int rc = cl ? collmodel_init(&cl->model, c, g, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    rc = made(rc, cl, &e, err);
    *out = rc ? NULL : cl;
    return rc;
}

int cxlsim_cluster_load(const char *cluster, const char *gpu, cxlsim_cluster **out, cxlsim_error *err)
{
    if (!cluster || !gpu || !out)
        return usage(err, "cxlsim_cluster_load: cluster, gpu and out are required");
    *out = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    clustercfg *c = malloc(sizeof *c);
    gpucfg *g = malloc(sizeof *g);
    int rc = c && g ? 0 : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc)
        rc = clustercfg_load(cluster, c, &e);
    if (!rc)
        rc = gpucfg_load(gpu, g, &e);
    rc = rc ? give(err, &e) : cluster_new(c, g, out, err);
    free(c);
    free(g);
    return rc;
}

int cxlsim_cluster_from_experiment(const cxlsim_experiment *x, cxlsim_cluster **out, cxlsim_error *err)
{
    if (!x || !out)
        return usage(err, "cxlsim_cluster_from_experiment: x and out are required");
    *out = NULL;
    return cluster_new(&x->cfg.cluster, &x->cfg.gpu, out, err);
}

void cxlsim_cluster_free(cxlsim_cluster *c) { free(c); }

int cxlsim_cluster_shape(const cxlsim_cluster *c, uint32_t *gpus_per_node, uint32_t *nodes)
{
    if (!c)
        return CXLSIM_EUSAGE;
    if (gpus_per_node)
        *gpus_per_node = c->model.gpus_per_node;
    if (nodes)
        *nodes = c->model.nodes;
    return 0;
}

int cxlsim_collective_time(const cxlsim_cluster *c, const cxlsim_collective *request,
                           cxlsim_collective_result *dst, cxlsim_error *err)
{
    if (!c || !request || !dst)
        return usage(err, "cxlsim_collective_time: c, req and out are required");
    cxl_err e;
    cxl_err_clear(&e);
    if (size_check(request, COLLECTIVE_MIN, "cxlsim_collective", &e) ||
        size_check(dst, COLLECTIVE_RESULT_MIN, "cxlsim_collective_result", &e))
        return bad_size(err, "cxlsim_collective_time", &e);
    cxlsim_collective in, *req = &in;
    struct_in(req, sizeof *req, request);
    cxlsim_collective_result res, *out = &res;
    if (req->op > CXLSIM_ALLTOALL || req->algo > CXLSIM_ALGO_AUTO || req->proto > CXLSIM_PROTO_AUTO)
        return usage(err, "cxlsim_collective_time: op (0-4), algo (0-3) or proto (0-3) out of range");
    collmodel_req q = { (int)req->op, req->bytes, req->ranks, req->ranks_per_node,
                        (collalgo_algo)req->algo, (nccltune_proto)req->proto, req->channels };
    collmodel_res r;
    if (collmodel_time(&c->model, &q, &r, &e))
        return give(err, &e);
    cxlsim_collective_result_init(out);
    out->time_ps = r.time_ps;
    out->algo = r.algo;
    out->proto = r.proto;
    out->phases = r.phases;
    out->loops = r.loops;
    if (r.time_ps > 0) {
        out->algbw_gbps = (double)req->bytes / ((double)r.time_ps * 1e-12) / 1e9;
        /* nccl-tests' bus bandwidth factors: 2(n-1)/n all-reduce, (n-1)/n gather, scatter and all-to-all,
         * 1 broadcast */
        double n = req->ranks;
        double f = req->op == CXLSIM_ALLREDUCE ? 2 * (n - 1) / n : req->op == CXLSIM_BROADCAST ? 1 : (n - 1) / n;
        out->busbw_gbps = out->algbw_gbps * f;
    }
    struct_out(dst, out, sizeof *out);
    ok(err);
    return 0;
}

/* ---- CXL memory under load ---- */

int cxlsim_memory_open(const cxlsim_device *dev, const char *backend, uint32_t domains, int exact,
                       cxlsim_memory **out, cxlsim_error *err)
{
    if (!dev || !out || domains == 0)
        return usage(err, "cxlsim_memory_open: dev, out and domains >= 1 are required");
    *out = NULL;
    backend = backend ? backend : "csim";
    cxl_err e;
    cxl_err_clear(&e);
    cxlsim_memory *m = calloc(1, sizeof *m);
    int rc = m ? backend_check(backend, &e) : cxl_errf(&e, CXL_ENOMEM, "out of memory");
    if (!rc)
        rc = cxlmem_new(backend, NULL, &dev->params, domains, exact, &m->m, &e);
    rc = made(rc, m, &e, err);
    *out = rc ? NULL : m;
    return rc;
}

void cxlsim_memory_close(cxlsim_memory *m)
{
    if (m)
        cxlmem_free(m->m);
    free(m);
}

int cxlsim_memory_start(cxlsim_memory *m, int64_t at_ps, uint32_t domain, uint32_t host, uint64_t bytes,
                        uint32_t read_weight, uint32_t write_weight, double cap_gbps, uint32_t tag, cxlsim_error *err)
{
    if (!m)
        return usage(err, "cxlsim_memory_start: m is required");
    if (read_weight > 255 || write_weight > 255 || !(cap_gbps >= 0) || at_ps < m->now_ps)
        return usage(err, "cxlsim_memory_start: read_weight and write_weight 0-255, cap_gbps >= 0, at_ps not before "
                          "an earlier time");
    cxl_err e;
    cxl_err_clear(&e);
    if (cxlmem_start(m->m, at_ps, domain, host, bytes, (uint8_t)read_weight, (uint8_t)write_weight, cap_gbps * 1e9,
                     tag, &e))
        return give(err, &e);
    m->now_ps = at_ps;
    ok(err);
    return 0;
}

int cxlsim_memory_next(cxlsim_memory *m, int64_t horizon_ps, int64_t *t_ps, uint32_t *tag, cxlsim_error *err)
{
    if (!m || !t_ps || !tag)
        return usage(err, "cxlsim_memory_next: m, t_ps and tag are required");
    cxl_err e;
    cxl_err_clear(&e);
    int rc = cxlmem_next(m->m, horizon_ps, t_ps, tag, &e);
    if (rc < 0)
        return give(err, &e);
    if (rc == 1 && *t_ps > m->now_ps)
        m->now_ps = *t_ps;
    ok(err);
    return rc;
}

/* The tag cxlsim_memory_transfer gives its transfer. */
#define TRANSFER_TAG UINT32_MAX

int cxlsim_memory_transfer(cxlsim_memory *m, int64_t at_ps, uint32_t domain, uint32_t host, uint64_t bytes,
                           uint32_t read_weight, uint32_t write_weight, int64_t *duration_ps, cxlsim_error *err)
{
    if (!duration_ps)
        return usage(err, "cxlsim_memory_transfer: duration_ps is required");
    int rc = cxlsim_memory_start(m, at_ps, domain, host, bytes, read_weight, write_weight, 0, TRANSFER_TAG, err);
    for (;;) {
        if (rc)
            return rc;
        int64_t t;
        uint32_t tag;
        rc = cxlsim_memory_next(m, INT64_MAX, &t, &tag, err);
        if (rc == 1 && tag == TRANSFER_TAG) {
            *duration_ps = t - at_ps;
            return 0;
        }
        if (rc == 0)
            return give(err, &(cxl_err){ .code = CXL_EINTERNAL, .msg = "the transfer never completed" });
        if (rc == 1)
            rc = 0;
    }
}
