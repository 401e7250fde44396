/* cxlsim_nccl.c - the NCCL delay plugin (include/cxlsim/cxlsim_nccl.h) over libcxlsim's public API. */
#define _POSIX_C_SOURCE 200809L
#include "cxlsim/cxlsim_nccl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cxlsim_nccl {
    cxlsim_cluster *cluster;
};

/* NCCL 2.19 values (nccl.h ncclDataType_t, nccl_common.h ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*). */
enum { NCCL_BROADCAST = 0, NCCL_REDUCE = 1, NCCL_ALLGATHER = 2, NCCL_REDUCESCATTER = 3, NCCL_ALLREDUCE = 4 };
enum { NCCL_ALGO_TREE = 0, NCCL_ALGO_RING = 1 };
static const unsigned type_bytes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 }; /* int8 uint8 int32 uint32 int64 uint64 f16 f32 f64 bf16 */

#define ERROR_MIN CXLSIM_SIZE_MIN(cxlsim_error, message)

/* src (full bytes) out to the caller's sized struct dst: the fields that fit in dst's size, which stays
 * (cxlsim.h, "Sized structs"); nothing when dst is NULL or its size is below min. */
static void copy_out(void *dst, const void *src, size_t full, size_t min)
{
    size_t n;
    if (!dst || (memcpy(&n, dst, sizeof n), n < min))
        return;
    memcpy(dst, src, n < full ? n : full);
    memcpy(dst, &n, sizeof n);
}

/* Where an error is: the CSV's name, line and column, into err (where it holds them). */
static int at(cxlsim_error *err, int code, const char *file, int line, int column)
{
    if (err && err->size >= ERROR_MIN) {
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        err->column = column;
    }
    return code;
}

static int fail(cxlsim_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(cxlsim_error *err, int code, const char *fmt, ...)
{
    cxlsim_error r;
    cxlsim_error_init(&r);
    r.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.message, sizeof r.message, fmt, ap);
    va_end(ap);
    copy_out(err, &r, sizeof r, ERROR_MIN);
    return code;
}

int cxlsim_nccl_open(const char *cluster, const char *gpu, cxlsim_nccl **out, cxlsim_error *err)
{
    if (!out)
        return fail(err, CXLSIM_EUSAGE, "cxlsim_nccl_open: out is required");
    *out = NULL;
    cxlsim_nccl *p = calloc(1, sizeof *p);
    if (!p)
        return fail(err, CXLSIM_ENOMEM, "out of memory");
    int rc = cxlsim_cluster_load(cluster, gpu, &p->cluster, err);
    if (rc) {
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void cxlsim_nccl_close(cxlsim_nccl *p)
{
    if (p)
        cxlsim_cluster_free(p->cluster);
    free(p);
}

int cxlsim_nccl_delay(cxlsim_nccl *p, int coll, uint64_t count, int datatype, int nranks, int nnodes, int algo,
                      int proto, int nchannels, int64_t *delay_ps, cxlsim_collective_result *res, cxlsim_error *err)
{
    if (!p || !delay_ps)
        return fail(err, CXLSIM_EUSAGE, "cxlsim_nccl_delay: p and delay_ps are required");
    /* Reduce: NCCL runs it on the ring as ncclPatternPipelineTo, the mirror of Broadcast's
     * ncclPatternPipelineFrom (enqueue.cc getPatternInfo; getLoopInfo gives both one step and one chunk per
     * loop), each chunk passing the n-1 links of the chain towards the root, with nBytes = count x size like
     * Broadcast (ncclInfoSetDerived); tuning.cc times both with the same ring model and no tree. So its time
     * is Broadcast's plan: the chain's reduction arithmetic is not timed (NCCL's model leaves it out too). */
    static const int ops[] = { [NCCL_BROADCAST] = CXLSIM_BROADCAST, [NCCL_REDUCE] = CXLSIM_BROADCAST,
                               [NCCL_ALLGATHER] = CXLSIM_ALLGATHER, [NCCL_REDUCESCATTER] = CXLSIM_REDUCE_SCATTER,
                               [NCCL_ALLREDUCE] = CXLSIM_ALLREDUCE };
    if (coll < 0 || coll > NCCL_ALLREDUCE)
        return fail(err, CXLSIM_EUSAGE, "coll %d: valid: 0 broadcast, 1 reduce, 2 all-gather, 3 reduce-scatter, "
                    "4 all-reduce", coll);
    if (datatype < 0 || datatype >= (int)(sizeof type_bytes / sizeof type_bytes[0]))
        return fail(err, CXLSIM_EUSAGE, "datatype %d: valid: 0 (int8) to 9 (bfloat16)", datatype);
    if (nranks < 1 || nnodes < 1 || nranks % nnodes)
        return fail(err, CXLSIM_EUSAGE, "nranks %d, nnodes %d: need nranks >= 1 and nnodes >= 1 dividing it", nranks,
                    nnodes);
    if (algo < -1 || algo > NCCL_ALGO_RING || proto < -1 || proto > CXLSIM_PROTO_SIMPLE || nchannels < 0)
        return fail(err, CXLSIM_EUSAGE, "algo %d, proto %d, nchannels %d: algo -1 (auto), 0 (tree) or 1 (ring); "
                    "proto -1 (auto), 0 (LL), 1 (LL128) or 2 (Simple); nchannels >= 0", algo, proto, nchannels);
    /* ncclInfoSetDerived: nBytes = count x size, times nRanks where count is per rank */
    if (count > UINT64_MAX / type_bytes[datatype] / (uint64_t)nranks)
        return fail(err, CXLSIM_ELIMIT, "count %llu of %u-byte elements on %d ranks: more than 2^64 bytes",
                    (unsigned long long)count, type_bytes[datatype], nranks);
    uint64_t bytes = count * type_bytes[datatype];
    if (coll == NCCL_ALLGATHER || coll == NCCL_REDUCESCATTER)
        bytes *= (uint64_t)nranks;
    cxlsim_collective q = { .size = sizeof q, .op = (uint32_t)ops[coll], .bytes = bytes, .ranks = (uint32_t)nranks,
                            .ranks_per_node = (uint32_t)(nranks / nnodes),
                            .algo = algo < 0 ? CXLSIM_ALGO_AUTO : algo == NCCL_ALGO_TREE ? CXLSIM_ALGO_TREE
                                                                                          : CXLSIM_ALGO_RING,
                            .proto = proto < 0 ? CXLSIM_PROTO_AUTO : (uint32_t)proto,
                            .channels = (uint32_t)nchannels };
    cxlsim_collective_result r;
    cxlsim_collective_result_init(&r);
    int rc = cxlsim_collective_time(p->cluster, &q, &r, err);
    if (rc)
        return rc;
    *delay_ps = r.time_ps;
    copy_out(res, &r, sizeof r, CXLSIM_SIZE_MIN(cxlsim_collective_result, loops));
    return 0;
}

double cxlsim_nccl_delay_ms(cxlsim_nccl *p, int coll, uint64_t count, int datatype, int nranks, int nnodes, int algo,
                            int proto, int nchannels)
{
    int64_t ps;
    int rc = cxlsim_nccl_delay(p, coll, count, datatype, nranks, nnodes, algo, proto, nchannels, &ps, NULL, NULL);
    return rc ? rc : (double)ps * 1e-9;
}

/* ---- replay ---- */

/* A field: one of names[] (case-insensitive; index, or values[index] when values is given), a number, or
 * "auto" when auto_value is not INT32_MIN. */
static int field(const char *s, const char *const *names, const int *values, int auto_value, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s && !*end) {
        *out = v;
        return 0;
    }
    if (auto_value != INT32_MIN && !strcasecmp(s, "auto")) {
        *out = auto_value;
        return 0;
    }
    for (int i = 0; names && names[i]; i++)
        if (!strcasecmp(s, names[i])) {
            *out = values ? values[i] : i;
            return 0;
        }
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int cxlsim_nccl_replay(cxlsim_nccl *p, FILE *in, const char *in_name, FILE *out, int64_t *total_ps, cxlsim_error *err)
{
    static const char *const colls[] = { "broadcast", "reduce", "allgather", "reducescatter", "allreduce", NULL };
    static const char *const types[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
                                         "float64", "bfloat16", NULL };
    static const char *const algos[] = { "tree", "ring", NULL };
    static const char *const protos[] = { "LL", "LL128", "Simple", NULL };
    static const char *const algo_used[] = { "ring", "tree", "hierarchical", "auto" };
    static const char *const keys[] = { "coll", "count", "datatype", "nranks", "nnodes", "algo", "proto", "nchannels" };
    const char *const *tables[8] = { colls, NULL, types, NULL, NULL, algos, protos, NULL };
    if (!p || !in || !total_ps)
        return fail(err, CXLSIM_EUSAGE, "cxlsim_nccl_replay: p, in and total_ps are required");
    in_name = in_name ? in_name : "<csv>";
    *total_ps = 0;
    char line[1024];
    int lineno = 0;
    if (out)
        fprintf(out, "coll,count,datatype,nranks,nnodes,algo,proto,nchannels,delay_ps,algo_used,proto_used\n");
    while (fgets(line, sizeof line, in)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(in))
            return fail(err, CXLSIM_ECONFIG, "%s:%d: line longer than %zu bytes", in_name, lineno, sizeof line - 2);
        char *s = trim(line);
        if (lineno == 1 || !*s || *s == '#')
            continue; /* the header, blank lines and comments */
        long long v[8];
        char *save = NULL, *tok = strtok_r(s, ",", &save);
        int col = 1, n = 0;
        for (; tok && n < 8; n++, tok = strtok_r(NULL, ",", &save)) {
            char *f = trim(tok);
            int auto_v = n == 5 || n == 6 ? -1 : INT32_MIN;
            if (field(f, tables[n], NULL, auto_v, &v[n]) || (n != 5 && n != 6 && v[n] < 0)) {
                fail(err, CXLSIM_ECONFIG, "%s: '%s' is not a valid value%s%s", keys[n], f,
                     tables[n] ? "; names: " : " (a whole number >= 0)", tables[n] ? "see cxlsim_nccl.h" : "");
                return at(err, CXLSIM_ECONFIG, in_name, lineno, col);
            }
            col += (int)strlen(tok) + 1;
        }
        if (n != 8 || tok) {
            fail(err, CXLSIM_ECONFIG, "expected 8 fields (coll,count,datatype,nranks,nnodes,algo,proto,nchannels)");
            return at(err, CXLSIM_ECONFIG, in_name, lineno, 1);
        }
        int64_t ps;
        cxlsim_collective_result r;
        cxlsim_collective_result_init(&r);
        int rc = cxlsim_nccl_delay(p, (int)v[0], (uint64_t)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5],
                                   (int)v[6], (int)v[7], &ps, &r, err);
        if (rc)
            return at(err, rc, in_name, lineno, 1);
        *total_ps += ps;
        if (out)
            fprintf(out, "%s,%llu,%s,%lld,%lld,%s,%s,%lld,%lld,%s,%s\n", colls[v[0]], (unsigned long long)v[1],
                    types[v[2]], v[3], v[4], v[5] < 0 ? "auto" : algos[v[5]], v[6] < 0 ? "auto" : protos[v[6]], v[7],
                    (long long)ps, algo_used[r.algo & 3], protos[r.proto < 3 ? r.proto : 2]);
    }
    if (ferror(in))
        return fail(err, CXLSIM_EIO, "%s: read error", in_name);
    return 0;
}
