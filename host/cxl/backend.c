/* backend.c - the registry of backends and the checks they share. */
#include "cxl/backend.h"

#include <stdlib.h>
#include <string.h>

extern const cxl_backend_ops cxl_backend_csim_ops;
extern const cxl_backend_ops cxl_backend_analytical_ops;
#ifdef CXLSIM_HAVE_VERILATOR
extern const cxl_backend_ops cxl_backend_verilator_ops;
const char *cxl_backend_verilator_builds(void); /* backend_verilator.c */
int cxl_backend_verilator_can_trace(void);      /* backend_verilator.c */
uint64_t cxl_backend_verilator_clocks(cxl_backend *b); /* backend_verilator.c */
#endif
#ifdef CXLSIM_HAVE_XRT
extern const cxl_backend_ops cxl_backend_xrt_ops;
#endif

static const cxl_backend_ops *const built[] = {
    &cxl_backend_csim_ops,
    &cxl_backend_analytical_ops,
#ifdef CXLSIM_HAVE_VERILATOR
    &cxl_backend_verilator_ops,
#endif
#ifdef CXLSIM_HAVE_XRT
    &cxl_backend_xrt_ops,
#endif
};

/* Every backend the project has, with the package its dependency comes from. */
#ifdef CXLSIM_DEP_VERILATOR
#define VERILATOR_DEP 1
#else
#define VERILATOR_DEP 0
#endif
#ifdef CXLSIM_DEP_XRT
#define XRT_DEP 1
#else
#define XRT_DEP 0
#endif

/* Every backend the project knows, the package its dependency comes from, and whether the build found
 * that dependency (a backend can be missing because its dependency is, or because this version of
 * cxlsim does not have it yet). */
static const struct {
    const char *name, *package, *why;
    int dep_found;
} known[] = {
    { "csim", "", "", 1 },
    { "analytical", "", "", 1 },
    { "verilator", "verilator", "the RTL model simulated by Verilator", VERILATOR_DEP },
    { "xrt", "libxrt-dev", "an FPGA card through XRT", XRT_DEP },
};

static const char *const names[] = { "csim", "analytical", "verilator", "xrt", NULL };

const char *const *cxl_backend_names(void) { return names; }

#ifdef CXLSIM_BACKEND_MODULES
/* libcxlsim (lib/backend_module.c): a backend not compiled in, from its installed module; NULL when none */
const cxl_backend_ops *cxl_backend_module(const char *name);
#endif

static const cxl_backend_ops *find(const char *name)
{
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
        if (!strcmp(built[i]->name, name))
            return built[i];
#ifdef CXLSIM_BACKEND_MODULES
    return cxl_backend_module(name);
#else
    return NULL;
#endif
}

int cxl_backend_available(const char *name) { return find(name) != NULL; }

const char *cxl_backend_status(const char *name)
{
    if (find(name))
        return "built in";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(known[i].name, name))
            return known[i].dep_found ? "not in this version yet (dependency installed)"
                                      : "not built (dependency missing)";
    return "unknown";
}

int cxl_backend_can_trace(const char *name)
{
#ifdef CXLSIM_HAVE_VERILATOR
    if (!strcmp(name, "verilator"))
        return cxl_backend_verilator_can_trace();
#endif
    (void)name;
    return 0;
}

uint64_t cxl_backend_kernel_clocks(cxl_backend *b)
{
#ifdef CXLSIM_HAVE_VERILATOR
    if (b->ops == &cxl_backend_verilator_ops)
        return cxl_backend_verilator_clocks(b);
#endif
    (void)b;
    return 0;
}

const char *cxl_backend_rtl_builds(const char *name)
{
#ifdef CXLSIM_HAVE_VERILATOR
    if (!strcmp(name, "verilator"))
        return cxl_backend_verilator_builds();
#endif
    (void)name;
    return "";
}

cxl_backend_opts cxl_backend_opts_for(const char *name, const cxl_backend_opts *o)
{
    cxl_backend_opts r = { 0 };
    if (o && !strcmp(name, "verilator")) {
        r.trace_fst = o->trace_fst;
        r.trace_from = o->trace_from;
        r.trace_to = o->trace_to;
        r.rtl_build = o->rtl_build;
    }
    if (o && !strcmp(name, "xrt")) {
        r = *o;
        r.trace_fst = NULL;
    }
    return r;
}

int cxl_backend_open(const char *name, const cxl_params *p, cxl_backend **out, cxl_err *err)
{
    return cxl_backend_open_opts(name, p, NULL, out, err);
}

int cxl_backend_open_opts(const char *name, const cxl_params *p, const cxl_backend_opts *o, cxl_backend **out,
                          cxl_err *err)
{
    *out = NULL;
    if (o && o->trace_fst && strcmp(name, "verilator"))
        return cxl_errf(err, CXL_EUSAGE, "--trace-fst needs --backend verilator (backend '%s' has no RTL)", name);
    if (o && (o->xclbin || o->xrt_card || o->xrt_timeout_ms || o->xrt_fault) && strcmp(name, "xrt"))
        return cxl_errf(err, CXL_EUSAGE, "--xclbin, --card and --xrt-timeout need --backend xrt (backend '%s' runs "
                        "no FPGA)", name);
    const cxl_backend_ops *ops = find(name);
    if (!ops) {
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            if (strcmp(known[i].name, name))
                continue;
            if (!known[i].dep_found)
                return cxl_errf(err, CXL_EBACKEND,
                                "backend '%s' (%s) is not built into this cxlsim: install the Debian package '%s' "
                                "and rebuild (scripts/setup.sh does both)",
                                name, known[i].why, known[i].package);
            return cxl_errf(err, CXL_EBACKEND,
                            "backend '%s' (%s) is not part of this version of cxlsim yet (its dependency, %s, is "
                            "installed); use --backend csim",
                            name, known[i].why, known[i].package);
        }
        return cxl_errf(err, CXL_EUSAGE, "unknown backend '%s'; valid: csim, analytical, verilator, xrt", name);
    }
    cxl_backend *b = calloc(1, sizeof *b);
    if (!b)
        return cxl_errf(err, CXL_ENOMEM, "out of memory opening backend '%s'", name);
    b->ops = ops;
    b->params = *p;
    if (o)
        b->opts = *o;
    int rc = ops->open(b, p, err);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

int cxl_desc_check(const cxl_params *p, const cxl_desc *d, cxl_err *err)
{
    unsigned long long id = (unsigned long long)d->id;
    if (d->requester >= p->requesters)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: requester %u does not exist (device has %u)", id,
                        d->requester, p->requesters);
    if (d->bytes == 0 || d->bytes % CXL_LINE_BYTES)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: %llu bytes is not a positive multiple of 64", id,
                        (unsigned long long)d->bytes);
    if (d->base % CXL_LINE_BYTES)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: base 0x%llx is not 64 B aligned", id,
                        (unsigned long long)d->base);
    if (d->max_outstanding == 0 || d->max_outstanding > p->tags)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: max_outstanding %u outside 1..%u (tags per requester)", id,
                        d->max_outstanding, p->tags);
    if (d->pattern > CXL_PAT_STRIDE)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: unknown pattern %u", id, d->pattern);
    if (d->footprint % CXL_LINE_BYTES || (d->footprint / CXL_LINE_BYTES) >> 32)
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: footprint %llu must be a multiple of 64 below 256 TiB", id,
                        (unsigned long long)d->footprint);
    if (d->pattern == CXL_PAT_STRIDE && (d->stride == 0 || d->stride % CXL_LINE_BYTES))
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: stride %u must be a positive multiple of 64", id, d->stride);
    if (d->pattern == CXL_PAT_STRIDE && d->stride >= (d->footprint ? d->footprint : d->bytes))
        return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: stride %u must be below the footprint", id, d->stride);
    return 0;
}

int cxl_backend_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err)
{
    uint32_t need[CXL_MAX_REQ] = { 0 };
    for (size_t i = 0; i < n; i++) {
        int rc = cxl_desc_check(&b->params, &d[i], err);
        if (rc)
            return rc;
        need[d[i].requester]++;
    }
    for (uint32_t r = 0; r < b->params.requesters; r++)
        if (need[r] > b->ops->space(b, r))
            return cxl_errf(err, CXL_ELIMIT, "requester %u: %u descriptors submitted, room for %u; advance first", r,
                            need[r], b->ops->space(b, r));
    int rc = b->ops->submit(b, d, n, err);
    if (rc)
        return rc;
    b->wd_submitted += n;
    for (size_t i = 0; i < n; i++) {
        if (d[i].gap_cycles > b->wd_gap)
            b->wd_gap = d[i].gap_cycles;
        if (d[i].not_before > b->wd_quiet)
            b->wd_quiet = d[i].not_before;
    }
    return 0;
}

/* The progress watchdog, after an advance: O(1) except one statistics read per CXL_WATCHDOG_CYCLES. */
static int watchdog(cxl_backend *b, cxl_err *err)
{
    uint64_t now = b->ops->now(b);
    if (b->wd_polled >= b->wd_submitted || now < b->wd_since) { /* no work: silence is no fault */
        b->wd_since = now;
        return 0;
    }
    /* silence counts from the last progress, or from the latest not_before if that is later */
    uint64_t from = b->wd_since > b->wd_quiet ? b->wd_since : b->wd_quiet;
    if (now < from || now - from < CXL_WATCHDOG_CYCLES + 2 * b->wd_gap)
        return 0;
    cxl_stats *st = malloc(sizeof *st);
    if (!st)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (watchdog)");
    int rc = b->ops->stats(b, st, err);
    uint64_t bytes = st->read_bytes + st->write_bytes;
    free(st);
    if (rc)
        return rc;
    if (bytes != b->wd_bytes) {
        b->wd_bytes = bytes;
        b->wd_since = now;
        return 0;
    }
    return cxl_errf(err, CXL_ELIMIT, "backend %s made no progress: work is queued but no access completed from "
                    "cycle %llu to %llu (%llu cycles, the watchdog's limit): the device's timings starve the "
                    "model (refresh leaving no time for accesses?); run 'cxlsim check' on it, or report a bug",
                    b->ops->name, (unsigned long long)from, (unsigned long long)now,
                    (unsigned long long)(now - from));
}

uint32_t cxl_backend_space(cxl_backend *b, uint32_t requester) { return b->ops->space(b, requester); }
int cxl_backend_advance(cxl_backend *b, uint64_t until, int stop, cxl_err *err)
{
    /* in steps that end where the watchdog must look next, so that a starved model is stopped about
     * CXL_WATCHDOG_CYCLES after its last progress, however far `until` is */
    for (;;) {
        uint64_t now = b->ops->now(b), step = until;
        uint64_t look = (b->wd_since > b->wd_quiet ? b->wd_since : b->wd_quiet) + CXL_WATCHDOG_CYCLES + 2 * b->wd_gap;
        if (look > now && look < step)
            step = look;
        int rc = b->ops->advance(b, step, stop, err);
        if (rc || (rc = watchdog(b, err)))
            return rc;
        now = b->ops->now(b);
        if (now >= until || now < step)
            return 0;   /* there, or stopped early (a completion, a full buffer) */
    }
}
uint64_t cxl_backend_now(cxl_backend *b) { return b->ops->now(b); }
size_t cxl_backend_poll(cxl_backend *b, cxl_completion *out, size_t max)
{
    size_t k = b->ops->poll(b, out, max);
    b->wd_polled += k;
    return k;
}
int cxl_backend_stats(cxl_backend *b, cxl_stats *out, cxl_err *err) { return b->ops->stats(b, out, err); }
int cxl_backend_counters(cxl_backend *b, cxl_counters *out, cxl_err *err)
{
    if (b->ops->counters)
        return b->ops->counters(b, out, err);
    cxl_stats *st = malloc(sizeof *st);
    if (!st)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (backend statistics)");
    int rc = b->ops->stats(b, st, err);
    if (rc == 0) {
        out->cycles = st->cycles;
        out->read_bytes = st->read_bytes;
        out->write_bytes = st->write_bytes;
        memcpy(out->dev, st->dev, sizeof out->dev);
    }
    free(st);
    return rc;
}
int cxl_backend_idle(cxl_backend *b) { return b->ops->idle(b); }
const char *cxl_backend_name(const cxl_backend *b) { return b->ops->name; }

void cxl_backend_close(cxl_backend *b)
{
    if (!b)
        return;
    b->ops->close(b);
    free(b);
}
