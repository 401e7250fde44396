/* sweepjournal.c - the journal of a sweep in progress (sweepjournal.h). */
#define _POSIX_C_SOURCE 200809L
#include "explore/sweepjournal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "out/outfile.h"
#include "explore/sweeprow.h"

#define JOURNAL_HEADER "# cxlsim sweep journal: fingerprint %016llx, %zu points\n"

void sweepjournal_path(const char *out, char *buf, size_t sz)
{
    struct stat st;
    buf[0] = '\0';
    if (!out || outfile_is_stdout(out) || !strcmp(out, "/dev/stderr"))
        return;
    if (stat(out, &st) == 0 && !S_ISREG(st.st_mode))
        return;
    snprintf(buf, sz, "%s.partial", out);
}

/* The index of point p in sp->points (ascending), or -1. */
static long long index_of(const sweep_spec *sp, unsigned long long p)
{
    size_t lo = 0, hi = sp->npoints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->points[mid] == p)
            return (long long)mid;
        if (sp->points[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int sweepjournal_read(const char *path, const sweep_spec *sp, char **rows, size_t *got, cxl_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cxl_errf(err, CXL_EIO, "%s: cannot read the sweep's journal: %s", path, strerror(errno));
    char *line = NULL, want[128];
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    snprintf(want, sizeof want, JOURNAL_HEADER, (unsigned long long)sp->fingerprint, sp->npoints);
    int rc = 0;
    if (len < 0 || strcmp(line, want))
        rc = cxl_errf(err, CXL_ECONFIG, "%s: the journal of another sweep (or another version of this one: its "
                      "base, axes, values or filter differ); remove it to start afresh", path);
    size_t expect_cells = 1 + sp->naxes + (size_t)sweeprow_ncols(sp);
    while (!rc && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] != '\n')
            break;                         /* torn by an interruption: that point runs again */
        line[len - 1] = '\0';
        long long p = sweeprow_point(line), k = p < 0 ? -1 : index_of(sp, (unsigned long long)p);
        char **cells;
        int n = sweeprow_split(line, &cells);
        if (n < 0) {
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
            break;
        }
        free(cells);
        if (k < 0 || (size_t)n != expect_cells || rows[k])
            continue;
        if (!(rows[k] = strdup(line)))
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory");
        else
            (*got)++;
    }
    free(line);
    fclose(f);
    return rc;
}

int sweepjournal_open(const char *path, const sweep_spec *sp, FILE **out, cxl_err *err)
{
    struct stat st;
    int fresh = stat(path, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f)
        return cxl_errf(err, CXL_EIO, "%s: cannot write the sweep's journal: %s", path, strerror(errno));
    if (fresh && (fprintf(f, JOURNAL_HEADER, (unsigned long long)sp->fingerprint, sp->npoints) < 0 || fflush(f))) {
        fclose(f);
        return cxl_errf(err, CXL_EIO, "%s: cannot write the sweep's journal: %s", path, strerror(errno));
    }
    *out = f;
    return 0;
}

int sweepjournal_add(FILE *f, const char *path, const char *row, cxl_err *err)
{
    if (fputs(row, f) < 0 || fputc('\n', f) < 0 || fflush(f))
        return cxl_errf(err, CXL_EIO, "%s: cannot write the sweep's journal: %s", path, strerror(errno));
    return 0;
}
