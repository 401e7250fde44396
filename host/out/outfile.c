/* outfile.c - output destinations as Unix tools handle them (outfile.h). */
#define _POSIX_C_SOURCE 200809L
#include "out/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum { OF_PATH = 4096, OF_TMP = OF_PATH + 16, OF_MAX_LINKS = 40 };

/* How a destination is written. */
enum of_kind {
    OF_STREAM,  /* standard output or error: the stdio stream, never closed here */
    OF_FD,      /* another inherited descriptor (/dev/fd/N): written, not closed */
    OF_DIRECT,  /* a device, FIFO or socket: opened and written in place */
    OF_TEMP     /* a regular file: temporary file, then rename */
};

struct outfile {
    enum of_kind kind;
    int fd;
    FILE *stream;
    int slot;                  /* pending-table slot of the temporary file (OF_TEMP) */
    int exists;                /* the regular target existed: keep its mode and owner */
    mode_t mode;
    uid_t uid;
    gid_t gid;
    char shown[OF_PATH];       /* the name the user gave, for messages */
    char target[OF_PATH];      /* after links */
    char tmp[OF_TMP];
};

/* Temporary files not yet renamed, for the signal handler (outfile.h says why this is global). A slot
 * is published by writing its path first and then setting its flag, and retired by clearing the flag. */
static char pending_path[OUTFILE_MAX_PENDING][OF_TMP];
static volatile sig_atomic_t pending_used[OUTFILE_MAX_PENDING];

static int pending_add(const char *tmp)
{
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++)
        if (!pending_used[i]) {
            snprintf(pending_path[i], sizeof pending_path[i], "%s", tmp);
            atomic_signal_fence(memory_order_seq_cst); /* the path is complete before the flag is seen */
            pending_used[i] = 1;
            return i;
        }
    return -1;
}

static void pending_drop(int slot)
{
    if (slot >= 0)
        pending_used[slot] = 0;
}

static void on_signal(int sig)
{
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++)
        if (pending_used[i])
            unlink(pending_path[i]);
    raise(sig); /* SA_RESETHAND restored the default action: the process dies of sig once we return */
}

static const int handled_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* Hold the handled signals while a temporary file exists but is not yet in the pending table (or is
 * already out of it), so that the handler never misses a file: a signal that arrives in between is
 * delivered when the mask is restored, with the table up to date. */
static void hold_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof handled_sigs / sizeof handled_sigs[0]; i++)
        sigaddset(&set, handled_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void release_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

void outfile_install_signal_handlers(void)
{
    for (size_t i = 0; i < sizeof handled_sigs / sizeof handled_sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(handled_sigs[i], NULL, &old) || old.sa_handler == SIG_IGN)
            continue; /* keep what nohup and the like asked for */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        sigaction(handled_sigs[i], &sa, NULL);
    }
}

/* The descriptor a name stands for ("-", /dev/stdout, /dev/fd/N, /proc/self/fd/N), or -1. */
static int std_fd(const char *path)
{
    if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    const char *n = !strncmp(path, "/dev/fd/", 8) ? path + 8 : !strncmp(path, "/proc/self/fd/", 14) ? path + 14
                                                                                                       : NULL;
    if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 6)
        return -1;
    return atoi(n);
}

static int io_err(cxl_err *err, const char *path, const char *what, int e)
{
    return cxl_errf(err, CXL_EIO, "cannot write '%s': %s%s%s", path, what, *what ? ": " : "", strerror(e));
}

/* Follow symbolic links one at a time, so a link to a file not yet there names that file. A link that
 * leads to a descriptor's name (/dev/stdout -> /proc/self/fd/1) stops there: *fd is that descriptor
 * (else -1), since what /proc shows beyond it ("pipe:[123]") is no file name. */
static int resolve_links(const char *path, char *out, int *fd, cxl_err *err)
{
    char cur[OF_PATH], link[OF_PATH];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hop = 0;; hop++) {
        struct stat st;
        if ((*fd = std_fd(cur)) >= 0 || lstat(cur, &st) || !S_ISLNK(st.st_mode))
            break;
        if (hop == OF_MAX_LINKS)
            return io_err(err, path, "", ELOOP);
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return io_err(err, path, "reading the link", errno);
        link[n] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else {
            char *slash = strrchr(cur, '/');
            char dir[OF_PATH];
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cur + 1) : 0, cur);
            if (snprintf(cur, sizeof cur, "%s%s", dir, link) >= (int)sizeof cur)
                return io_err(err, path, "", ENAMETOOLONG);
        }
    }
    snprintf(out, OF_PATH, "%s", cur);
    return 0;
}

int outfile_is_stdout(const char *path)
{
    char target[OF_PATH];
    int fd;
    cxl_err ignored;
    return path && !resolve_links(path, target, &fd, &ignored) && fd == 1;
}

static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* Resolve path into f (kind, target, the existing file's mode and owner); check what outfile.h refuses. */
static int classify(const char *path, struct outfile *f, cxl_err *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->slot = -1;
    if (!path || !path[0])
        return cxl_errf(err, CXL_EIO, "empty output file name");
    snprintf(f->shown, sizeof f->shown, "%s", path);
    int fd;
    int rc = resolve_links(path, f->target, &fd, err);
    if (rc)
        return rc;
    if (fd >= 0) {
        f->kind = fd == 1 || fd == 2 ? OF_STREAM : OF_FD;
        f->fd = fd;
        f->stream = fd == 1 ? stdout : fd == 2 ? stderr : NULL;
        if (f->kind == OF_FD && fcntl(fd, F_GETFD) < 0)
            return io_err(err, path, "descriptor not open", errno);
        return 0;
    }
    struct stat st;
    if (stat(f->target, &st)) {
        if (errno != ENOENT)
            return io_err(err, path, "", errno);
        f->kind = OF_TEMP;
        mode_t mask = umask(0);
        umask(mask);
        f->mode = 0666 & ~mask;
        return 0;
    }
    if (S_ISDIR(st.st_mode))
        return cxl_errf(err, CXL_EIO, "cannot write '%s': it is a folder; name a file in it, e.g. '%s/out.json'",
                        path, path);
    if (!S_ISREG(st.st_mode)) {
        f->kind = OF_DIRECT;
        if (access(f->target, W_OK))
            return io_err(err, path, "", errno);
        return 0;
    }
    f->kind = OF_TEMP;
    f->exists = 1;
    f->mode = st.st_mode & 07777;
    f->uid = st.st_uid;
    f->gid = st.st_gid;
    if (!(st.st_mode & 0222))
        return cxl_errf(err, CXL_EIO, "cannot write '%s': the file is read-only (mode %04o) and is not replaced; "
                        "make it writable (chmod u+w) or remove it", path, (unsigned)f->mode);
    if (access(f->target, W_OK))
        return io_err(err, path, "", errno);
    return 0;
}

/* Create the temporary file beside the target. */
static int make_temp(struct outfile *f, cxl_err *err)
{
    if (snprintf(f->tmp, sizeof f->tmp, "%s.tmpXXXXXX", f->target) >= (int)sizeof f->tmp)
        return io_err(err, f->shown, "", ENAMETOOLONG);
    f->fd = mkstemp(f->tmp);
    if (f->fd < 0) {
        int e = errno;
        char dir[OF_PATH];
        dir_of(f->target, dir, sizeof dir);
        return cxl_errf(err, CXL_EIO, "cannot write '%s': cannot create a file in folder '%s': %s", f->shown, dir,
                        strerror(e));
    }
    return 0;
}

int outfile_check(const char *path, cxl_err *err)
{
    struct outfile f;
    int rc = classify(path, &f, err);
    if (rc || f.kind != OF_TEMP)
        return rc;
    sigset_t held;
    hold_signals(&held);
    rc = make_temp(&f, err);
    if (!rc) {
        close(f.fd);
        unlink(f.tmp);
    }
    release_signals(&held);
    return rc;
}

/* Identity of a file for comparison: its device and inode, or its resolved name when it does not exist. */
typedef struct of_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char name[OF_PATH];
} of_id;

/* Returns the descriptor the path leads to, or -1 (resolve_links). */
static int identify(const char *path, of_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    cxl_err ignored;
    int fd;
    if (resolve_links(path, id->name, &fd, &ignored))
        snprintf(id->name, sizeof id->name, "%s", path);
    if (!stat(path, &st)) {
        id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
    }
    return fd;
}

static int same_id(const of_id *a, const of_id *b)
{
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino;
    return !a->exists && !b->exists && !strcmp(a->name, b->name);
}

int outfile_check_inputs(const char *const *outputs, size_t nout, const char *const *inputs, size_t nin,
                         cxl_err *err)
{
    for (size_t i = 0; i < nout; i++) {
        if (!outputs[i])
            continue;
        of_id o;
        int fd = identify(outputs[i], &o);
        for (size_t j = 0; j < i; j++) {
            if (!outputs[j])
                continue;
            of_id p;
            int fd2 = identify(outputs[j], &p);
            if ((fd >= 0 && fd == fd2) || (fd < 0 && fd2 < 0 && same_id(&o, &p)))
                return cxl_errf(err, CXL_EIO, "outputs '%s' and '%s' are the same file; give each its own",
                                outputs[j], outputs[i]);
        }
        if (fd >= 0 || !o.exists)
            continue; /* an input exists: a missing output cannot be one */
        for (size_t j = 0; j < nin; j++) {
            if (!inputs[j])
                continue;
            of_id in;
            identify(inputs[j], &in);
            if (in.exists && same_id(&o, &in))
                return cxl_errf(err, CXL_EIO, "output '%s' is the input '%s'; writing it would destroy the input",
                                outputs[i], inputs[j]);
        }
    }
    return 0;
}

/* A socket is written by connecting to it (open() refuses sockets). */
static int open_socket(const char *path)
{
    struct sockaddr_un a;
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (connect(s, (const struct sockaddr *)&a, sizeof a)) {
        int e = errno;
        close(s);
        errno = e;
        return -1;
    }
    return s;
}

int outfile_open(const char *path, outfile **out, cxl_err *err)
{
    *out = NULL;
    struct outfile *f = malloc(sizeof *f);
    if (!f)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    int rc = classify(path, f, err);
    if (!rc && f->kind == OF_DIRECT) {
        struct stat st;
        f->fd = !stat(f->target, &st) && S_ISSOCK(st.st_mode) ? open_socket(f->target)
                                                             : open(f->target, O_WRONLY | O_NOCTTY);
        if (f->fd < 0)
            rc = io_err(err, path, "", errno);
    } else if (!rc && f->kind == OF_TEMP) {
        sigset_t held;
        hold_signals(&held);
        rc = make_temp(f, err);
        if (!rc && (f->slot = pending_add(f->tmp)) < 0) {
            close(f->fd);
            unlink(f->tmp);
            rc = cxl_errf(err, CXL_EINTERNAL, "more than %d output files open at once", OUTFILE_MAX_PENDING);
        }
        release_signals(&held);
    }
    if (rc) {
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int outfile_put(outfile *f, const void *data, size_t len, cxl_err *err)
{
    if (f->stream) {
        errno = 0;
        if (len && fwrite(data, 1, len, f->stream) != len)
            return io_err(err, f->shown, "", errno ? errno : EIO);
        return 0;
    }
    const char *p = data;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(f->fd, p + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return io_err(err, f->shown, "", errno);
        }
        off += (size_t)n;
    }
    return 0;
}

void outfile_abort(outfile *f)
{
    if (!f)
        return;
    if (f->kind == OF_TEMP || f->kind == OF_DIRECT)
        close(f->fd);
    if (f->kind == OF_TEMP) {
        unlink(f->tmp);
        pending_drop(f->slot);
    }
    free(f);
}

const char *outfile_file(const outfile *f)
{
    return f->kind == OF_TEMP ? f->tmp : f->kind == OF_DIRECT ? f->target : NULL;
}

int outfile_commit(outfile *f, cxl_err *err)
{
    int rc = 0;
    switch (f->kind) {
    case OF_STREAM:
        if (fflush(f->stream) || ferror(f->stream))
            rc = io_err(err, f->shown, "", errno ? errno : EIO);
        break;
    case OF_FD:
        break;
    case OF_DIRECT:
        rc = close(f->fd) ? io_err(err, f->shown, "", errno) : 0;
        break;
    case OF_TEMP:
        if (fchmod(f->fd, f->mode))
            rc = io_err(err, f->shown, "", errno);
        if (!rc && f->exists && geteuid() == 0 && fchown(f->fd, f->uid, f->gid)) {
            /* best effort: a file system without owners (vfat) still gets the contents */
        }
        if (close(f->fd) && !rc)
            rc = io_err(err, f->shown, "", errno);
        if (!rc && rename(f->tmp, f->target))
            rc = io_err(err, f->shown, "", errno);
        if (rc)
            unlink(f->tmp);
        pending_drop(f->slot);
        break;
    }
    free(f);
    return rc;
}

int outfile_write(const char *path, const char *data, size_t len, cxl_err *err)
{
    outfile *f;
    int rc = outfile_open(path, &f, err);
    if (rc)
        return rc;
    rc = outfile_put(f, data, len, err);
    if (rc) {
        outfile_abort(f);
        return rc;
    }
    return outfile_commit(f, err);
}

int outfile_finish_all(outfile **f, size_t n, int rc, cxl_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!f[i])
            continue;
        if (rc)
            outfile_abort(f[i]);
        else
            rc = outfile_commit(f[i], err);
        f[i] = NULL;
    }
    return rc;
}

int outfile_write_all(const char *const *paths, const char *const *data, const size_t *lens, size_t n,
                      cxl_err *err)
{
    outfile *f[OUTFILE_MAX_PENDING] = { NULL };
    if (n > OUTFILE_MAX_PENDING)
        return cxl_errf(err, CXL_EINTERNAL, "more than %d output files at once", OUTFILE_MAX_PENDING);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (paths[i] && !(rc = outfile_open(paths[i], &f[i], err)))
            rc = outfile_put(f[i], data[i], lens[i], err);
    return outfile_finish_all(f, n, rc, err);
}

int outfile_close_stdout(cxl_err *err)
{
    errno = 0;
    int bad = ferror(stdout);
    if (fflush(stdout))
        bad = 1;
    int e = errno;
    if (fclose(stdout) && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad)
        return 0;
    return cxl_errf(err, CXL_EIO, "cannot write standard output: %s", e ? strerror(e) : "write error");
}
