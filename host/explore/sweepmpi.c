/* sweepmpi.c - items spread over the ranks of an MPI job (sweepmpi.h). Built with or without MPI:
 * CXLSIM_HAVE_MPI (set on this file alone by CMake) selects the real rounds or the stubs. */
#define _POSIX_C_SOURCE 200809L
#include "explore/sweepmpi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef CXLSIM_HAVE_MPI
#include <mpi.h>
#endif

/* A non-negative int from the environment; 0 when absent or not a number. */
static int env_int(const char *name, long *v)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (*end || errno || x < 0 || x > INT_MAX)
        return 0;
    *v = x;
    return 1;
}

void sweepmpi_launch_get(sweepmpi_launch *l)
{
    static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL };
    static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL };
    long v;
    l->size = 1;
    l->rank = 0;
    l->from[0] = '\0';
    for (int i = 0; sizes[i] && !l->from[0]; i++)
        if (env_int(sizes[i], &v) && v > 0)
            l->size = (int)v, snprintf(l->from, sizeof l->from, "%s=%ld", sizes[i], v);
    /* srun --mpi=pmix names the rank only; the step's task count is Slurm's */
    if (!l->from[0] && getenv("PMIX_RANK") && env_int("SLURM_STEP_NUM_TASKS", &v) && v > 0)
        l->size = (int)v, snprintf(l->from, sizeof l->from, "SLURM_STEP_NUM_TASKS=%ld", v);
    for (int i = 0; ranks[i]; i++)
        if (env_int(ranks[i], &v)) {
            l->rank = v < l->size ? (int)v : 0;
            break;
        }
}

int sweepmpi_built(void)
{
#ifdef CXLSIM_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int sweepmpi_require(const sweepmpi_launch *l, const char *what, cxl_err *err)
{
    if (l->size < 2 || sweepmpi_built())
        return 0;
    return cxl_errf(err, CXL_EBACKEND, "%s: started by an MPI launcher as rank %d of %d (%s), but this cxlsim was "
                    "built without MPI, so every rank would run the whole %s and write the same outputs. Build "
                    "it with Open MPI: apt-get install libopenmpi-dev openmpi-bin, then cmake -S . -B build "
                    "-DCXLSIM_MPI=ON && cmake --build build (docs/scale-out.md); or run without the launcher "
                    "(-j N runs them on this machine's cores)", what, l->rank, l->size, l->from, what);
}

#ifndef CXLSIM_HAVE_MPI

int sweepmpi_serve(sweepmpi_eval_fn eval, void *ctx, size_t want, cxl_err *err)
{
    (void)eval, (void)ctx, (void)want;
    return cxl_errf(err, CXL_EBACKEND, "MPI is not built in (CMake option CXLSIM_MPI; docs/scale-out.md)");
}

int sweepmpi_spread(const uint64_t *items, size_t n, const void *params, size_t plen,
                    int (*done)(void *dctx, size_t k, const char *line), void *dctx, char **out, cxl_err *err)
{
    (void)items, (void)n, (void)params, (void)plen, (void)done, (void)dctx, (void)out;
    return cxl_errf(err, CXL_EBACKEND, "MPI is not built in (CMake option CXLSIM_MPI; docs/scale-out.md)");
}

int sweepmpi_start(cxl_err *err)
{
    return cxl_errf(err, CXL_EBACKEND, "MPI is not built in (CMake option CXLSIM_MPI; docs/scale-out.md)");
}

int sweepmpi_finish(cxl_err *err)
{
    (void)err;
    return 0;
}

#else

enum { TAG_RESULT = 1, TAG_FAIL = 2, TAG_WORK = 3 };

/* Waiting sleeps instead of spinning in MPI's blocking calls: a rank that waits gives its core to the
 * ranks (and their worker processes) that compute. */
static void nap(void)
{
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
}

static int mpi_fail(cxl_err *err, const char *what, int mrc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mrc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", mrc);
    return cxl_errf(err, CXL_EINTERNAL, "MPI: %s: %s", what, msg);
}

static int wait_for(MPI_Request *rq, cxl_err *err)
{
    for (;;) {
        int flag = 0, mrc = MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, "MPI_Test", mrc);
        if (flag)
            return 0;
        nap();
    }
}

/* A message from src (MPI_ANY_SOURCE) is ready to be received: its status. */
static int probe_for(int src, int tag, MPI_Status *st, cxl_err *err)
{
    for (;;) {
        int flag = 0, mrc = MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, st);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, "MPI_Iprobe", mrc);
        if (flag)
            return 0;
        nap();
    }
}

static int start(int *rank, int *size, cxl_err *err)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int mrc = MPI_Init(NULL, NULL);
        if (mrc != MPI_SUCCESS)
            return cxl_errf(err, CXL_EBACKEND, "MPI_Init failed (error %d)", mrc);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    sweepmpi_launch l;
    sweepmpi_launch_get(&l);
    if (*size != l.size || *rank != l.rank)
        return cxl_errf(err, CXL_EBACKEND, "MPI: the launcher says rank %d of %d (%s), MPI says rank %d of %d: "
                        "a launcher without MPI support (with srun, give --mpi=pmix or --mpi=pmi2)", l.rank, l.size,
                        l.from, *rank, *size);
    return 0;
}

int sweepmpi_start(cxl_err *err)
{
    int rank, size;
    return start(&rank, &size, err);
}

/* The round header: whether a round follows, and its parameters' length. */
static int bcast_header(long long hdr[2], cxl_err *err)
{
    MPI_Request rq;
    int mrc = MPI_Ibcast(hdr, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &rq);
    return mrc != MPI_SUCCESS ? mpi_fail(err, "MPI_Ibcast", mrc) : wait_for(&rq, err);
}

static int bcast_params(void *p, size_t len, cxl_err *err)
{
    if (!len)
        return 0;
    MPI_Request rq;
    int mrc = MPI_Ibcast(p, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    return mrc != MPI_SUCCESS ? mpi_fail(err, "MPI_Ibcast", mrc) : wait_for(&rq, err);
}

/* "WANT\n" then each line and a newline, in one buffer. */
static char *pack(size_t want, char **lines, size_t n, size_t *len)
{
    size_t total = 24;
    for (size_t i = 0; i < n; i++)
        total += strlen(lines[i]) + 1;
    char *b = malloc(total);
    if (!b)
        return NULL;
    size_t off = (size_t)snprintf(b, total, "%zu\n", want);
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(lines[i]);
        memcpy(b + off, lines[i], l);
        b[off + l] = '\n';
        off += l + 1;
    }
    *len = off;
    return b;
}

/* A failure for rank 0: "CODE\nMESSAGE". */
static char *pack_fail(const cxl_err *e, size_t *len)
{
    size_t cap = strlen(e->msg) + 24;
    char *b = malloc(cap);
    if (b)
        *len = (size_t)snprintf(b, cap, "%d\n%s", e->code, e->msg);
    return b;
}

/* One round on a worker rank: ask, evaluate, answer with the lines (or the failure), until rank 0 sends
 * an empty chunk. Returns 0 (also after a reported failure: rank 0 reports it) or a failure of MPI or
 * memory, after which this rank cannot take part. */
static int serve_round(sweepmpi_eval_fn eval, void *ctx, const void *params, size_t plen, size_t want,
                       cxl_err *err)
{
    size_t len = 0;
    int tag = TAG_RESULT, rc = 0;
    char *msg = pack(want, NULL, 0, &len);
    uint64_t *items = NULL;
    char **lines = NULL;
    while (msg) {
        int mrc = MPI_Send(msg, (int)len, MPI_CHAR, 0, tag, MPI_COMM_WORLD), count = 0;
        free(msg);
        msg = NULL;
        MPI_Status st;
        if (mrc != MPI_SUCCESS) {
            rc = mpi_fail(err, "MPI_Send", mrc);
            break;
        }
        if ((rc = probe_for(0, TAG_WORK, &st, err)))
            break;
        MPI_Get_count(&st, MPI_UINT64_T, &count);
        free(items);
        free(lines);
        items = malloc((count > 0 ? (size_t)count : 1) * sizeof *items);
        lines = calloc(count > 0 ? (size_t)count : 1, sizeof *lines);
        if (!items || !lines) {
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            break;
        }
        if ((mrc = MPI_Recv(items, count, MPI_UINT64_T, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE))) {
            rc = mpi_fail(err, "MPI_Recv", mrc);
            break;
        }
        if (count <= 0)
            break;                                          /* the round is over */
        size_t n = (size_t)count;
        cxl_err e;
        cxl_err_clear(&e);
        if (eval(ctx, params, plen, items, n, lines, &e) == 0)
            msg = pack(want, lines, n, &len), tag = TAG_RESULT;
        else
            msg = pack_fail(&e, &len), tag = TAG_FAIL;
        for (size_t i = 0; i < n; i++)
            free(lines[i]);
        if (!msg)
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
    }
    free(items);
    free(lines);
    return rc;
}

int sweepmpi_serve(sweepmpi_eval_fn eval, void *ctx, size_t want, cxl_err *err)
{
    int rank, size, rc = start(&rank, &size, err);
    char *params = malloc(SWEEPMPI_MAX_PARAMS);
    if (!rc && !params)
        rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
    while (!rc) {
        long long hdr[2] = { 0, 0 };
        if ((rc = bcast_header(hdr, err)) || !hdr[0])
            break;
        size_t plen = hdr[1] > 0 && hdr[1] <= SWEEPMPI_MAX_PARAMS ? (size_t)hdr[1] : 0;
        if (!(rc = bcast_params(params, plen, err)))
            rc = serve_round(eval, ctx, params, plen, want ? want : 1, err);
    }
    free(params);
    if (!rc)
        MPI_Finalize();
    return rc;
}

typedef struct hand {
    size_t at, n;          /* the items out[at..at+n) this worker is evaluating */
} hand;

/* One message from a worker: store its lines, then give it the next chunk or end its round. */
static int take(const MPI_Status *st, char *buf, int len, hand *h, const uint64_t *items, size_t n, size_t *next,
                int *stopping, int (*done)(void *, size_t, const char *), void *dctx, char **out, cxl_err *err)
{
    int src = st->MPI_SOURCE, rc = 0;
    buf[len] = '\0';
    if (st->MPI_TAG == TAG_FAIL) {
        char *p = strchr(buf, '\n');
        long code = strtol(buf, NULL, 10);
        rc = cxl_errf(err, code < 0 && code >= CXL_EDEVICE ? (int)code : CXL_EINTERNAL, "rank %d: %s", src,
                      p ? p + 1 : buf);
        *stopping = 1;
        h->n = 0;
    } else {
        char *p = strchr(buf, '\n');
        size_t want = p ? strtoull(buf, NULL, 10) : 0;
        for (size_t j = 0; p && j < h->n && !rc; j++) {
            char *line = p + 1;
            if (!(p = strchr(line, '\n')))
                break;
            *p = '\0';
            if (!(out[h->at + j] = strdup(line)))
                rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            else if (!*stopping && done)
                rc = done(dctx, h->at + j, out[h->at + j]);
        }
        if (!rc && h->n && !p)
            rc = cxl_errf(err, CXL_EINTERNAL, "rank %d: fewer results than items in its chunk", src);
        *stopping |= rc != 0;
        h->n = 0;
        if (!*stopping && *next < n) {
            h->at = *next;
            h->n = want < 1 ? 1 : want < n - *next ? want : n - *next;
            *next += h->n;
        }
    }
    if (h->n > INT_MAX)
        h->n = INT_MAX;
    int mrc = MPI_Send(h->n ? items + h->at : NULL, (int)h->n, MPI_UINT64_T, src, TAG_WORK, MPI_COMM_WORLD);
    if (mrc != MPI_SUCCESS && !rc)
        rc = mpi_fail(err, "MPI_Send", mrc);
    return rc;
}

int sweepmpi_spread(const uint64_t *items, size_t n, const void *params, size_t plen,
                    int (*done)(void *dctx, size_t k, const char *line), void *dctx, char **out, cxl_err *err)
{
    int rank, size, rc = start(&rank, &size, err);
    if (rc)
        return rc;
    if (rank != 0 || size < 2)
        return cxl_errf(err, CXL_EINTERNAL, "sweepmpi_spread on rank %d of %d (rank 0 of several only)", rank, size);
    if (plen > SWEEPMPI_MAX_PARAMS)
        return cxl_errf(err, CXL_EINTERNAL, "sweepmpi_spread: %zu bytes of parameters (at most %d)", plen,
                        SWEEPMPI_MAX_PARAMS);
    long long hdr[2] = { 1, (long long)plen };
    if ((rc = bcast_header(hdr, err)) || (rc = bcast_params((void *)params, plen, err)))
        return rc;
    hand *h = calloc((size_t)size, sizeof *h);
    if (!h)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    size_t next = 0;
    int active = size - 1, stopping = 0, first = 0;
    char *buf = NULL;
    while (active > 0) {
        MPI_Status st;
        int len = 0, mrc, trc = probe_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, err);
        if (trc) {
            rc = rc ? rc : trc;
            break;                                          /* MPI itself failed: nothing more to talk about */
        }
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *b = realloc(buf, (size_t)len + 1);
        if (!b) {
            rc = rc ? rc : cxl_errf(err, CXL_ENOMEM, "out of memory");
            break;
        }
        buf = b;
        if ((mrc = MPI_Recv(buf, len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE))) {
            rc = rc ? rc : mpi_fail(err, "MPI_Recv", mrc);
            break;
        }
        cxl_err e2;
        cxl_err_clear(&e2);
        trc = take(&st, buf, len, &h[st.MPI_SOURCE], items, n, &next, &stopping, done, dctx, out, &e2);
        if (trc && !first)
            first = 1, rc = trc, *err = e2;
        if (!h[st.MPI_SOURCE].n)
            active--;
    }
    free(buf);
    free(h);
    return rc;
}

int sweepmpi_finish(cxl_err *err)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (!inited || fin)
        return 0;
    long long hdr[2] = { 0, 0 };
    int rc = bcast_header(hdr, err);
    MPI_Finalize();
    return rc;
}

#endif
