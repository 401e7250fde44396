/* outfile.h - output files written so that a failed run leaves nothing behind.
 *
 * A regular file (or a name that does not exist yet) is written into a temporary file beside it, then
 * renamed over it on commit, so a failed or abandoned write never leaves a partial or truncated file and
 * the old file stays as it was. An existing file that is not a regular file (a character device such as
 * /dev/null or /dev/full, a FIFO, a socket) is opened and written directly: there is nothing to rename,
 * and replacing it would be wrong.
 *
 * Two ways in: outfile_write for a whole buffer, or outfile_open / outfile_put / outfile_commit (or
 * outfile_abort) for output streamed as it is produced (the Chrome trace). Every write and the final
 * close are checked; errors are CXL_EIO naming the path and the system's reason. */
#ifndef CXLSIM_OUTFILE_H
#define CXLSIM_OUTFILE_H

#include <stddef.h>

#include "err.h"

/* Check up front that `path` can be created (its folder exists and is writable) or, for an existing
 * file that is not a regular file, opened for writing; CXL_EIO otherwise. */
int outfile_check(const char *path, cxl_err *err);
/* Write len bytes to path atomically; CXL_EIO on failure (nothing left behind). */
int outfile_write(const char *path, const char *data, size_t len, cxl_err *err);

/* A file being streamed. */
typedef struct outfile {
    int fd;             /* -1 when closed */
    int direct;         /* written in place (not a regular file): no temporary, no rename */
    char path[4096];
    char tmp[4200];
} outfile;

/* Open path for streaming (the temporary beside it, or the file itself when direct). */
int outfile_open(outfile *f, const char *path, cxl_err *err);
/* Append len bytes; on error the file is aborted (nothing left behind) and CXL_EIO returned. */
int outfile_put(outfile *f, const void *data, size_t len, cxl_err *err);
/* Close and rename the temporary over path; on error nothing is left behind. */
int outfile_commit(outfile *f, cxl_err *err);
/* Close and remove the temporary (no-op when already closed). */
void outfile_abort(outfile *f);

#endif
