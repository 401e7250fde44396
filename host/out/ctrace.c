/* ctrace.c - streaming Chrome trace writer (see ctrace.h). Events are formatted by hand into a buffer
 * (snprintf per field would dominate: a 1T-parameter iteration has millions of slices) and the buffer
 * goes to the file, or for ".gz" to the parallel compressor (pgz.h), whenever it fills. */
#include "out/ctrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "out/outfile.h"
#include "out/pgz.h"

#define CT_BUF PGZ_BLOCK    /* formatting buffer (a gzip block when compressing) */
#define CT_ROOM 4096u       /* flush when less than this is left: one event's fixed part always fits */
#define CT_LEVEL 2          /* deflate level: on these traces as fast as 1 and 8 % smaller */

/* With gzip, the buffer is a block of the parallel compressor (pgz.h): worker threads deflate full
 * blocks while this thread formats the next, so the run takes about as long as formatting alone when
 * there are cores for the workers. */
struct ctrace {
    outfile *f;             /* NULL once handed on (ctrace_end) */
    pgz *pz;                /* NULL: plain JSON */
    char *own;              /* the buffer when plain */
    char *buf;
    size_t len;
    int first;              /* no event written yet (no comma) */
    int64_t w0, w1;         /* window, ps */
    int rc;                 /* first error */
    cxl_err err;
    /* counters before the window: the last sample of each, written at the window's start */
    struct ct_held *held;
    uint32_t nheld, capheld;
    int primed;             /* a counter sample inside the window has come: held ones are out */
    char *other;            /* "otherData" object text, or NULL */
    size_t other_len;
};

#define CT_SERIES 4
struct ct_held {
    uint32_t pid, n;
    char name[64], series[CT_SERIES][32];
    double v[CT_SERIES];
};

static int ct_fail(ctrace *ct, int rc)
{
    if (!ct->rc)
        ct->rc = rc;
    return ct->rc;
}

/* Hand the buffer to the file or the compressor and start a new one; last = 1 at the end. */
static int ct_drain(ctrace *ct, int last)
{
    if (ct->rc)
        return ct->rc;
    if (!ct->pz) {
        if (ct->len && outfile_put(ct->f, ct->buf, ct->len, &ct->err))
            return ct_fail(ct, ct->err.code);
    } else if (pgz_submit(ct->pz, ct->len, last, &ct->err) || (last && pgz_finish(ct->pz, &ct->err))) {
        return ct_fail(ct, ct->err.code);
    } else if (!last && !(ct->buf = pgz_block(ct->pz, &ct->err))) {
        ct->buf = ct->own; /* somewhere harmless for the calls that still come */
        return ct_fail(ct, ct->err.code);
    }
    ct->len = 0;
    return 0;
}

static void ct_room(ctrace *ct)
{
    if (CT_BUF - ct->len < CT_ROOM)
        ct_drain(ct, 0);
}

/* put's way when the bytes do not fit: fill, drain, go on (or drop them after an error) */
static void put_slow(ctrace *ct, const char *s, size_t n)
{
    while (n && !ct->rc) {
        size_t k = CT_BUF - ct->len < n ? CT_BUF - ct->len : n;
        memcpy(ct->buf + ct->len, s, k);
        ct->len += k;
        s += k;
        n -= k;
        if (ct->len == CT_BUF)
            ct_drain(ct, 0);
    }
}

/* inline, so that the many short literals become a few moves instead of a memcpy call each */
static inline void put(ctrace *ct, const char *s, size_t n)
{
    if (n < CT_BUF - ct->len) {
        memcpy(ct->buf + ct->len, s, n);
        ct->len += n;
        return;
    }
    put_slow(ct, s, n);
}

#define PUTS(ct, lit) put((ct), (lit), sizeof(lit) - 1)

static void put_u64(ctrace *ct, uint64_t v)
{
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(ct, tmp + i, (size_t)(24 - i));
}

/* ns as microseconds with exactly three decimals */
static void put_us(ctrace *ct, uint64_t ns)
{
    char frac[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10) };
    put_u64(ct, ns / 1000);
    put(ct, frac, 4);
}

static void put_num(ctrace *ct, double v)
{
    if (v >= 0 && v < 9007199254740992.0 && v == (double)(uint64_t)v) {
        put_u64(ct, (uint64_t)v); /* whole numbers (byte counts, 0 and 1) without snprintf */
        return;
    }
    char tmp[40];
    int n = v == v && v - v == 0 ? snprintf(tmp, sizeof tmp, "%.9g", v) : snprintf(tmp, sizeof tmp, "null");
    put(ct, tmp, (size_t)n);
}

/* a JSON string, quoted and escaped */
static void put_str(ctrace *ct, const char *s)
{
    PUTS(ct, "\"");
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(ct, run, (size_t)(s - run));
        char esc[8];
        int n = c == '"' || c == '\\' ? snprintf(esc, sizeof esc, "\\%c", c) : snprintf(esc, sizeof esc, "\\u%04x", c);
        put(ct, esc, (size_t)n);
        run = s + 1;
    }
    put(ct, run, (size_t)(s - run));
    PUTS(ct, "\"");
}

/* the start of an event: separator, ph, name, pid */
static void ev_begin(ctrace *ct, const char *ph, const char *name, uint32_t pid)
{
    ct_room(ct);
    if (ct->first)
        ct->first = 0;
    else
        PUTS(ct, ",\n");
    PUTS(ct, "{\"ph\":\"");
    put(ct, ph, strlen(ph));
    PUTS(ct, "\",\"name\":");
    put_str(ct, name);
    PUTS(ct, ",\"pid\":");
    put_u64(ct, pid);
}

int ctrace_open(ctrace **out, const char *path, int64_t t0_ps, int64_t t1_ps, cxl_err *err)
{
    *out = NULL;
    ctrace *ct = calloc(1, sizeof *ct);
    if (!ct || !(ct->own = malloc(CT_BUF))) {
        free(ct);
        return cxl_errf(err, CXL_ENOMEM, "out of memory (trace writer)");
    }
    ct->buf = ct->own;
    ct->first = 1;
    ct->w0 = t0_ps < 0 ? 0 : t0_ps;
    ct->w1 = t1_ps;
    cxl_err_clear(&ct->err);
    int rc = outfile_open(path, &ct->f, err);
    if (rc) {
        free(ct->own);
        free(ct);
        return rc;
    }
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".gz")) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        rc = pgz_open(&ct->pz, ct->f, cpus > 1 ? (uint32_t)cpus : 1, CT_LEVEL, err);
        if (!rc && !(ct->buf = pgz_block(ct->pz, err)))
            rc = err->code;
        if (rc) {
            ctrace_abort(ct);
            return rc;
        }
    }
    PUTS(ct, "{\"traceEvents\":[\n");
    *out = ct;
    return 0;
}

int ctrace_failed(const ctrace *ct, cxl_err *err)
{
    if (ct->rc && err)
        *err = ct->err;
    return ct->rc;
}

int ctrace_in_window(const ctrace *ct, int64_t t0_ps, int64_t t1_ps) { return t1_ps >= ct->w0 && t0_ps <= ct->w1; }

int ctrace_other_data(ctrace *ct, const char *json_object, size_t len, cxl_err *err)
{
    char *c = malloc(len ? len : 1);
    if (!c)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (trace metadata)");
    memcpy(c, json_object, len);
    free(ct->other);
    ct->other = c;
    ct->other_len = len;
    return 0;
}

static void meta(ctrace *ct, const char *what, uint32_t pid, int with_tid, uint32_t tid, const char *name)
{
    if (ct->rc)
        return;
    ev_begin(ct, "M", what, pid);
    if (with_tid) {
        PUTS(ct, ",\"tid\":");
        put_u64(ct, tid);
    }
    PUTS(ct, ",\"args\":{\"name\":");
    put_str(ct, name);
    PUTS(ct, "}}");
    /* the sort index keeps tracks in the order of their ids */
    ev_begin(ct, "M", with_tid ? "thread_sort_index" : "process_sort_index", pid);
    if (with_tid) {
        PUTS(ct, ",\"tid\":");
        put_u64(ct, tid);
    }
    PUTS(ct, ",\"args\":{\"sort_index\":");
    put_u64(ct, with_tid ? tid : pid);
    PUTS(ct, "}}");
}

void ctrace_process(ctrace *ct, uint32_t pid, const char *name) { meta(ct, "process_name", pid, 0, 0, name); }

void ctrace_thread(ctrace *ct, uint32_t pid, uint32_t tid, const char *name) { meta(ct, "thread_name", pid, 1, tid, name); }

static uint64_t ns_of(int64_t ps) { return (uint64_t)(ps / 1000); }

void ctrace_slice(ctrace *ct, uint32_t pid, uint32_t tid, const char *cat, const char *name, int64_t t0_ps,
                  int64_t t1_ps, const ctrace_arg *args, uint32_t nargs)
{
    if (ct->rc || t1_ps < t0_ps || !ctrace_in_window(ct, t0_ps, t1_ps))
        return;
    int64_t a = t0_ps < ct->w0 ? ct->w0 : t0_ps, b = t1_ps > ct->w1 ? ct->w1 : t1_ps;
    ev_begin(ct, "X", name, pid);
    PUTS(ct, ",\"tid\":");
    put_u64(ct, tid);
    PUTS(ct, ",\"cat\":");
    put_str(ct, cat);
    PUTS(ct, ",\"ts\":");
    put_us(ct, ns_of(a));
    PUTS(ct, ",\"dur\":");
    put_us(ct, ns_of(b) - ns_of(a));
    if (nargs) {
        PUTS(ct, ",\"args\":{");
        for (uint32_t i = 0; i < nargs; i++) {
            if (i)
                PUTS(ct, ",");
            put_str(ct, args[i].key);
            PUTS(ct, ":");
            if (args[i].type == CTRACE_U64)
                put_u64(ct, args[i].u);
            else if (args[i].type == CTRACE_NUM)
                put_num(ct, args[i].d);
            else
                put_str(ct, args[i].s ? args[i].s : "");
        }
        PUTS(ct, "}");
    }
    PUTS(ct, "}");
}

static void counter_out(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                        uint32_t n, int64_t t_ps);

/* Keep the last sample before the window of counter (pid, name). O(counters). */
static void counter_hold(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                         uint32_t n)
{
    struct ct_held *h = NULL;
    for (uint32_t i = 0; i < ct->nheld && !h; i++)
        if (ct->held[i].pid == pid && !strncmp(ct->held[i].name, name, sizeof h->name - 1))
            h = &ct->held[i];
    if (!h) {
        if (ct->nheld == ct->capheld) {
            uint32_t nc = ct->capheld ? 2 * ct->capheld : 64;
            struct ct_held *nh = realloc(ct->held, nc * sizeof *nh);
            if (!nh) {
                ct_fail(ct, cxl_errf(&ct->err, CXL_ENOMEM, "out of memory (trace counters)"));
                return;
            }
            ct->held = nh;
            ct->capheld = nc;
        }
        h = &ct->held[ct->nheld++];
        h->pid = pid;
        snprintf(h->name, sizeof h->name, "%s", name);
    }
    h->n = n < CT_SERIES ? n : CT_SERIES;
    for (uint32_t i = 0; i < h->n; i++) {
        snprintf(h->series[i], sizeof h->series[i], "%s", series[i]);
        h->v[i] = v[i];
    }
}

/* The held samples, at the window's start. */
static void counters_release(ctrace *ct)
{
    ct->primed = 1;
    for (uint32_t i = 0; i < ct->nheld; i++) {
        struct ct_held *h = &ct->held[i];
        const char *series[CT_SERIES];
        for (uint32_t k = 0; k < h->n; k++)
            series[k] = h->series[k];
        counter_out(ct, h->pid, h->name, series, h->v, h->n, ct->w0);
    }
    ct->nheld = 0;
}

void ctrace_counter(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                    uint32_t n, int64_t t_ps)
{
    if (ct->rc || t_ps > ct->w1)
        return;
    if (t_ps < ct->w0) {
        /* before the window: its value still holds at the start unless a later sample comes first */
        if (ct->primed)
            counter_out(ct, pid, name, series, v, n, ct->w0);
        else
            counter_hold(ct, pid, name, series, v, n);
        return;
    }
    if (!ct->primed)
        counters_release(ct);
    counter_out(ct, pid, name, series, v, n, t_ps);
}

static void counter_out(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                        uint32_t n, int64_t t_ps)
{
    ev_begin(ct, "C", name, pid);
    PUTS(ct, ",\"ts\":");
    put_us(ct, ns_of(t_ps));
    PUTS(ct, ",\"args\":{");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            PUTS(ct, ",");
        put_str(ct, series[i]);
        PUTS(ct, ":");
        put_num(ct, v[i]);
    }
    PUTS(ct, "}}");
}

void ctrace_flow(ctrace *ct, int start, uint64_t id, uint32_t pid, uint32_t tid, const char *cat, const char *name,
                 int64_t t_ps)
{
    if (ct->rc)
        return;
    if (t_ps < ct->w0)
        t_ps = ct->w0;
    if (t_ps > ct->w1)
        t_ps = ct->w1;
    ev_begin(ct, start ? "s" : "f", name, pid);
    PUTS(ct, ",\"tid\":");
    put_u64(ct, tid);
    PUTS(ct, ",\"cat\":");
    put_str(ct, cat);
    PUTS(ct, ",\"id\":");
    put_u64(ct, id);
    PUTS(ct, ",\"ts\":");
    put_us(ct, ns_of(t_ps));
    if (!start)
        PUTS(ct, ",\"bp\":\"e\"");
    PUTS(ct, "}");
}

static void ct_free(ctrace *ct)
{
    free(ct->held);
    free(ct->other);
    pgz_free(ct->pz);
    free(ct->own);
    free(ct);
}

int ctrace_end(ctrace *ct, outfile **f, cxl_err *err)
{
    *f = NULL;
    if (!ct->primed)
        counters_release(ct);
    PUTS(ct, "\n]");
    if (ct->other) {
        PUTS(ct, ",\n\"otherData\":");
        put(ct, ct->other, ct->other_len);
    }
    PUTS(ct, "}\n");
    ct_drain(ct, 1);
    int rc = ct->rc;
    pgz_free(ct->pz); /* the workers stop before the file is handed on or goes */
    ct->pz = NULL;
    if (rc) {
        *err = ct->err;
        if (!err->code)
            cxl_errf(err, rc, "cannot write the trace");
        outfile_abort(ct->f);
    } else {
        *f = ct->f;
    }
    ct->f = NULL;
    ct_free(ct);
    return rc;
}

int ctrace_finish(ctrace *ct, cxl_err *err)
{
    outfile *f;
    int rc = ctrace_end(ct, &f, err);
    return rc ? rc : outfile_commit(f, err);
}

void ctrace_abort(ctrace *ct)
{
    if (!ct)
        return;
    pgz_free(ct->pz);
    ct->pz = NULL;
    outfile_abort(ct->f);
    ct_free(ct);
}

uint32_t ctrace_lane(ctrace *ct, ctrace_lanes *L, int64_t t0_ps, int64_t t1_ps)
{
    for (uint32_t k = 0; k < L->n; k++)
        if (L->end_ps[k] <= t0_ps) {
            L->end_ps[k] = t1_ps;
            return L->tid0 + k;
        }
    if (L->n == L->cap) {
        uint32_t nc = L->cap ? 2 * L->cap : 4;
        int64_t *ne = realloc(L->end_ps, nc * sizeof *ne);
        if (!ne) {
            ct_fail(ct, cxl_errf(&ct->err, CXL_ENOMEM, "out of memory (trace lanes)"));
            return L->tid0;
        }
        L->end_ps = ne;
        L->cap = nc;
    }
    L->end_ps[L->n] = t1_ps;
    char nm[160];
    if (L->n == 0)
        snprintf(nm, sizeof nm, "%s", L->name);
    else
        snprintf(nm, sizeof nm, "%s #%u", L->name, L->n + 1);
    ctrace_thread(ct, L->pid, L->tid0 + L->n, nm);
    return L->tid0 + L->n++;
}

void ctrace_lanes_free(ctrace_lanes *L)
{
    free(L->end_ps);
    L->end_ps = NULL;
    L->n = L->cap = 0;
}

int ctrace_parse_window(const char *s, int64_t *t0_ps, int64_t *t1_ps, cxl_err *err)
{
    const char *colon = strchr(s, ':');
    char a[64], why[256];
    uint64_t t0, t1 = INT64_MAX;
    if (!colon || (size_t)(colon - s) >= sizeof a)
        return cxl_errf(err, CXL_ECONFIG, "--trace-window '%s': expected T0:T1 (e.g. 2ms:3.5ms, or 1s: to the end)", s);
    snprintf(a, sizeof a, "%.*s", (int)(colon - s), s);
    if (cfg_parse_time_ps(a, &t0, why, sizeof why))
        return cxl_errf(err, CXL_ECONFIG, "--trace-window '%s': start '%s': %s", s, a, why);
    if (colon[1] && cfg_parse_time_ps(colon + 1, &t1, why, sizeof why))
        return cxl_errf(err, CXL_ECONFIG, "--trace-window '%s': end '%s': %s", s, colon + 1, why);
    if (t0 >= t1 || t1 > INT64_MAX)
        return cxl_errf(err, CXL_ECONFIG, "--trace-window '%s': the start must come before the end", s);
    *t0_ps = (int64_t)t0;
    *t1_ps = (int64_t)t1;
    return 0;
}

int ctrace_parse_stages(const char *s, uint32_t nstages, uint8_t *mask, cxl_err *err)
{
    memset(mask, 0, nstages);
    const char *p = s;
    for (;;) {
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (end == p || *p == '-' || *p == '+')
            return cxl_errf(err, CXL_ECONFIG, "--trace-stages '%s': expected stage numbers like 0,3,5-7", s);
        p = end;
        if (*p == '-') {
            hi = strtoul(p + 1, &end, 10);
            if (end == p + 1 || p[1] == '-' || p[1] == '+' || hi < lo)
                return cxl_errf(err, CXL_ECONFIG, "--trace-stages '%s': a range is LOW-HIGH with LOW <= HIGH", s);
            p = end;
        }
        if (hi >= nstages)
            return cxl_errf(err, CXL_ECONFIG, "--trace-stages '%s': stage %lu does not exist (the experiment has %u: "
                            "0-%u)", s, hi, nstages, nstages - 1);
        for (unsigned long k = lo; k <= hi; k++)
            mask[k] = 1;
        if (*p == 0)
            return 0;
        if (*p != ',')
            return cxl_errf(err, CXL_ECONFIG, "--trace-stages '%s': unexpected '%c' (stage numbers like 0,3,5-7)", s, *p);
        p++;
    }
}
