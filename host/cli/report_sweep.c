/* report_sweep.c - `cxlsim sweep`'s rows and summary (report_sweep.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_sweep.h"

#include <stdlib.h>
#include <string.h>

#include "out/outfile.h"
#include "explore/sweeprow.h"

int report_sweep_write(const sweep_spec *sp, char **rows, const char *csv, const char *jsonl, cxl_err *e)
{
    char *buf[2] = { NULL, NULL };
    size_t len[2] = { 0, 0 };
    FILE *m[2] = { csv ? open_memstream(&buf[0], &len[0]) : NULL, jsonl ? open_memstream(&buf[1], &len[1]) : NULL };
    int bad = (csv && !m[0]) || (jsonl && !m[1]);
    if (m[0])
        sweeprow_csv_header(m[0], sp);
    for (size_t k = 0; k < sp->npoints && !bad; k++) {
        if (m[0])
            bad |= sweeprow_csv(m[0], sp, rows[k]) != 0;
        if (m[1])
            bad |= sweeprow_jsonl(m[1], sp, rows[k]) != 0;
    }
    for (int i = 0; i < 2; i++)
        if (m[i])
            bad |= fclose(m[i]) != 0;
    const char *paths[2], *data[2];
    size_t lens[2], n = 0;
    if (csv)
        paths[n] = csv, data[n] = buf[0], lens[n++] = len[0];
    if (jsonl)
        paths[n] = jsonl, data[n] = buf[1], lens[n++] = len[1];
    int rc = bad ? cxl_errf(e, CXL_ENOMEM, "out of memory writing the sweep's rows")
                 : outfile_write_all(paths, data, lens, n, e);
    free(buf[0]);
    free(buf[1]);
    return rc;
}

static const char *const statuses[] = { "ok", "invalid", "infeasible", "error", "crashed" };

/* Count the points by status (count[5]) and keep the best ok points, by (key, point): O(points x best),
 * stable. Returns how many are in ok[]. */
static size_t rank_points(const sweep_spec *sp, char **rows, size_t count[5], size_t *ok, double *key)
{
    size_t nok = 0;
    int col = 1 + (int)sp->naxes + sweeprow_rank_column(sp);
    for (size_t k = 0; k < sp->npoints; k++) {
        char **c;
        if (sweeprow_split(rows[k], &c) < 0)
            continue;
        for (int i = 0; i < 5; i++)
            if (!strcmp(c[1 + sp->naxes], statuses[i]))
                count[i]++;
        if (ok && key && !strcmp(c[1 + sp->naxes], "ok")) {
            double v = strtod(c[col], NULL);
            size_t at = nok < sp->best ? nok : sp->best;
            while (at > 0 && key[at - 1] > v)
                at--;
            if (at < sp->best) {
                size_t last = nok < sp->best ? nok : sp->best - 1;
                memmove(&ok[at + 1], &ok[at], (last - at) * sizeof *ok);
                memmove(&key[at + 1], &key[at], (last - at) * sizeof *key);
                ok[at] = k, key[at] = v;
                nok += nok < sp->best;
            }
        }
        free(c);
    }
    return nok;
}

/* One of the best points: its axes and headline figures. */
static void best_line(FILE *so, const sweep_spec *sp, size_t i, char **c)
{
    fprintf(so, "  %2zu. point %s:", i + 1, c[0]);
    for (size_t a = 0; a < sp->naxes; a++)
        fprintf(so, " %s=%s", sp->axes[a].key, c[1 + a]);
    const char *const *r = (const char *const *)c + 1 + sp->naxes;
    if (sp->command == SWEEP_PROBE)
        fprintf(so, "  idle %.1f ns (x%.2f of local DDR), read %.1f GB/s, write %.1f GB/s\n",
                strtod(r[SWEEPROW_P_IDLE], NULL), strtod(r[SWEEPROW_P_RATIO], NULL), strtod(r[SWEEPROW_P_BW0], NULL),
                strtod(r[SWEEPROW_P_BW0 + 3], NULL));
    else if (sp->command == SWEEP_TRAIN)
        fprintf(so, " (dp %s)  %s s, %.0f tokens/s, MFU %.1f %%, %.2f GiB per GPU\n", r[SWEEPROW_DP],
                r[SWEEPROW_ITERATION], strtod(r[SWEEPROW_TOKENS], NULL), 100 * strtod(r[SWEEPROW_MFU], NULL),
                strtod(r[SWEEPROW_MEM0 + 4], NULL));
    else
        fprintf(so, " (dp %s)  %.2f GiB per GPU\n", r[SWEEPROW_DP], strtod(r[SWEEPROW_MEM0 + 4], NULL));
}

void report_sweep_summary(FILE *so, const sweep_spec *sp, char **rows)
{
    size_t count[5] = { 0 };
    size_t *ok = malloc(sp->npoints * sizeof *ok);
    double *key = malloc(sp->npoints * sizeof *key);
    size_t nok = rank_points(sp, rows, count, ok, key);
    fprintf(so, "sweep %s: %zu points (%llu before the filter): %zu ok, %zu invalid, %zu infeasible, %zu error, "
            "%zu crashed\n", sp->path, sp->npoints, (unsigned long long)sp->product, count[0], count[1], count[2],
            count[3], count[4]);
    if (nok)
        fprintf(so, "best %zu by %s:\n", nok, sweeprow_column(sp, sweeprow_rank_column(sp)));
    for (size_t i = 0; i < nok && ok; i++) {
        char **c;
        if (sweeprow_split(rows[ok[i]], &c) < 0)
            break;
        best_line(so, sp, i, c);
        free(c);
    }
    free(ok);
    free(key);
}
