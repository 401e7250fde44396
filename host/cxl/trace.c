/* trace.c - descriptor traces: the CSV reader, the random generator, the writer (see trace.h). */
#define _POSIX_C_SOURCE 200809L
#include "cxl/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"

/* ---- columns ---------------------------------------------------------------------------------------- */

enum {
    TC_ID, TC_REQUESTER, TC_BYTES, TC_BASE, TC_FOOTPRINT, TC_NOT_BEFORE, TC_PATTERN, TC_STRIDE, TC_SEED,
    TC_GAP, TC_MAXOUT, TC_RD, TC_WR, TC_MIX, TC_NCOL
};

static const char *const col_names[TC_NCOL] = {
    "id", "requester", "bytes", "base", "footprint", "not_before", "pattern", "stride", "seed",
    "gap_cycles", "max_outstanding", "rd_weight", "wr_weight", "mix",
};
#define COL_LIST "id, requester, bytes, base, footprint, not_before, pattern, stride, seed, gap_cycles, " \
                 "max_outstanding, rd_weight, wr_weight, mix"

/* Columns whose values are byte quantities and may carry a K/M/G/T suffix. */
static int col_is_size(int c) { return c == TC_BYTES || c == TC_BASE || c == TC_FOOTPRINT || c == TC_STRIDE; }

static const char *const pattern_names[] = { "seq", "random", "stride" };

/* ---- growing the trace ------------------------------------------------------------------------------ */

void trace_free(trace *t)
{
    if (!t)
        return;
    free(t->d);
    free(t->line);
    memset(t, 0, sizeof *t);
}

static int trace_push(trace *t, const cxl_desc *d, uint32_t line, int with_lines, cxl_err *err)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        if (cap > TRACE_MAX_DESCS)
            cap = TRACE_MAX_DESCS;
        cxl_desc *nd = realloc(t->d, cap * sizeof *nd);
        if (!nd)
            return cxl_errf(err, CXL_ENOMEM, "out of memory reading a trace of %zu descriptors", t->n);
        t->d = nd;
        if (with_lines) {
            uint32_t *nl = realloc(t->line, cap * sizeof *nl);
            if (!nl)
                return cxl_errf(err, CXL_ENOMEM, "out of memory reading a trace of %zu descriptors", t->n);
            t->line = nl;
        }
        t->cap = cap;
    }
    t->d[t->n] = *d;
    if (with_lines)
        t->line[t->n] = line;
    t->n++;
    return 0;
}

/* ---- numbers ---------------------------------------------------------------------------------------- */

/* Parse s[0..len) as a decimal or 0x-hex unsigned integer, with an optional binary size suffix when
 * `size` is set. Returns 0, or -1 (not a number / bad suffix) or -2 (overflow). */
static int parse_u64(const char *s, size_t len, int size, uint64_t *out)
{
    size_t i = 0;
    uint64_t v = 0;
    int base = 10, digits = 0;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    for (; i < len; i++) {
        int dv;
        char c = s[i];
        if (c >= '0' && c <= '9')
            dv = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            dv = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F')
            dv = c - 'A' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
            return -2;
        v = v * (uint64_t)base + (uint64_t)dv;
        digits++;
    }
    if (!digits)
        return -1;
    if (i < len) {
        if (!size)
            return -1;
        const char *suf = s + i;
        size_t sl = len - i;
        int shift;
        switch (suf[0]) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        default: return -1;
        }
        if (!(sl == 1 || (sl == 3 && suf[1] == 'i' && suf[2] == 'B')))
            return -1;
        if (v > (UINT64_MAX >> shift))
            return -2;
        v <<= shift;
    }
    *out = v;
    return 0;
}

/* ---- the CSV reader --------------------------------------------------------------------------------- */

typedef struct cell {
    const char *s;  /* trimmed text */
    size_t len;
    int col;        /* 1-based column of its first character (of the cell start when empty) */
} cell;

typedef struct reader {
    const char *name;
    const cxl_params *p;
    trace *t;
    int ncol;                    /* columns in the header */
    int map[TC_NCOL + 1];        /* header position -> TC_* column */
    int pos[TC_NCOL];            /* TC_* column -> header position, -1 when absent */
    int have_header;
    int line;                    /* current line, 1-based */
    uint16_t *idcol;             /* with an id column: the column of each descriptor's id cell */
    size_t idcap;
    cell cells[TC_NCOL + 1];
} reader;

/* Split a line into cells at commas; returns the number of cells, or TC_NCOL + 1 when there are more. */
static int split(const char *s, size_t len, cell *cells)
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        size_t start = i;
        while (i < len && s[i] != ',')
            i++;
        size_t a = start, b = i;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (n == TC_NCOL + 1)
            return n;
        cells[n].s = s + a;
        cells[n].len = b - a;
        cells[n].col = (int)a + 1;
        n++;
        if (i >= len)
            return n;
        i++; /* the comma */
    }
}

static int cell_is(const cell *c, const char *w) { return c->len == strlen(w) && !memcmp(c->s, w, c->len); }

static int read_header(reader *r, const char *s, size_t len, cxl_err *err)
{
    cell *cells = r->cells;
    int n = split(s, len, cells);
    if (n > TC_NCOL)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[TC_NCOL].col,
                           "header: more than %d columns; valid columns: %s", TC_NCOL, COL_LIST);
    for (int c = 0; c < TC_NCOL; c++)
        r->pos[c] = -1;
    for (int i = 0; i < n; i++) {
        int found = -1;
        for (int c = 0; c < TC_NCOL; c++)
            if (cell_is(&cells[i], col_names[c]))
                found = c;
        if (found < 0) {
            if (cells[i].len && (cells[i].s[0] >= '0' && cells[i].s[0] <= '9'))
                return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[i].col,
                                   "expected a header line naming the columns (e.g. 'requester,bytes,pattern,mix') "
                                   "before the first descriptor; valid columns: %s",
                                   COL_LIST);
            return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[i].col,
                               "header: unknown column '%.*s'; valid columns: %s", (int)cells[i].len, cells[i].s,
                               COL_LIST);
        }
        if (r->pos[found] >= 0)
            return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[i].col,
                               "header: column '%s' given twice", col_names[found]);
        r->pos[found] = i;
        r->map[i] = found;
    }
    if (r->pos[TC_MIX] >= 0 && (r->pos[TC_RD] >= 0 || r->pos[TC_WR] >= 0))
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[r->pos[TC_MIX]].col,
                           "header: 'mix' replaces 'rd_weight' and 'wr_weight'; give either 'mix' or the weights");
    if (r->pos[TC_REQUESTER] < 0)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, 1, "header: the column 'requester' is required");
    if (r->pos[TC_BYTES] < 0)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, 1, "header: the column 'bytes' is required");
    r->ncol = n;
    r->have_header = 1;
    return 0;
}

static int cell_err(reader *r, const cell *c, int col, cxl_err *err, const char *what)
{
    return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, c->col, "%s: '%.*s' %s", col_names[col], (int)c->len,
                       c->s, what);
}

/* Parse a numeric cell into *v, checking it is at most `max`. */
static int cell_num(reader *r, const cell *c, int col, uint64_t max, uint64_t *v, cxl_err *err)
{
    int rc = parse_u64(c->s, c->len, col_is_size(col), v);
    if (rc == -1)
        return cell_err(r, c, col, err,
                        col_is_size(col) ? "is not a number; valid: decimal or 0x-hex, optionally with a K, M, G "
                                           "or T suffix (binary: 4K = 4096)"
                                         : "is not a number; valid: decimal or 0x-hex");
    if (rc == -2 || *v > max) {
        char what[96];
        snprintf(what, sizeof what, "is too large; valid: at most %llu", (unsigned long long)max);
        return cell_err(r, c, col, err, what);
    }
    return 0;
}

/* qsort order of (id, index) pairs */
static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* One non-empty cell of column col into d; 0, or an error at the cell. */
static int read_cell(reader *r, const cell *c, int col, cxl_desc *d, cxl_err *err)
{
    const cxl_params *p = r->p;
    uint64_t v = 0;
    int rc = 0;
    switch (col) {
    case TC_ID:
        rc = cell_num(r, c, col, UINT64_MAX, &v, err);
        d->id = v;
        break;
    case TC_REQUESTER:
        if ((rc = cell_num(r, c, col, UINT64_MAX, &v, err)))
            break;
        if (v >= p->requesters) {
            char what[96];
            snprintf(what, sizeof what, "does not exist: the device has %u requesters; valid: 0..%u", p->requesters,
                     p->requesters - 1);
            rc = cell_err(r, c, col, err, what);
        }
        d->requester = (uint16_t)v;
        break;
    case TC_BYTES:
        if ((rc = cell_num(r, c, col, UINT64_MAX, &v, err)))
            break;
        if (v == 0 || v % CXL_LINE_BYTES)
            rc = cell_err(r, c, col, err, "is not a positive multiple of 64 (the model moves 64 B lines)");
        else if (v >> 38)
            rc = cell_err(r, c, col, err, "is too large; valid: below 256 GiB (2^32 lines) per descriptor");
        d->bytes = v;
        break;
    case TC_BASE:
        if ((rc = cell_num(r, c, col, UINT64_MAX, &v, err)))
            break;
        if (v % CXL_LINE_BYTES)
            rc = cell_err(r, c, col, err, "is not 64 B aligned (a multiple of 64 or 0x40)");
        d->base = v;
        break;
    case TC_FOOTPRINT:
        if ((rc = cell_num(r, c, col, UINT64_MAX, &v, err)))
            break;
        if (v % CXL_LINE_BYTES || (v / CXL_LINE_BYTES) >> 32)
            rc = cell_err(r, c, col, err, "is not a multiple of 64 below 256 TiB (0: the transfer's size)");
        d->footprint = v;
        break;
    case TC_NOT_BEFORE:
        /* bounded as gap_cycles is: the C model crosses a wait in whole refresh periods (O(1),
         * hw/hls/dram.h), but the verilated RTL steps through every cycle of it */
        rc = cell_num(r, c, col, UINT32_MAX, &v, err);
        d->not_before = v;
        break;
    case TC_PATTERN: {
        int found = -1;
        for (int k = 0; k < 3; k++)
            if (cell_is(c, pattern_names[k]))
                found = k;
        if (found < 0)
            rc = cell_err(r, c, col, err, "is not a pattern; valid: seq, random, stride");
        d->pattern = (uint8_t)(found < 0 ? 0 : found);
        break;
    }
    case TC_STRIDE:
        if ((rc = cell_num(r, c, col, UINT32_MAX, &v, err)))
            break;
        if (v % CXL_LINE_BYTES)
            rc = cell_err(r, c, col, err, "is not a multiple of 64");
        d->stride = (uint32_t)v;
        break;
    case TC_SEED:
        rc = cell_num(r, c, col, UINT32_MAX, &v, err);
        d->seed = (uint32_t)v;
        break;
    case TC_GAP:
        rc = cell_num(r, c, col, UINT32_MAX, &v, err);
        d->gap_cycles = (uint32_t)v;
        break;
    case TC_MAXOUT:
        if ((rc = cell_num(r, c, col, UINT16_MAX, &v, err)))
            break;
        if (v == 0 || v > p->tags) {
            char what[96];
            snprintf(what, sizeof what, "is outside 1..%u (the device's tags per requester)", p->tags);
            rc = cell_err(r, c, col, err, what);
        }
        d->max_outstanding = (uint16_t)v;
        break;
    case TC_RD:
    case TC_WR:
        rc = cell_num(r, c, col, 255, &v, err);
        if (col == TC_RD)
            d->rd_weight = (uint8_t)v;
        else
            d->wr_weight = (uint8_t)v;
        break;
    case TC_MIX: {
        const char *colon = memchr(c->s, ':', c->len);
        uint64_t a = 0, b = 0;
        if (!colon || parse_u64(c->s, (size_t)(colon - c->s), 0, &a) ||
            parse_u64(colon + 1, c->len - (size_t)(colon - c->s) - 1, 0, &b) || a > 255 || b > 255)
            rc = cell_err(r, c, col, err, "is not R:W; valid: two weights 0-255, e.g. 2:1 (reads:writes), 1:0, 0:1");
        d->rd_weight = (uint8_t)a;
        d->wr_weight = (uint8_t)b;
        break;
    }
    }
    return rc;
}

/* The checks across the cells of a row, each reported at the cell that would fix it, then whatever the
 * backends will check, here with the line (a guard for any rule added there). */
static int check_row(reader *r, const cell *cells, const cxl_desc *d, cxl_err *err)
{
    if (d->rd_weight == 0 && d->wr_weight == 0) {
        int at = r->pos[TC_MIX] >= 0 ? r->pos[TC_MIX] : r->pos[TC_RD] >= 0 ? r->pos[TC_RD] : r->pos[TC_WR];
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[at].col,
                           "read:write weights 0:0; valid: at least one of them positive (1:0 reads only, 0:1 "
                           "writes only)");
    }
    if (d->pattern == CXL_PAT_STRIDE) {
        uint64_t span = d->footprint ? d->footprint : d->bytes;
        int at = r->pos[TC_STRIDE] >= 0 ? r->pos[TC_STRIDE] : r->pos[TC_PATTERN];
        if (d->stride == 0 || d->stride >= span)
            return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[at].col,
                               "pattern stride needs a stride: a positive multiple of 64 below the footprint (%llu "
                               "bytes; footprint 0 means the transfer's size); got %u",
                               (unsigned long long)span, d->stride);
    }
    cxl_err ce;
    cxl_err_clear(&ce);
    if (cxl_desc_check(r->p, d, &ce))
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, 1, "%s", ce.msg);
    return 0;
}

static int read_row(reader *r, const char *s, size_t len, cxl_err *err)
{
    cell *cells = r->cells;
    int n = split(s, len, cells);
    if (n > r->ncol)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, cells[r->ncol].col,
                           "more fields than the header's %d columns (one per column, empty for the default)", r->ncol);
    if (n < r->ncol)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, (int)len + 1,
                           "%d fields, the header names %d columns (one per column, empty for the default)", n,
                           r->ncol);
    if (r->t->n >= TRACE_MAX_DESCS)
        return cxl_errf_at(err, CXL_ELIMIT, r->name, r->line, 1,
                           "more than %u descriptors: a trace holds at most %u (split it into several runs)",
                           TRACE_MAX_DESCS, TRACE_MAX_DESCS);
    const cxl_params *p = r->p;
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = r->t->n + 1;
    d.pattern = CXL_PAT_SEQ;
    d.max_outstanding = (uint16_t)p->tags;
    d.rd_weight = 1;
    d.wr_weight = 0;
    for (int i = 0; i < n; i++) {
        const cell *c = &cells[i];
        if (!c->len)
            continue; /* the default */
        int rc = read_cell(r, c, r->map[i], &d, err);
        if (rc)
            return rc;
    }
    int rc = check_row(r, cells, &d, err);
    if (rc)
        return rc;
    if (r->pos[TC_ID] >= 0) { /* where the id is, for the duplicate check at the end */
        if (r->t->n == r->idcap) {
            size_t cap = r->idcap ? 2 * r->idcap : 1024;
            uint16_t *nc = realloc(r->idcol, cap * sizeof *nc);
            if (!nc)
                return cxl_errf(err, CXL_ENOMEM, "out of memory reading a trace of %zu descriptors", r->t->n);
            r->idcol = nc;
            r->idcap = cap;
        }
        int col = cells[r->pos[TC_ID]].col;
        r->idcol[r->t->n] = (uint16_t)(col < UINT16_MAX ? col : UINT16_MAX);
    }
    return trace_push(r->t, &d, (uint32_t)r->line, 1, err);
}

/* After reading: ids must be unique (completions are matched by id). O(n log n). Without an id column
 * (idcol NULL) the ids are 1..n. */
static int check_ids(const trace *t, const uint16_t *idcol, const char *name, cxl_err *err)
{
    if (t->n < 2 || !idcol)
        return 0;
    uint64_t *pairs = malloc(t->n * 2 * sizeof *pairs);
    if (!pairs)
        return cxl_errf(err, CXL_ENOMEM, "out of memory checking the ids of %zu descriptors", t->n);
    for (size_t i = 0; i < t->n; i++) {
        pairs[2 * i] = t->d[i].id;
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, t->n, 2 * sizeof *pairs, cmp_u64pair);
    int rc = 0;
    size_t worst = SIZE_MAX; /* report the duplicate that comes first in the file */
    for (size_t i = 1; i < t->n; i++)
        if (pairs[2 * i] == pairs[2 * i - 2] && pairs[2 * i + 1] < worst)
            worst = pairs[2 * i + 1];
    if (worst != SIZE_MAX) {
        size_t first = worst;
        for (size_t i = 0; i < t->n; i++)
            if (t->d[i].id == t->d[worst].id && i != worst) {
                first = i;
                break;
            }
        rc = cxl_errf_at(err, CXL_ECONFIG, name, (int)t->line[worst], idcol[worst],
                         "id %llu already used on line %u; valid: ids unique within the trace (an empty cell: "
                         "the descriptor's position from 1)",
                         (unsigned long long)t->d[worst].id, t->line[first]);
    }
    free(pairs);
    return rc;
}

/* One physical line (without its newline). */
static int read_line(reader *r, const char *s, size_t len, cxl_err *err)
{
    if (len && s[len - 1] == '\r')
        len--;
    if (r->line == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) { /* UTF-8 byte order mark */
        s += 3;
        len -= 3;
    }
    if (len > TRACE_MAX_LINE)
        return cxl_errf_at(err, CXL_ELIMIT, r->name, r->line, 1, "line longer than %u characters", TRACE_MAX_LINE);
    for (size_t i = 0; i < len; i++)
        if (s[i] == 0)
            return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, (int)i + 1,
                               "a NUL byte: not a text file (expected CSV: a header line, then one descriptor a line)");
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == len || s[i] == '#')
        return 0;
    return r->have_header ? read_row(r, s, len, err) : read_header(r, s, len, err);
}

static int finish(reader *r, cxl_err *err)
{
    if (!r->have_header)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line > 0 ? r->line : 1, 1,
                           "no header line: expected one naming the columns (requester and bytes required; valid "
                           "columns: %s), then one descriptor a line",
                           COL_LIST);
    if (!r->t->n)
        return cxl_errf_at(err, CXL_ECONFIG, r->name, r->line, 1, "no descriptors after the header");
    return check_ids(r->t, r->idcol, r->name, err);
}

static void reader_init(reader *r, const char *name, const cxl_params *p, trace *out)
{
    memset(r, 0, sizeof *r);
    memset(out, 0, sizeof *out);
    r->name = name;
    r->p = p;
    r->t = out;
}

int trace_parse(const char *text, size_t len, const char *name, const cxl_params *p, trace *out, cxl_err *err)
{
    reader r;
    reader_init(&r, name, p, out);
    size_t i = 0;
    int rc = 0;
    while (!rc && i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        r.line++;
        rc = read_line(&r, text + i, end - i, err);
        i = end + 1;
    }
    if (!rc)
        rc = finish(&r, err);
    free(r.idcol);
    if (rc)
        trace_free(out);
    return rc;
}

int trace_load(const char *path, const cxl_params *p, trace *out, cxl_err *err)
{
    reader r;
    reader_init(&r, path, p, out);
    FILE *f = fopen(path, "r");
    if (!f)
        return cxl_errf(err, CXL_EIO, "cannot read trace '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    errno = 0;
    while (!rc && (got = getline(&buf, &cap, f)) >= 0) {
        r.line++;
        size_t len = (size_t)got;
        if (len && buf[len - 1] == '\n')
            len--;
        rc = read_line(&r, buf, len, err);
    }
    if (!rc && ferror(f))
        rc = cxl_errf(err, CXL_EIO, "cannot read trace '%s': %s", path, strerror(errno ? errno : EIO));
    free(buf);
    fclose(f);
    if (!rc)
        rc = finish(&r, err);
    free(r.idcol);
    if (rc)
        trace_free(out);
    return rc;
}

/* ---- the random generator --------------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n), n > 0 (the bias of a 64-bit modulo is irrelevant here) */
static uint64_t below(uint64_t *s, uint64_t n) { return splitmix(s) % n; }

int trace_random(const cxl_params *p, uint64_t seed, size_t n, trace *out, cxl_err *err)
{
    memset(out, 0, sizeof *out);
    if (n > TRACE_MAX_DESCS)
        return cxl_errf(err, CXL_ELIMIT, "%zu random descriptors: at most %u", n, TRACE_MAX_DESCS);
    if (!p->requesters || !p->tags)
        return cxl_errf(err, CXL_EINTERNAL, "device without requesters or tags");
    static const uint8_t mixes[][2] = { { 1, 0 }, { 0, 1 }, { 2, 1 }, { 1, 1 }, { 3, 1 }, { 1, 2 } };
    uint64_t s = seed ^ 0x6A09E667F3BCC909ull;
    uint64_t clock = 0; /* a rough running estimate of time, for not_before in the near future */
    for (size_t i = 0; i < n; i++) {
        cxl_desc d;
        memset(&d, 0, sizeof d);
        d.id = i + 1;
        /* skewed towards low requesters half the time, so queues fill and requesters contend */
        d.requester = (uint16_t)(below(&s, 2) ? below(&s, p->requesters) : below(&s, (p->requesters + 3) / 4));
        /* sizes: mostly single lines to 1 KiB, some up to 16 KiB */
        uint64_t lines = below(&s, 4) ? 1 + below(&s, 16) : 1 + below(&s, 256);
        d.bytes = lines * CXL_LINE_BYTES;
        d.base = below(&s, (4ull << 30) / CXL_LINE_BYTES) * CXL_LINE_BYTES;
        d.pattern = (uint8_t)below(&s, 3);
        uint64_t fp_lines = 0;
        switch (below(&s, 4)) {
        case 0: fp_lines = 0; break;                              /* the transfer's own size */
        case 1: fp_lines = 2 + below(&s, 8); break;               /* hot: a few lines, row hits */
        case 2: fp_lines = lines + below(&s, 4 * lines + 1); break;
        default: fp_lines = 1 + below(&s, 1u << 20); break;       /* up to 64 MiB */
        }
        if (d.pattern == CXL_PAT_STRIDE && fp_lines < 2 && lines < 2)
            fp_lines = 2 + below(&s, 64);
        d.footprint = fp_lines * CXL_LINE_BYTES;
        if (d.pattern == CXL_PAT_STRIDE) {
            uint64_t span = fp_lines ? fp_lines : lines; /* in lines, >= 2 */
            uint64_t k = 1 + below(&s, span - 1 < 64 ? span - 1 : 64);
            d.stride = (uint32_t)(k * CXL_LINE_BYTES);
        }
        d.seed = (uint32_t)splitmix(&s);
        const uint8_t *m = mixes[below(&s, 8) < 6 ? below(&s, 6) : 0];
        d.rd_weight = m[0];
        d.wr_weight = m[1];
        if (!below(&s, 16)) { /* an arbitrary mix now and then */
            d.rd_weight = (uint8_t)below(&s, 256);
            d.wr_weight = (uint8_t)below(&s, 256);
            if (!d.rd_weight && !d.wr_weight)
                d.rd_weight = 1;
        }
        d.gap_cycles = below(&s, 4) ? 0 : (uint32_t)(1 + below(&s, below(&s, 4) ? 16 : 400));
        d.max_outstanding = (uint16_t)(below(&s, 3) ? p->tags : 1 + below(&s, p->tags));
        clock += 1 + below(&s, 40);
        if (!below(&s, 8))
            d.not_before = clock + below(&s, 2000);
        int rc = trace_push(out, &d, 0, 0, err);
        if (rc) {
            trace_free(out);
            return rc;
        }
    }
    return 0;
}

/* ---- the writer ------------------------------------------------------------------------------------- */

int trace_to_csv(const trace *t, char **text, size_t *len, cxl_err *err)
{
    *text = NULL;
    *len = 0;
    static const char header[] =
        "id,requester,bytes,base,footprint,not_before,pattern,stride,seed,gap_cycles,max_outstanding,rd_weight,"
        "wr_weight\n";
    size_t cap = sizeof header + t->n * 200 + 1;
    char *buf = malloc(cap);
    if (!buf)
        return cxl_errf(err, CXL_ENOMEM, "out of memory writing a trace of %zu descriptors", t->n);
    size_t n = (size_t)snprintf(buf, cap, "%s", header);
    for (size_t i = 0; i < t->n; i++) {
        const cxl_desc *d = &t->d[i];
        n += (size_t)snprintf(buf + n, cap - n, "%llu,%u,%llu,0x%llx,%llu,%llu,%s,%u,%u,%u,%u,%u,%u\n",
                              (unsigned long long)d->id, d->requester, (unsigned long long)d->bytes,
                              (unsigned long long)d->base, (unsigned long long)d->footprint,
                              (unsigned long long)d->not_before,
                              pattern_names[d->pattern <= CXL_PAT_STRIDE ? d->pattern : 0], d->stride, d->seed,
                              d->gap_cycles, d->max_outstanding, d->rd_weight, d->wr_weight);
    }
    *text = buf;
    *len = n;
    return 0;
}
