/* optimes.c - measured per-operation times: loading (cfg.h tree -> sorted table), lookup, writing. */
#define _POSIX_C_SOURCE 200809L
#include "train/optimes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "config/gpucfg.h"

enum { OT_NAME_MAX = 128 };

static const char *const kind_names[] = { "gemm", "mem", "attn_fwd", "attn_bwd", NULL }; /* = enum op_kind */

typedef struct ot_entry {
    char *name;
    int dtype;
    uint64_t batch, m, n, k;
    int64_t ps;         /* -1: no time */
    size_t ix;          /* position in the file */
    int line, col;      /* of the entry's mapping */
} ot_entry;

struct optimes {
    ot_entry *e;        /* sorted by identity (ot_cmp) */
    size_t n;
    char path[256];     /* the file, for locations */
    char gpu[256];
    char source[512];
};

/* ---- identity ---- */

static int ot_cmp_key(const char *name, int dtype, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                      const ot_entry *b)
{
    int c = strcmp(name, b->name);
    if (c)
        return c;
    if (dtype != b->dtype)
        return dtype < b->dtype ? -1 : 1;
    const uint64_t x[4] = { batch, m, n, k }, y[4] = { b->batch, b->m, b->n, b->k };
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int ot_cmp(const void *pa, const void *pb)
{
    const ot_entry *a = pa, *b = pb;
    int c = ot_cmp_key(a->name, a->dtype, a->batch, a->m, a->n, a->k, b);
    if (c)
        return c;
    return a->ix < b->ix ? -1 : a->ix > b->ix;
}

/* ---- loading ---- */

/* One entry as written; kind and bytes are informational (the profiler's), checked and dropped. */
typedef struct ot_raw {
    char name[OT_NAME_MAX];
    int dtype, kind;
    uint64_t batch, m, n, k, time_ps, bytes;
} ot_raw;

#define R(f) offsetof(ot_raw, f)
enum { RAW_NAME, RAW_DTYPE, RAW_BATCH, RAW_M, RAW_N, RAW_K, RAW_TIME, RAW_KIND, RAW_BYTES };
/* Order = RAW_* */
static const cfg_field entry_fields[] = {
    { "name", CFG_T_STRING, R(name), 1, 1, 0, NULL, NULL, OT_NAME_MAX, NULL, "operation name, e.g. fc1.fwd" },
    { "dtype", CFG_T_ENUM, R(dtype), 1, 1, 0, gpucfg_dtype_names, NULL, 0, NULL, "data type of the operation" },
    { "batch", CFG_T_U64, R(batch), 0, 1, 1e18, NULL, NULL, 0, NULL, "independent products (default 1)" },
    { "m", CFG_T_U64, R(m), 1, 1, 1e18, NULL, NULL, 0, NULL, "GEMM rows, or elements of a memory-bound op" },
    { "n", CFG_T_U64, R(n), 0, 1, 1e18, NULL, NULL, 0, NULL, "GEMM columns (default 1)" },
    { "k", CFG_T_U64, R(k), 0, 1, 1e18, NULL, NULL, 0, NULL, "GEMM inner dimension (default 1)" },
    { "time", CFG_T_TIME, R(time_ps), 0, 1, 9e18, NULL, NULL, 0, NULL, "measured time per call, e.g. 1.234ms" },
    { "kind", CFG_T_ENUM, R(kind), 0, 1, 0, kind_names, NULL, 0, NULL, "informational: gemm, mem, attn_fwd or attn_bwd" },
    { "bytes", CFG_T_SIZE, R(bytes), 0, 0, 0, NULL, NULL, 0, NULL, "informational: HBM traffic, e.g. 16MB" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

typedef struct ot_head {
    char gpu[256], source[512];
} ot_head;

static int ops_later(const cfg_node *n, void *dst, cxl_err *err)
{
    (void)n, (void)dst, (void)err;
    return 0;
}

static const cfg_field head_fields[] = {
    { "gpu", CFG_T_STRING, offsetof(ot_head, gpu), 0, 1, 0, NULL, NULL, 256, NULL,
      "informational: the GPU the times were measured on" },
    { "source", CFG_T_STRING, offsetof(ot_head, source), 0, 1, 0, NULL, NULL, 512, NULL, "informational: free text" },
    { "ops", CFG_T_CUSTOM, 0, 1, 1, 0, NULL, NULL, 0, ops_later,
      "a sequence of entries { name, dtype, batch, m, n, k, time }" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

void optimes_free(optimes *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].name);
    free(t->e);
    free(t);
}

/* Bind ops[i] into t->e[t->n]. */
static int load_entry(optimes *t, const cfg_node *item, size_t i, int require_times, cxl_err *err)
{
    char section[32];
    snprintf(section, sizeof section, "ops[%zu]", i);
    if (cfg_kind(item) != CFG_MAP)
        return cfg_errf(err, item, "'%s' must be a mapping, e.g. { name: fc1.fwd, dtype: bf16, m: 2048, n: 5504, "
                        "k: 4096, time: 1.2ms }", section);
    ot_raw r;
    memset(&r, 0, sizeof r);
    r.batch = r.n = r.k = 1;
    int seen[sizeof entry_fields / sizeof entry_fields[0]];
    int rc = cfg_bind(item, NULL, section, entry_fields, &r, seen, err);
    if (rc)
        return rc;
    if (require_times && !seen[RAW_TIME])
        return cfg_errf(err, item, "missing required key '%s.time' for entry '%s'; expected a time with a unit, "
                        "e.g. 1.234ms (a list without times is profiling input: run scripts/profile_ops.py on it)",
                        section, r.name);
    ot_entry *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(r.name)))
        return cxl_errf(err, CXL_ENOMEM, "out of memory loading operation times");
    t->n++;
    e->dtype = r.dtype;
    e->batch = r.batch, e->m = r.m, e->n = r.n, e->k = r.k;
    e->ps = seen[RAW_TIME] ? (int64_t)r.time_ps : -1;
    e->ix = i;
    const char *file;
    cfg_mark(item, &file, &e->line, &e->col);
    return 0;
}

/* Sort, then reject the earliest repeated identity (the second occurrence with the smallest position). */
static int sort_and_check(optimes *t, const cfg_node *ops, cxl_err *err)
{
    if (t->n > 1)
        qsort(t->e, t->n, sizeof *t->e, ot_cmp);
    size_t first = 0, second = SIZE_MAX;
    for (size_t i = 1, run = 0; i < t->n; i++) {
        const ot_entry *a = &t->e[run], *b = &t->e[i];
        if (ot_cmp_key(a->name, a->dtype, a->batch, a->m, a->n, a->k, b) != 0) {
            run = i;
            continue;
        }
        if (b->ix < second)
            second = b->ix, first = run;
    }
    if (second == SIZE_MAX)
        return 0;
    const ot_entry *a = &t->e[first];
    return cfg_errf(err, cfg_seq_at(ops, second),
                    "duplicate entry 'ops[%zu]': '%s' %s batch %llu m %llu n %llu k %llu is already listed at line %d, "
                    "column %d (ops[%zu]); each operation may be listed once", second, a->name,
                    gpucfg_dtype_names[a->dtype], (unsigned long long)a->batch, (unsigned long long)a->m,
                    (unsigned long long)a->n, (unsigned long long)a->k, a->line, a->col, a->ix);
}

int optimes_load(const char *path, optimes **out, int require_times, cxl_err *err)
{
    cxl_err_clear(err);
    *out = NULL;
    cfg_doc *doc = NULL;
    int rc = cfg_load_file(path, NULL, NULL, &doc, err);
    if (rc)
        return rc;
    const cfg_node *root = cfg_root(doc);
    ot_head head;
    memset(&head, 0, sizeof head);
    optimes *t = NULL;
    if ((rc = cfg_bind(root, NULL, "", head_fields, &head, NULL, err)))
        goto fail;
    const cfg_node *ops = cfg_map_get(root, "ops");
    if (cfg_kind(ops) != CFG_SEQ) {
        rc = cfg_errf(err, ops, "'ops' must be a sequence of entries, one per line as '- { name: fc1.fwd, dtype: "
                      "bf16, m: 2048, n: 5504, k: 4096, time: 1.2ms }', or [] for none");
        goto fail;
    }
    size_t n = cfg_seq_size(ops);
    t = calloc(1, sizeof *t);
    if (!t || (n && !(t->e = calloc(n, sizeof *t->e)))) {
        rc = cxl_errf(err, CXL_ENOMEM, "out of memory loading operation times");
        goto fail;
    }
    memcpy(t->gpu, head.gpu, sizeof t->gpu);
    memcpy(t->source, head.source, sizeof t->source);
    snprintf(t->path, sizeof t->path, "%s", path);
    for (size_t i = 0; i < n; i++)
        if ((rc = load_entry(t, cfg_seq_at(ops, i), i, require_times, err)))
            goto fail;
    if ((rc = sort_and_check(t, ops, err)))
        goto fail;
    cfg_free(doc);
    *out = t;
    return 0;
fail:
    optimes_free(t);
    cfg_free(doc);
    return rc;
}

/* ---- lookup ---- */

/* The entry with op's identity and a time, or NULL. O(log n). */
static const ot_entry *find(const optimes *t, const op_desc *op)
{
    if (!t || !op || !op->name)
        return NULL;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {   /* the first entry >= op's identity */
        size_t mid = lo + (hi - lo) / 2;
        if (ot_cmp_key(op->name, op->dtype, op->batch, op->m, op->n, op->k, &t->e[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == t->n || ot_cmp_key(op->name, op->dtype, op->batch, op->m, op->n, op->k, &t->e[lo]) != 0 ||
        t->e[lo].ps < 0)
        return NULL;
    return &t->e[lo];
}

int optimes_lookup(const optimes *t, const op_desc *op, int64_t *ps)
{
    const ot_entry *e = find(t, op);
    if (!e)
        return 0;
    *ps = e->ps;
    return 1;
}

int optimes_where(const optimes *t, const op_desc *op, const char **file, int *line, int *col)
{
    const ot_entry *e = find(t, op);
    if (!e)
        return 0;
    *file = t->path;
    *line = e->line;
    *col = e->col;
    return 1;
}

size_t optimes_count(const optimes *t) { return t ? t->n : 0; }
const char *optimes_gpu(const optimes *t) { return t ? t->gpu : ""; }
const char *optimes_source(const optimes *t) { return t ? t->source : ""; }

/* ---- writing ---- */

/* A YAML double-quoted scalar: any text loads back unchanged. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static int op_valid(const op_desc *op, const int64_t *time)
{
    return op->name && op->name[0] && strlen(op->name) < OT_NAME_MAX && op->kind >= OP_GEMM && op->kind <= OP_ATTN_BWD &&
           op->dtype >= 0 && op->dtype < GPUCFG_NDTYPES && op->batch && op->m && op->n && op->k &&
           op->batch <= 1e18 && op->m <= 1e18 && op->n <= 1e18 && op->k <= 1e18 && op->bytes >= 0 &&
           op->bytes < 1.8e19 && (!time || *time >= 1);
}

int optimes_write_list(FILE *f, const op_desc *ops, size_t n, const char *gpu, const char *source,
                       const int64_t *times_or_NULL)
{
    for (size_t i = 0; i < n; i++)
        if (!op_valid(&ops[i], times_or_NULL ? &times_or_NULL[i] : NULL))
            return CXL_EINTERNAL;
    /* Keep the first occurrence of each identity: sort positions by (identity, position). */
    ot_entry *v = n ? malloc(n * sizeof *v) : NULL;
    unsigned char *keep = n ? calloc(n, 1) : NULL;
    if (n && (!v || !keep)) {
        free(v);
        free(keep);
        return CXL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (ot_entry){ (char *)ops[i].name, ops[i].dtype, ops[i].batch, ops[i].m, ops[i].n, ops[i].k, 0, i, 0, 0 };
    if (n)
        qsort(v, n, sizeof *v, ot_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ot_cmp_key(v[i].name, v[i].dtype, v[i].batch, v[i].m, v[i].n, v[i].k, &v[i - 1]) != 0)
            keep[v[i].ix] = 1;
    free(v);

    fprintf(f, times_or_NULL ? "# measured operation times (times in ps; cxlsim optimes format)\n"
                             : "# operations to time: python3 scripts/profile_ops.py THIS_FILE -o TIMES.yaml\n");
    if (gpu) {
        fputs("gpu: ", f);
        put_quoted(f, gpu);
        fputc('\n', f);
    }
    if (source) {
        fputs("source: ", f);
        put_quoted(f, source);
        fputc('\n', f);
    }
    fputs(n ? "ops:\n" : "ops: []\n", f);
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        const op_desc *op = &ops[i];
        fputs("  - { name: ", f);
        put_quoted(f, op->name);
        fprintf(f, ", kind: %s, dtype: %s, batch: %llu, m: %llu, n: %llu, k: %llu", kind_names[op->kind],
                gpucfg_dtype_names[op->dtype], (unsigned long long)op->batch, (unsigned long long)op->m,
                (unsigned long long)op->n, (unsigned long long)op->k);
        if (op->bytes > 0)
            fprintf(f, ", bytes: %.0fB", op->bytes);
        if (times_or_NULL)
            fprintf(f, ", time: %lldps", (long long)times_or_NULL[i]);
        fputs(" }\n", f);
    }
    free(keep);
    return ferror(f) ? CXL_EIO : 0;
}
