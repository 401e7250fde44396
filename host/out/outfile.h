/* outfile.h - output files handled as Unix tools handle them.
 *
 * Every output option of cxlsim (--json, --csv, --trace, --out, --save-trace) names its destination
 * through this module. A destination is, after resolution:
 *   "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1   standard output (/dev/stderr and fd 2: standard error)
 *   a symbolic link                                the file it points to, resolved link by link (a link
 *                                                  to a missing file creates that file); the link stays
 *   a character device, FIFO or socket             written directly: no temporary file, no rename
 *   a regular file, or a name that does not exist  written to a temporary file `NAME.tmpXXXXXX` in the
 *                                                  target's folder, then renamed over the target, so a
 *                                                  failed run leaves the old file untouched; an existing
 *                                                  file keeps its mode (and, for root, its owner); a new
 *                                                  one gets 0666 less the umask
 * Refused, with CXL_EIO: a folder; an existing file without any write permission bit (0444: it is not
 * replaced, even by root); a folder where no file can be created; a name equal to one of the run's
 * inputs (outfile_check_inputs). Hard links to a replaced regular file keep the old contents.
 *
 * Temporary files of a run are registered in a fixed table, and outfile_install_signal_handlers() makes
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE unlink them (async-signal-safe: unlink only) before the process
 * dies of the signal. That table is the one piece of process-wide state in the host: a signal handler
 * has no other way to reach it. At most OUTFILE_MAX_PENDING files are open at once.
 *
 * Every write is checked, and the last flush and close of standard output too (outfile_close_stdout):
 * a full disk or /dev/full is CXL_EIO. Functions return 0 or a negative CXL_E* code and fill err.
 */
#ifndef CXLSIM_OUTFILE_H
#define CXLSIM_OUTFILE_H

#include <stddef.h>

#include "util/err.h"

#define OUTFILE_MAX_PENDING 8

typedef struct outfile outfile;

/* Pre-flight check before a run: the destination can be written as described above (for a regular
 * file: a temporary file is created in its folder and removed again). Starts nothing that blocks: a
 * FIFO is only checked for permission. */
int outfile_check(const char *path, cxl_err *err);
/* Refuse an output that is one of the inputs (the same file after links, or the same name), or that
 * appears twice among outputs. outputs and inputs: arrays of n paths whose NULL entries are skipped. */
int outfile_check_inputs(const char *const *outputs, size_t nout, const char *const *inputs, size_t nin,
                         cxl_err *err);
/* 1 when path is standard output ("-", /dev/stdout, /dev/fd/1, /proc/self/fd/1), else 0. */
int outfile_is_stdout(const char *path);

/* Start writing, for output streamed as it is produced (the Chrome trace) or a whole buffer: a temporary
 * file (registered for the signal handlers) for a regular file, the destination itself otherwise. */
int outfile_open(const char *path, outfile **out, cxl_err *err);
/* Append len bytes (every short write retried, every error reported). */
int outfile_put(outfile *f, const void *data, size_t len, cxl_err *err);
/* Finish: flush, set the mode, close, rename over the target. Frees f, also on failure (and then
 * removes the temporary file). */
int outfile_commit(outfile *f, cxl_err *err);
/* The file that f writes, for a writer that opens it by name (the FST waveform): the temporary file of
 * a regular destination, the destination itself for a device or FIFO; NULL for standard output. */
const char *outfile_file(const outfile *f);
/* Give up: close and remove the temporary file (a direct destination keeps what was written). Frees f;
 * NULL is a no-op. */
void outfile_abort(outfile *f);
/* The three above for one buffer. */
int outfile_write(const char *path, const char *data, size_t len, cxl_err *err);

/* The end of a run's open outputs f[0..n-1] (NULL entries skipped): when rc is 0, each committed in
 * turn, and after a failure the rest aborted; when rc is not 0, all aborted. Every entry is freed and
 * set to NULL. Returns rc or the first commit's error. */
int outfile_finish_all(outfile **f, size_t n, int rc, cxl_err *err);
/* Several outputs of one run: every one is written in full before any is renamed into place, so that
 * a failure writing one leaves none of them behind. NULL paths are skipped; n <= OUTFILE_MAX_PENDING. */
int outfile_write_all(const char *const *paths, const char *const *data, const size_t *lens, size_t n,
                      cxl_err *err);

/* Flush and close standard output, reporting a failed write or close (the caller exits 5). */
int outfile_close_stdout(cxl_err *err);
/* Unlink pending temporary files on SIGINT, SIGTERM, SIGHUP, SIGPIPE, then die of the signal. */
void outfile_install_signal_handlers(void);

#endif
