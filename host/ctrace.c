/* ctrace.c - streaming Chrome trace writer (see ctrace.h). Events are formatted by hand into a buffer
 * (snprintf per field would dominate: a 1T-parameter iteration has millions of slices) and the buffer
 * goes to the file, through deflate for ".gz" (on a thread of its own), whenever it fills. */
#include "ctrace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cfg.h"
#include "outfile.h"

#define CT_BUF (1u << 20)   /* formatting buffer */
#define CT_ROOM 4096u       /* flush when less than this is left: one event's fixed part always fits */
#define CT_LEVEL 2          /* deflate level: on these traces as fast as 1 and 8 % smaller */

/* With gzip, a second thread compresses and writes one buffer while the caller fills the other, so the
 * run takes about the longer of formatting and compressing rather than their sum. Only the handoff
 * (job_*, wrc, werr) is shared, under mu. */
struct ctrace {
    outfile f;
    int gz;
    z_stream z;
    unsigned char *zbuf;
    char *bufs[2], *buf;
    int cur;
    size_t len;
    int first;              /* no event written yet (no comma) */
    int64_t w0, w1;         /* window, ps */
    int rc;                 /* first error */
    cxl_err err;
    /* compression thread */
    pthread_t th;
    int th_up;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *job_buf;
    size_t job_len;
    int job_mode, job_pending, quit;
    int wrc;
    cxl_err werr;
};

static int ct_fail(ctrace *ct, int rc)
{
    if (!ct->rc)
        ct->rc = rc;
    return ct->rc;
}

/* Compress len bytes of buf (mode Z_FINISH at the end) and write them; the worker's side. */
static int ct_deflate(ctrace *ct, const char *buf, size_t len, int mode, cxl_err *err)
{
    ct->z.next_in = (unsigned char *)(uintptr_t)buf;
    ct->z.avail_in = (uInt)len;
    int zr;
    do {
        ct->z.next_out = ct->zbuf;
        ct->z.avail_out = CT_BUF;
        zr = deflate(&ct->z, mode);
        if (zr == Z_STREAM_ERROR)
            return cxl_errf(err, CXL_EINTERNAL, "internal: deflate failed writing '%s'", ct->f.path);
        size_t have = CT_BUF - ct->z.avail_out;
        if (have && outfile_put(&ct->f, ct->zbuf, have, err))
            return err->code;
    } while (ct->z.avail_out == 0 || (mode == Z_FINISH && zr != Z_STREAM_END));
    return 0;
}

static void *ct_worker(void *arg)
{
    ctrace *ct = arg;
    pthread_mutex_lock(&ct->mu);
    for (;;) {
        while (!ct->job_pending && !ct->quit)
            pthread_cond_wait(&ct->cv, &ct->mu);
        if (!ct->job_pending)
            break;
        const char *buf = ct->job_buf;
        size_t len = ct->job_len;
        int mode = ct->job_mode, failed = ct->wrc;
        pthread_mutex_unlock(&ct->mu);
        cxl_err e;
        cxl_err_clear(&e);
        int rc = failed ? 0 : ct_deflate(ct, buf, len, mode, &e);
        pthread_mutex_lock(&ct->mu);
        if (rc && !ct->wrc) {
            ct->wrc = rc;
            ct->werr = e;
        }
        ct->job_pending = 0;
        pthread_cond_broadcast(&ct->cv);
    }
    pthread_mutex_unlock(&ct->mu);
    return NULL;
}

/* Wait until the worker is idle; take over its error. Called with mu held. */
static void ct_wait_idle(ctrace *ct)
{
    while (ct->job_pending)
        pthread_cond_wait(&ct->cv, &ct->mu);
    if (ct->wrc && !ct->rc) {
        ct->rc = ct->wrc;
        ct->err = ct->werr;
    }
}

/* Hand the buffer to the file (through the compression thread when gz); mode Z_FINISH at the end, which
 * also waits for the last write. */
static int ct_drain(ctrace *ct, int mode)
{
    if (ct->rc)
        return ct->rc;
    if (!ct->gz) {
        if (ct->len && outfile_put(&ct->f, ct->buf, ct->len, &ct->err))
            return ct_fail(ct, ct->err.code);
        ct->len = 0;
        return 0;
    }
    pthread_mutex_lock(&ct->mu);
    ct_wait_idle(ct);
    if (!ct->rc) {
        ct->job_buf = ct->buf;
        ct->job_len = ct->len;
        ct->job_mode = mode;
        ct->job_pending = 1;
        pthread_cond_broadcast(&ct->cv);
        if (mode == Z_FINISH)
            ct_wait_idle(ct);
    }
    pthread_mutex_unlock(&ct->mu);
    ct->cur ^= 1;
    ct->buf = ct->bufs[ct->cur];
    ct->len = 0;
    return ct->rc;
}

static void ct_room(ctrace *ct)
{
    if (CT_BUF - ct->len < CT_ROOM)
        ct_drain(ct, Z_NO_FLUSH);
}

static void put(ctrace *ct, const char *s, size_t n)
{
    while (n && !ct->rc) {
        size_t k = CT_BUF - ct->len < n ? CT_BUF - ct->len : n;
        memcpy(ct->buf + ct->len, s, k);
        ct->len += k;
        s += k;
        n -= k;
        if (ct->len == CT_BUF)
            ct_drain(ct, Z_NO_FLUSH);
    }
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
    if (!ct || !(ct->bufs[0] = malloc(CT_BUF)) || !(ct->bufs[1] = malloc(CT_BUF))) {
        if (ct)
            free(ct->bufs[0]);
        free(ct);
        return cxl_errf(err, CXL_ENOMEM, "out of memory (trace writer)");
    }
    ct->buf = ct->bufs[0];
    size_t n = strlen(path);
    ct->gz = n > 3 && !strcmp(path + n - 3, ".gz");
    ct->first = 1;
    ct->w0 = t0_ps < 0 ? 0 : t0_ps;
    ct->w1 = t1_ps;
    cxl_err_clear(&ct->err);
    if (ct->gz) {
        ct->zbuf = malloc(CT_BUF);
        /* windowBits 15 + 16: a gzip header and trailer, as gzip(1) and Perfetto read */
        if (!ct->zbuf || deflateInit2(&ct->z, CT_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(ct->zbuf);
            free(ct->bufs[0]);
            free(ct->bufs[1]);
            free(ct);
            return cxl_errf(err, CXL_ENOMEM, "out of memory (trace compression)");
        }
        pthread_mutex_init(&ct->mu, NULL);
        pthread_cond_init(&ct->cv, NULL);
    }
    int rc = outfile_open(&ct->f, path, err);
    if (rc) {
        ct->f.fd = -1;
        ct_fail(ct, rc);
        ctrace_abort(ct);
        return rc;
    }
    if (ct->gz) {
        if (pthread_create(&ct->th, NULL, ct_worker, ct)) {
            ctrace_abort(ct);
            return cxl_errf(err, CXL_ENOMEM, "cannot start the trace compression thread");
        }
        ct->th_up = 1;
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

void ctrace_counter(ctrace *ct, uint32_t pid, const char *name, const char *const *series, const double *v,
                    uint32_t n, int64_t t_ps)
{
    if (ct->rc || !ctrace_in_window(ct, t_ps, t_ps))
        return;
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

/* End the compression thread once its job is done (no-op without one). */
static void ct_stop(ctrace *ct)
{
    if (!ct->th_up)
        return;
    pthread_mutex_lock(&ct->mu);
    ct->quit = 1;
    pthread_cond_broadcast(&ct->cv);
    pthread_mutex_unlock(&ct->mu);
    pthread_join(ct->th, NULL);
    ct->th_up = 0;
    if (ct->wrc && !ct->rc) {
        ct->rc = ct->wrc;
        ct->err = ct->werr;
    }
}

static void ct_free(ctrace *ct)
{
    ct_stop(ct);
    if (ct->gz) {
        pthread_mutex_destroy(&ct->mu);
        pthread_cond_destroy(&ct->cv);
        deflateEnd(&ct->z);
    }
    free(ct->zbuf);
    free(ct->bufs[0]);
    free(ct->bufs[1]);
    free(ct);
}

int ctrace_finish(ctrace *ct, cxl_err *err)
{
    PUTS(ct, "\n]}\n");
    ct_drain(ct, Z_FINISH);
    ct_stop(ct);
    if (!ct->rc && outfile_commit(&ct->f, &ct->err))
        ct_fail(ct, ct->err.code);
    int rc = ct->rc;
    if (rc) {
        *err = ct->err;
        if (!err->code)
            cxl_errf(err, rc, "cannot write the trace '%s'", ct->f.path);
        outfile_abort(&ct->f);
    }
    ct_free(ct);
    return rc;
}

void ctrace_abort(ctrace *ct)
{
    if (!ct)
        return;
    ct_stop(ct);
    outfile_abort(&ct->f);
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
