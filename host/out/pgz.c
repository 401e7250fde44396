/* pgz.c - parallel gzip (see pgz.h). Blocks live in a ring of slots; a slot goes FREE -> FILLED (the
 * caller submitted it) -> BUSY (a worker deflates it) -> DONE -> written and FREE again, in sequence
 * order. Everything shared is under mu; the deflating itself runs unlocked. */
#include "out/pgz.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { S_FREE, S_FILLED, S_BUSY, S_DONE };

typedef struct pgz_slot {
    char *in;
    unsigned char *out;
    size_t len, outlen, outcap;
    uLong crc;
    uint64_t seq;
    int state, last, failed;
} pgz_slot;

typedef struct pgz_worker {
    pgz *z;
    z_stream zs;
    pthread_t th;
    int up, zs_up;
} pgz_worker;

struct pgz {
    outfile *f;
    pgz_slot *s;
    uint32_t ns, nw;
    pgz_worker *w;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    uint64_t fill, write;   /* sequence numbers: next block to fill, next to write */
    int quit;
    uLong crc;              /* of everything written so far */
    uint64_t total;
    int rc;
    cxl_err err;            /* the first error, for every later call */
};

static int pgz_fail(pgz *z, cxl_err *err, int code, const char *what)
{
    if (!z->rc)
        z->rc = cxl_errf(&z->err, code, "%s", what);
    if (err)
        *err = z->err;
    return z->rc;
}

/* Deflate one block: raw deflate, sync flush (byte-aligned end) or finish for the last. */
static void deflate_slot(pgz_worker *w, pgz_slot *s)
{
    deflateReset(&w->zs);
    w->zs.next_in = (unsigned char *)s->in;
    w->zs.avail_in = (uInt)s->len;
    w->zs.next_out = s->out;
    w->zs.avail_out = (uInt)s->outcap;
    int r = deflate(&w->zs, s->last ? Z_FINISH : Z_SYNC_FLUSH);
    s->failed = s->last ? r != Z_STREAM_END : (r != Z_OK || w->zs.avail_in != 0 || w->zs.avail_out == 0);
    s->outlen = s->outcap - w->zs.avail_out;
    s->crc = crc32(crc32(0L, Z_NULL, 0), (const unsigned char *)s->in, (uInt)s->len);
}

static void *worker_main(void *arg)
{
    pgz_worker *w = arg;
    pgz *z = w->z;
    pthread_mutex_lock(&z->mu);
    for (;;) {
        pgz_slot *job = NULL;
        for (uint32_t i = 0; i < z->ns; i++)
            if (z->s[i].state == S_FILLED && (!job || z->s[i].seq < job->seq))
                job = &z->s[i];
        if (!job) {
            if (z->quit)
                break;
            pthread_cond_wait(&z->work, &z->mu);
            continue;
        }
        job->state = S_BUSY;
        pthread_mutex_unlock(&z->mu);
        deflate_slot(w, job);
        pthread_mutex_lock(&z->mu);
        job->state = S_DONE;
        pthread_cond_broadcast(&z->done);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

/* Write finished blocks in order until every block before sequence number `upto` is out. */
static int write_upto(pgz *z, uint64_t upto, cxl_err *err)
{
    while (!z->rc && z->write < upto) {
        pgz_slot *s = &z->s[z->write % z->ns];
        pthread_mutex_lock(&z->mu);
        while (s->state != S_DONE)
            pthread_cond_wait(&z->done, &z->mu);
        pthread_mutex_unlock(&z->mu);
        if (s->failed)
            return pgz_fail(z, err, CXL_EINTERNAL, "internal: deflate failed on a trace block");
        if (outfile_put(z->f, s->out, s->outlen, &z->err)) {
            z->rc = z->err.code;
            break;
        }
        z->crc = crc32_combine(z->crc, s->crc, (z_off_t)s->len);
        z->total += s->len;
        pthread_mutex_lock(&z->mu);
        s->state = S_FREE;
        pthread_mutex_unlock(&z->mu);
        z->write++;
    }
    if (z->rc && err)
        *err = z->err;
    return z->rc;
}

int pgz_open(pgz **out, outfile *f, uint32_t workers, int level, cxl_err *err)
{
    *out = NULL;
    if (workers < 1)
        workers = 1;
    if (workers > 16)
        workers = 16;
    pgz *z = calloc(1, sizeof *z);
    if (!z)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (gzip)");
    z->f = f;
    z->nw = workers;
    z->ns = workers + 2;
    z->crc = crc32(0L, Z_NULL, 0);
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->work, NULL);
    pthread_cond_init(&z->done, NULL);
    z->s = calloc(z->ns, sizeof *z->s);
    z->w = calloc(z->nw, sizeof *z->w);
    int ok = z->s && z->w;
    size_t outcap = compressBound(PGZ_BLOCK) + 64;
    for (uint32_t i = 0; ok && i < z->ns; i++) {
        z->s[i].in = malloc(PGZ_BLOCK);
        z->s[i].out = malloc(outcap);
        z->s[i].outcap = outcap;
        ok = z->s[i].in && z->s[i].out;
    }
    for (uint32_t i = 0; ok && i < z->nw; i++) {
        pgz_worker *w = &z->w[i];
        w->z = z;
        /* windowBits -15: raw deflate, the gzip wrapping is ours */
        ok = deflateInit2(&w->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
        w->zs_up = ok;
        ok = ok && pthread_create(&w->th, NULL, worker_main, w) == 0;
        w->up = ok;
    }
    if (!ok) {
        pgz_free(z);
        return cxl_errf(err, CXL_ENOMEM, "out of memory (gzip threads)");
    }
    /* RFC 1952 header: deflate, no flags, mtime 0 (reproducible), no extra flags, OS Unix */
    static const unsigned char hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
    int rc = outfile_put(f, hdr, sizeof hdr, err);
    if (rc) {
        pgz_free(z);
        return rc;
    }
    *out = z;
    return 0;
}

char *pgz_block(pgz *z, cxl_err *err)
{
    /* the slot's previous block (sequence fill - ns) must be written first */
    if (z->fill >= z->ns && write_upto(z, z->fill - z->ns + 1, err))
        return NULL;
    if (z->rc) {
        *err = z->err;
        return NULL;
    }
    return z->s[z->fill % z->ns].in;
}

int pgz_submit(pgz *z, size_t len, int last, cxl_err *err)
{
    if (z->rc) {
        *err = z->err;
        return z->rc;
    }
    pgz_slot *s = &z->s[z->fill % z->ns];
    pthread_mutex_lock(&z->mu);
    s->len = len;
    s->last = last;
    s->seq = z->fill++;
    s->state = S_FILLED;
    pthread_cond_signal(&z->work);
    pthread_mutex_unlock(&z->mu);
    return 0;
}

int pgz_finish(pgz *z, cxl_err *err)
{
    if (write_upto(z, z->fill, err))
        return z->rc;
    unsigned char tr[8];
    uint32_t size = (uint32_t)z->total; /* ISIZE: the length modulo 2^32 */
    for (int i = 0; i < 4; i++) {
        tr[i] = (unsigned char)(z->crc >> (8 * i));
        tr[4 + i] = (unsigned char)(size >> (8 * i));
    }
    if (outfile_put(z->f, tr, sizeof tr, &z->err))
        z->rc = z->err.code;
    if (z->rc)
        *err = z->err;
    return z->rc;
}

void pgz_free(pgz *z)
{
    if (!z)
        return;
    pthread_mutex_lock(&z->mu);
    z->quit = 1;
    pthread_cond_broadcast(&z->work);
    pthread_mutex_unlock(&z->mu);
    for (uint32_t i = 0; z->w && i < z->nw; i++) {
        if (z->w[i].up)
            pthread_join(z->w[i].th, NULL);
        if (z->w[i].zs_up)
            deflateEnd(&z->w[i].zs);
    }
    for (uint32_t i = 0; z->s && i < z->ns; i++) {
        free(z->s[i].in);
        free(z->s[i].out);
    }
    free(z->s);
    free(z->w);
    pthread_mutex_destroy(&z->mu);
    pthread_cond_destroy(&z->work);
    pthread_cond_destroy(&z->done);
    free(z);
}
