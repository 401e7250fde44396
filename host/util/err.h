/* err.h - the error record every library function fills, and the exit codes of cxlsim.
 *
 * Library code never prints and never exits on bad input: it returns a negative CXL_E* code and fills a
 * cxl_err with a human-readable message (and, for configuration errors, file:line:column). Only main()
 * turns codes into exit statuses (see cxl_exit_code()).
 */
#ifndef CXLSIM_ERR_H
#define CXLSIM_ERR_H

#include <stdarg.h>

enum {
    CXL_OK = 0,
    CXL_EINTERNAL = -1, /* a bug or an impossible state: exit 1 */
    CXL_EUSAGE = -2,    /* bad command line: exit 2 */
    CXL_ECONFIG = -3,   /* bad configuration file or value: exit 3 */
    CXL_EBACKEND = -4,  /* backend not built in, or failed to open: exit 4 */
    CXL_EIO = -5,       /* an output or input file could not be read or written: exit 5 */
    CXL_ENOMEM = -6,    /* out of memory: exit 6 */
    CXL_ELIMIT = -7,    /* a request the model cannot serve (too many requesters, tags, ...): exit 7 */
    CXL_EDEVICE = -9    /* the hardware behind a backend failed: no FPGA card, xclbin refused or without
                           the kernel, a kernel run that failed or timed out: exit 9 (8 is compare's
                           "backends differ") */
};

typedef struct cxl_err {
    int code;           /* one of CXL_E*, 0 when no error */
    char file[512];     /* configuration file, "" when not applicable */
    int line, col;      /* 1-based; 0 when not applicable */
    char msg[1024];     /* what went wrong and what would be valid */
} cxl_err;

void cxl_err_clear(cxl_err *e);
/* Fill e (if non-NULL) and return code. */
int cxl_errf(cxl_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same, with a location in a file (line and col 1-based). */
int cxl_errf_at(cxl_err *e, int code, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "file:line:col: msg" or "msg" into buf. */
void cxl_err_format(const cxl_err *e, char *buf, unsigned long bufsz);
/* Process exit status for a CXL_E* code (0 for CXL_OK). */
int cxl_exit_code(int code);

#endif
