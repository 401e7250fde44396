#define _POSIX_C_SOURCE 200809L
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* An existing file that is not a regular file: written in place. */
static int is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int outfile_check(const char *path, cxl_err *err)
{
    char dir[4096];
    if (!path[0])
        return cxl_errf(err, CXL_EIO, "empty output file name");
    if (is_special(path)) {
        if (access(path, W_OK))
            return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(errno));
        return 0;
    }
    dir_of(path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK))
        return cxl_errf(err, CXL_EIO, "cannot write '%s': folder '%s': %s", path, dir, strerror(errno));
    return 0;
}

int outfile_open(outfile *f, const char *path, cxl_err *err)
{
    f->fd = -1;
    f->tmp[0] = 0;
    f->direct = is_special(path);
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path)
        return cxl_errf(err, CXL_EIO, "cannot write '%.200s...': name too long", path);
    if (f->direct) {
        f->fd = open(path, O_WRONLY | O_CLOEXEC);
    } else {
        snprintf(f->tmp, sizeof f->tmp, "%s.tmpXXXXXX", path);
        f->fd = mkstemp(f->tmp);
    }
    if (f->fd < 0) {
        f->tmp[0] = 0;
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(errno));
    }
    return 0;
}

static int put_fail(outfile *f, int e, cxl_err *err)
{
    outfile_abort(f);
    return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", f->path, strerror(e));
}

int outfile_put(outfile *f, const void *data, size_t len, cxl_err *err)
{
    const char *p = data;
    size_t off = 0;
    if (f->fd < 0)
        return cxl_errf(err, CXL_EIO, "cannot write '%s': not open", f->path);
    while (off < len) {
        ssize_t n = write(f->fd, p + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return put_fail(f, errno, err);
        }
        off += (size_t)n;
    }
    return 0;
}

int outfile_commit(outfile *f, cxl_err *err)
{
    if (f->fd < 0)
        return cxl_errf(err, CXL_EIO, "cannot write '%s': not open", f->path);
    if (!f->direct && fchmod(f->fd, 0644))
        return put_fail(f, errno, err);
    int fd = f->fd;
    f->fd = -1;
    if (close(fd)) {
        int e = errno;
        if (!f->direct)
            unlink(f->tmp);
        f->tmp[0] = 0;
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", f->path, strerror(e));
    }
    if (!f->direct && rename(f->tmp, f->path)) {
        int e = errno;
        unlink(f->tmp);
        f->tmp[0] = 0;
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", f->path, strerror(e));
    }
    f->tmp[0] = 0;
    return 0;
}

void outfile_abort(outfile *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (!f->direct && f->tmp[0])
        unlink(f->tmp);
    f->tmp[0] = 0;
}

int outfile_write(const char *path, const char *data, size_t len, cxl_err *err)
{
    outfile f;
    int rc = outfile_open(&f, path, err);
    if (rc == 0)
        rc = outfile_put(&f, data, len, err);
    if (rc == 0)
        rc = outfile_commit(&f, err);
    return rc;
}
