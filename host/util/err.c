#include "util/err.h"

#include <stdio.h>
#include <string.h>

void cxl_err_clear(cxl_err *e)
{
    if (e)
        memset(e, 0, sizeof *e);
}

static void err_vset(cxl_err *e, int code, const char *file, int line, int col, const char *fmt, va_list ap)
{
    e->code = code;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    e->line = line;
    e->col = col;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

int cxl_errf(cxl_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(e, code, NULL, 0, 0, fmt, ap);
        va_end(ap);
    }
    return code;
}

int cxl_errf_at(cxl_err *e, int code, const char *file, int line, int col, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(e, code, file, line, col, fmt, ap);
        va_end(ap);
    }
    return code;
}

void cxl_err_format(const cxl_err *e, char *buf, unsigned long bufsz)
{
    if (e->file[0] && e->line > 0)
        snprintf(buf, bufsz, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
    else if (e->file[0])
        snprintf(buf, bufsz, "%s: %s", e->file, e->msg);
    else
        snprintf(buf, bufsz, "%s", e->msg);
}

int cxl_exit_code(int code)
{
    switch (code) {
    case CXL_OK: return 0;
    case CXL_EUSAGE: return 2;
    case CXL_ECONFIG: return 3;
    case CXL_EBACKEND: return 4;
    case CXL_EIO: return 5;
    case CXL_ENOMEM: return 6;
    case CXL_ELIMIT: return 7;
    case CXL_EDEVICE: return 9;
    default: return 1;
    }
}
