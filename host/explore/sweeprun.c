/* sweeprun.c - a pool of forked workers, one per point (sweeprun.h). */
#define _POSIX_C_SOURCE 200809L
#include "explore/sweeprun.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "explore/sweepmpi.h"
#include "explore/sweeprow.h"

typedef struct slot {
    pid_t pid;
    int fd;             /* the read end of the worker's pipe; -1 when the slot is free */
    size_t k;           /* the index into todo */
    char *buf;
    size_t len, cap;
} slot;

/* The worker: evaluate, write the row and a newline, exit. Never returns. */
static void worker(const sweep_spec *sp, const sweeprun_opts *o, uint64_t point, int fd)
{
    if (o->crash_point == (long long)point)
        abort();                 /* the tests' stand-in for a bug that kills a worker */
    char *row = sweeprow_eval(sp, o->global, point);
    int ok = row != NULL;
    size_t len = row ? strlen(row) : 0, off = 0;
    while (ok && off < len) {
        ssize_t w = write(fd, row + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += w > 0 ? (size_t)w : 0;
    }
    ok = ok && write(fd, "\n", 1) == 1;
    _exit(ok ? 0 : 3);
}

static int start(const sweep_spec *sp, const sweeprun_opts *o, const uint64_t *todo, size_t k, slot *s,
                 cxl_err *err)
{
    int p[2];
    if (pipe(p))
        return cxl_errf(err, CXL_EINTERNAL, "sweep: cannot make a pipe for a worker: %s", strerror(errno));
    fflush(NULL);   /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return cxl_errf(err, CXL_EINTERNAL, "sweep: cannot start a worker: %s", strerror(e));
    }
    if (pid == 0) {
        close(p[0]);
        worker(sp, o, todo[k], p[1]);
    }
    close(p[1]);
    s->pid = pid;
    s->fd = p[0];
    s->k = k;
    s->len = 0;
    return 0;
}

/* Read what the worker wrote; 1 at the end of its output, 0 for more later, CXL_ENOMEM. */
static int drain(slot *s)
{
    char tmp[4096];
    ssize_t r = read(s->fd, tmp, sizeof tmp);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : 1;
    if (r == 0)
        return 1;
    if (s->len + (size_t)r + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + (size_t)r + 1)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b)
            return CXL_ENOMEM;
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, tmp, (size_t)r);
    s->len += (size_t)r;
    s->buf[s->len] = '\0';
    return 0;
}

/* The worker's row once it has ended: its own, or one saying how it died. */
static char *reap(const sweep_spec *sp, const uint64_t *todo, slot *s)
{
    int st = 0;
    while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
        ;
    close(s->fd);
    s->fd = -1;
    char why[160];
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && s->len && s->buf[s->len - 1] == '\n' &&
        sweeprow_point(s->buf) == (long long)todo[s->k]) {
        s->buf[--s->len] = '\0';
        return strdup(s->buf);
    }
    if (WIFSIGNALED(st)) {
        snprintf(why, sizeof why, "the worker process of this point died of signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
        return sweeprow_failed(sp, todo[s->k], "crashed", why);
    }
    snprintf(why, sizeof why, "the worker process of this point exited with status %d without a result",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return sweeprow_failed(sp, todo[s->k], "error", why);
}

static void stop_all(slot *s, int jobs)
{
    for (int i = 0; i < jobs; i++)
        if (s[i].fd >= 0) {
            kill(s[i].pid, SIGKILL);
            while (waitpid(s[i].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            close(s[i].fd);
        }
}

/* The pool of this process (and, under MPI, of each worker rank). */
static int run_local(const sweep_spec *sp, const uint64_t *todo, size_t n, const sweeprun_opts *o, char **rows,
                     cxl_err *err)
{
    int jobs = o->jobs < 1 ? 1 : o->jobs > SWEEPRUN_MAX_JOBS ? SWEEPRUN_MAX_JOBS : o->jobs;
    slot *s = calloc((size_t)jobs, sizeof *s);
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    int rc = s && pf ? 0 : cxl_errf(err, CXL_ENOMEM, "out of memory");
    for (int i = 0; s && i < jobs; i++)
        s[i].fd = -1;
    size_t next = 0, finished = 0;
    while (!rc && finished < n) {
        for (int i = 0; i < jobs && next < n && !rc; i++)
            if (s[i].fd < 0)
                rc = start(sp, o, todo, next++, &s[i], err);
        int np = 0;
        for (int i = 0; i < jobs; i++)
            if (s[i].fd >= 0) {
                pf[np].fd = s[i].fd;
                pf[np].events = POLLIN;
                pf[np++].revents = 0;
            }
        if (rc || poll(pf, (nfds_t)np, -1) < 0) {
            if (!rc && errno == EINTR)
                continue;
            rc = rc ? rc : cxl_errf(err, CXL_EINTERNAL, "sweep: poll: %s", strerror(errno));
            break;
        }
        for (int i = 0, j = 0; i < jobs && !rc; i++) {
            if (s[i].fd < 0)
                continue;
            short ev = pf[j++].revents;
            if (!ev)
                continue;
            int d = drain(&s[i]);
            if (d < 0)
                rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            if (d != 1)
                continue;
            size_t k = s[i].k;
            if (!(rows[k] = reap(sp, todo, &s[i])))
                rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            finished++;
            if (!rc && o->done)
                rc = o->done(o->ctx, k, rows[k]);
        }
    }
    if (s)
        stop_all(s, jobs);
    for (int i = 0; s && i < jobs; i++)
        free(s[i].buf);
    free(s);
    free(pf);
    return rc;
}

/* ---- MPI (sweepmpi.h): rank 0 hands the points out, every other rank runs them on its own pool ---- */

/* What rank 0 tells the workers: the sweep it loaded (a worker that loaded another one refuses) and the
 * tests' crash hook. */
typedef struct mpi_params {
    uint64_t fingerprint;
    long long crash_point;
} mpi_params;

typedef struct serve_ctx {
    const sweep_spec *sp;
    const override_list *global;
    int jobs;
} serve_ctx;

static int serve_eval(void *ctx, const void *params, size_t plen, const uint64_t *items, size_t n, char **out,
                      cxl_err *err)
{
    const serve_ctx *c = ctx;
    mpi_params p;
    if (plen != sizeof p)
        return cxl_errf(err, CXL_EINTERNAL, "sweep: %zu bytes of parameters from rank 0, expected %zu", plen,
                        sizeof p);
    memcpy(&p, params, sizeof p);
    if (p.fingerprint != c->sp->fingerprint)
        return cxl_errf(err, CXL_ECONFIG, "sweep: %s is another sweep here than on rank 0 (its base, axes, values, "
                        "filter or --set differ): every rank must read the same files", c->sp->path);
    for (size_t i = 0; i < n; i++)
        if (items[i] >= c->sp->product)
            return cxl_errf(err, CXL_EINTERNAL, "sweep: point %llu from rank 0 is beyond the sweep's %llu",
                            (unsigned long long)items[i], (unsigned long long)c->sp->product);
    sweeprun_opts o = { c->jobs, c->global, NULL, NULL, p.crash_point };
    return run_local(c->sp, items, n, &o, out, err);
}

int sweeprun_mpi_serve(const sweep_spec *sp, const override_list *global, int jobs, cxl_err *err)
{
    sweepmpi_launch l;
    sweepmpi_launch_get(&l);
    int rc = sweepmpi_require(&l, "sweep", err);
    if (rc || l.size < 2)
        return rc;
    if (l.rank == 0)
        return sweepmpi_start(err);          /* a job without the launcher's ranks fails before any output */
    serve_ctx c = { sp, global, jobs < 1 ? 1 : jobs > SWEEPRUN_MAX_JOBS ? SWEEPRUN_MAX_JOBS : jobs };
    if ((rc = sweepmpi_serve(serve_eval, &c, (size_t)c.jobs, err)))
        return rc;
    exit(0);
}

int sweeprun_run(const sweep_spec *sp, const uint64_t *todo, size_t n, const sweeprun_opts *o, char **rows,
                 cxl_err *err)
{
    sweepmpi_launch l;
    sweepmpi_launch_get(&l);
    if (l.size < 2 || !sweepmpi_built())
        return run_local(sp, todo, n, o, rows, err);
    if (l.rank != 0)
        return cxl_errf(err, CXL_EINTERNAL, "sweep: rank %d ran the sweep itself (sweeprun_mpi_serve first)", l.rank);
    mpi_params p = { sp->fingerprint, o->crash_point };
    int rc = sweepmpi_spread(todo, n, &p, sizeof p, o->done, o->ctx, rows, err);
    return rc ? rc : sweepmpi_finish(err);
}
