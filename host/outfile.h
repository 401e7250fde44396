/* outfile.h - write a whole output file atomically: into a temporary file beside it, then rename, so
 * a failed run never leaves a partial or truncated file behind. */
#ifndef CXLSIM_OUTFILE_H
#define CXLSIM_OUTFILE_H

#include <stddef.h>

#include "err.h"

/* Check up front that `path` can be created (its folder exists and is writable); CXL_EIO otherwise. */
int outfile_check(const char *path, cxl_err *err);
/* Write len bytes to path atomically; CXL_EIO on failure (nothing left behind). */
int outfile_write(const char *path, const char *data, size_t len, cxl_err *err);

#endif
