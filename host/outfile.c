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

int outfile_check(const char *path, cxl_err *err)
{
    char dir[4096];
    if (!path[0])
        return cxl_errf(err, CXL_EIO, "empty output file name");
    dir_of(path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK))
        return cxl_errf(err, CXL_EIO, "cannot write '%s': folder '%s': %s", path, dir, strerror(errno));
    return 0;
}

int outfile_write(const char *path, const char *data, size_t len, cxl_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(e));
        }
        off += (size_t)n;
    }
    if (fchmod(fd, 0644) || close(fd)) {
        int e = errno;
        unlink(tmp);
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    if (rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return cxl_errf(err, CXL_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return 0;
}
