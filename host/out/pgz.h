/* pgz.h - a gzip stream compressed by several threads, as pigz does: the caller fills fixed-size blocks,
 * worker threads deflate each block on its own (raw deflate ending in a sync flush, so blocks join on
 * byte boundaries; the last one ends the stream), and the caller writes them to the output file in order
 * behind one gzip header, with the CRC-32 of the whole combined from the blocks' (crc32_combine) and the
 * length in the trailer (RFC 1952). The result is one ordinary gzip member: gzip -d, zlib, Python and
 * Perfetto read it. Blocks do not share a dictionary: about 1 % larger than one deflate stream for 1 MiB
 * blocks, and deterministic: the bytes do not depend on the number of threads or their timing.
 *
 * Memory: (workers + 2) blocks of PGZ_BLOCK bytes in and about as much out. Only the caller's thread
 * writes the file; errors (a write that fails, CXL_EIO; out of memory, CXL_ENOMEM) are returned by the
 * call that meets them, and every later call returns the same error. */
#ifndef CXLSIM_PGZ_H
#define CXLSIM_PGZ_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "out/outfile.h"

#define PGZ_BLOCK (1u << 20)

typedef struct pgz pgz;

/* Start the workers (1..16) and write the gzip header to f (which stays the caller's). */
int pgz_open(pgz **out, outfile *f, uint32_t workers, int level, cxl_err *err);
/* The next block to fill (PGZ_BLOCK bytes); may wait for a free one, writing finished blocks meanwhile.
 * NULL on error (err filled). */
char *pgz_block(pgz *z, cxl_err *err);
/* Hand over the block pgz_block returned, holding len bytes; last = 1 for the final block (then call
 * pgz_finish). */
int pgz_submit(pgz *z, size_t len, int last, cxl_err *err);
/* Write every block and the trailer. */
int pgz_finish(pgz *z, cxl_err *err);
/* Stop the workers and free (NULL is fine); the file is left to the caller. */
void pgz_free(pgz *z);

#endif
