/* sweepjournal.h - the journal of a sweep in progress, from which `cxlsim sweep --resume` continues.
 *
 * A sweep's outputs are written all at once at the end (outfile.h: all or none), so the points finished
 * so far are kept in a journal beside the first output that is a regular file: OUT.partial, one row
 * (sweeprow.h) per line in the order points finish, after a header line that names the sweep's
 * fingerprint (sweep.h) and point count. Each row is flushed as it is written, so an interrupted sweep
 * (a signal, a power cut) loses at most the points in flight; a torn last line is ignored on reading.
 * The journal is removed once the outputs are in place.
 */
#ifndef CXLSIM_SWEEPJOURNAL_H
#define CXLSIM_SWEEPJOURNAL_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"
#include "explore/sweep.h"

/* The journal's path for output out (NULL, standard output, a device or a FIFO: none, buf ""). */
void sweepjournal_path(const char *out, char *buf, size_t sz);
/* Read the journal at path into rows[k] (k: index into sp->points; rows already set are kept), counting
 * them in *got. CXL_EIO when it cannot be read, CXL_ECONFIG when it belongs to another sweep. */
int sweepjournal_read(const char *path, const sweep_spec *sp, char **rows, size_t *got, cxl_err *err);
/* Open for appending (a new journal gets its header). */
int sweepjournal_open(const char *path, const sweep_spec *sp, FILE **f, cxl_err *err);
/* Append one row and flush it. */
int sweepjournal_add(FILE *f, const char *path, const char *row, cxl_err *err);

#endif
