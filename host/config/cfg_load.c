/* cfg_load.c - loading a configuration: from a file or a text, through its chain of `extends` parents (files
 * or presets, cycles refused), each merged under its child. */
#define _POSIX_C_SOURCE 200809L

#include "config/cfg.h"
#include "config/cfg_int.h"
#include "config/cfgnode.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

/* ---- extends ---- */

/* What read_file returns besides 0 and errno values. */
enum { CFG_RD_NOTREG = -1, CFG_RD_TOOBIG = -2 };

/* Read a whole stream of at most CFG_MAX_FILE bytes. Returns 0, an errno value or CFG_RD_TOOBIG. */
static int read_stream(FILE *f, char **buf, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    if (!b)
        return ENOMEM;
    for (;;) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                int e = errno ? errno : EIO;
                free(b);
                return e;
            }
            break;
        }
        if (n > CFG_MAX_FILE) {
            free(b);
            return CFG_RD_TOOBIG;
        }
        char *nb = realloc(b, cap * 2 + 1);
        if (!nb) {
            free(b);
            return ENOMEM;
        }
        b = nb;
        cap *= 2;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* Open and read a regular file, recording its identity. Opened without blocking, so that a FIFO with no
 * writer cannot stall the load before fstat() says what it is; anything but a regular file (FIFO,
 * device such as /dev/zero, folder, socket) is refused. Returns 0, an errno value, CFG_RD_NOTREG or
 * CFG_RD_TOOBIG. */
static int read_file(const char *path, char **buf, size_t *len, dev_t *dev, ino_t *ino)
{
    errno = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno ? errno : EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? EISDIR : CFG_RD_NOTREG;
    }
    if (st.st_size > CFG_MAX_FILE) {
        close(fd);
        return CFG_RD_TOOBIG;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int e = errno ? errno : EIO;
        close(fd);
        return e;
    }
    *dev = st.st_dev;
    *ino = st.st_ino;
    errno = 0;
    int e = read_stream(f, buf, len);
    fclose(f);
    return e;
}

/* Why read_file() failed, in words. */
static const char *read_why(int e, char *buf, size_t sz)
{
    if (e == CFG_RD_NOTREG)
        snprintf(buf, sz, "not a regular file (a FIFO, socket or device); a configuration is a YAML file");
    else if (e == CFG_RD_TOOBIG)
        snprintf(buf, sz, "larger than %d MiB, the most a configuration file may hold", CFG_MAX_FILE >> 20);
    else
        snprintf(buf, sz, "%s", strerror(e));
    return buf;
}

/* The folder part of a path, including its trailing slash ("" for a bare name). */
/* Remember that the document read the file at path (doc memory). 0 or -1 (out of memory). */
static int doc_add_file(cfg_doc *doc, const char *path)
{
    struct cfg_file *f = cfg_doc_alloc(doc, sizeof *f);
    if (!f)
        return -1;
    f->path = path;
    f->next = NULL;
    if (!doc->files_end)
        doc->files_end = &doc->files;
    *doc->files_end = f;
    doc->files_end = &f->next;
    return 0;
}

int cfg_each_file(const cfg_doc *doc, int (*fn)(void *ctx, const char *path), void *ctx)
{
    for (const struct cfg_file *f = doc->files; f; f = f->next) {
        int rc = fn(ctx, f->path);
        if (rc)
            return rc;
    }
    return 0;
}

static char *dir_prefix(cfg_doc *d, const char *path)
{
    const char *slash = strrchr(path, '/');
    return cfg_doc_strndup(d, path, slash ? (size_t)(slash - path) + 1 : 0);
}

static int same_source(const struct cfg_src *a, const struct cfg_src *b)
{
    if (a->kind != b->kind)
        return 0;
    if (a->kind == CFG_SRC_FILE)
        return a->dev == b->dev && a->ino == b->ino;
    if (a->kind == CFG_SRC_PRESET)
        return a->text == b->text || strcmp(a->name, b->name) == 0;
    return 0;
}

/* The index of key in dst's keys, through idx (dst's keys sorted by cfg_key_ix_cmp), or -1. */
static ptrdiff_t sorted_find(const struct key_ix *idx, size_t n, const char *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(idx[mid].key, key);
        if (c == 0)
            return (ptrdiff_t)idx[mid].ix;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Deep-merge src (the child) over dst (the parent): maps merge key by key, anything else replaces.
 * A merged map takes the child's location: that is the file the user is editing. The child's keys are
 * looked up among the parent's through a sorted index (a map's keys are unique, so the child's own keys
 * need no search): O((|dst| + |src|) log |dst|) per level, so a file of many keys cannot make it
 * quadratic. */
static int merge_into(struct cfg_loader *L, cfg_node *dst, const cfg_node *src)
{
    cfg_node **keys = cfg_doc_alloc(L->doc, (dst->n + src->n) * sizeof *keys);
    cfg_node **vals = cfg_doc_alloc(L->doc, (dst->n + src->n) * sizeof *vals);
    if (!keys || !vals)
        return cfg_oom(L);
    struct key_ix *idx = NULL;
    if (dst->n) {
        memcpy(keys, dst->keys, dst->n * sizeof *keys);
        memcpy(vals, dst->vals, dst->n * sizeof *vals);
        if (!(idx = malloc(dst->n * sizeof *idx)))
            return cfg_oom(L);
        for (size_t i = 0; i < dst->n; i++) {
            idx[i].key = dst->keys[i]->str;
            idx[i].ix = i;
        }
        qsort(idx, dst->n, sizeof *idx, cfg_key_ix_cmp);
    }
    size_t n = dst->n;
    for (size_t i = 0; i < src->n; i++) {
        cfg_node *k = src->keys[i], *v = src->vals[i];
        ptrdiff_t j = sorted_find(idx, dst->n, k->str);
        if (j < 0) {
            keys[n] = k;
            vals[n] = v;
            n++;
        } else if (vals[j]->kind == CFG_MAP && v->kind == CFG_MAP) {
            int rc = merge_into(L, vals[j], v);
            if (rc) {
                free(idx);
                return rc;
            }
            keys[j] = k;
        } else {
            keys[j] = k;
            vals[j] = v;
        }
    }
    free(idx);
    dst->keys = keys;
    dst->vals = vals;
    dst->n = n;
    dst->file = src->file;
    dst->line = src->line;
    dst->col = src->col;
    return 0;
}

static int load_source(struct cfg_loader *L, const char *prefix, const char *text, size_t len, cfg_node **out);

/* Resolve, load and merge the parent named by root's `extends` key, if any. */
static int apply_extends(struct cfg_loader *L, const char *prefix, cfg_node *root, cfg_node **out)
{
    ptrdiff_t ix = cfg_map_find(root, "extends");
    if (ix < 0) {
        *out = root;
        return 0;
    }
    const cfg_node *v = root->vals[ix];
    if (v->kind != CFG_SCALAR)
        return cfg_errf(L->err, v, "'extends' must name one parent (a file path or a preset name), not %s",
                        cfg_kind_name(v->kind));
    const char *name = v->str;
    if (!*name)
        return cfg_errf(L->err, v, "'extends' is empty; name a parent file (e.g. base.yaml) or a preset");
    memmove(&root->keys[ix], &root->keys[ix + 1], (root->n - (size_t)ix - 1) * sizeof *root->keys);
    memmove(&root->vals[ix], &root->vals[ix + 1], (root->n - (size_t)ix - 1) * sizeof *root->vals);
    root->n--;

    /* 1. A file relative to the including file's folder (absolute names as they are). */
    size_t plen = name[0] == '/' ? 0 : strlen(prefix), nlen = strlen(name);
    char *fpath = cfg_doc_alloc(L->doc, plen + nlen + 1);
    if (!fpath)
        return cfg_oom(L);
    memcpy(fpath, prefix, plen);
    memcpy(fpath + plen, name, nlen + 1);

    struct cfg_src src;
    memset(&src, 0, sizeof src);
    char *fbuf = NULL;
    const char *ptext = NULL, *pprefix = "";
    size_t ptlen = 0;
    int e = read_file(fpath, &fbuf, &ptlen, &src.dev, &src.ino);
    if (e == 0) {
        src.kind = CFG_SRC_FILE;
        src.name = fpath;
        ptext = fbuf;
        if (!(pprefix = dir_prefix(L->doc, fpath)) || doc_add_file(L->doc, fpath)) {
            free(fbuf);
            return cfg_oom(L);
        }
    } else if (e == ENOMEM) {
        return cfg_oom(L);
    } else if (e != ENOENT && e != ENOTDIR) {
        char why[160], cut[CFG_CLIP_SZ];
        return cxl_errf_at(L->err, CXL_EIO, v->file, v->line, v->col, "extends: cannot read '%s': %s",
                           cfg_clip(fpath, cut, sizeof cut), read_why(e, why, sizeof why));
    } else {
        /* 2. The caller's presets. */
        const char *rtext = NULL, *rname = NULL;
        if (!L->resolve || L->resolve(L->rctx, name, &rtext, &rname) != 0 || !rtext) {
            char cut[CFG_CLIP_SZ], cutp[CFG_CLIP_SZ];
            const char *shown = cfg_clip(name, cut, sizeof cut), *pshown = cfg_clip(fpath, cutp, sizeof cutp);
            if (L->resolve)
                return cfg_errf(L->err, v, "extends: '%s' not found: no file '%s' and no preset named '%s'",
                                shown, pshown, shown);
            return cfg_errf(L->err, v, "extends: '%s' not found: no file '%s' (and no preset resolver was given)",
                            shown, pshown);
        }
        src.kind = CFG_SRC_PRESET;
        src.text = rtext;
        if (!(src.name = cfg_doc_strdup(L->doc, rname ? rname : name)))
            return cfg_oom(L);
        ptext = rtext;
        ptlen = strlen(rtext);
    }

    int rc = 0;
    for (int i = 0; i < L->nchain && rc == 0; i++) {
        if (!same_source(&L->chain[i], &src))
            continue;
        char chain[sizeof L->err->msg];
        size_t clen = 0;
        for (int k = 0; k < L->nchain; k++)
            cfg_app(chain, sizeof chain, &clen, "%s -> ", L->chain[k].name);
        cfg_app(chain, sizeof chain, &clen, "%s", L->chain[i].name);
        rc = cfg_errf(L->err, v, "cyclic extends: %s", chain);
    }
    if (rc == 0 && L->nchain > CFG_MAX_EXTENDS)
        rc = cfg_errf(L->err, v, "extends: chain deeper than %d parents", CFG_MAX_EXTENDS);
    if (rc) {
        free(fbuf);
        return rc;
    }

    const char *saved_file = L->file;
    L->chain[L->nchain++] = src;
    L->file = src.name;
    cfg_node *proot = NULL;
    rc = load_source(L, pprefix, ptext, ptlen, &proot);
    L->file = saved_file;
    L->nchain--;
    free(fbuf);
    if (rc)
        return rc;
    rc = merge_into(L, proot, root);
    if (rc)
        return rc;
    *out = proot;
    return 0;
}

/* Load one source (already pushed on the chain, L->file set) and everything it extends. */
static int load_source(struct cfg_loader *L, const char *prefix, const char *text, size_t len, cfg_node **out)
{
    cfg_node *root = NULL;
    int rc = cfg_parse_source(L, text, len, &root);
    if (rc)
        return rc;
    return apply_extends(L, prefix, root, out);
}

static int load_common(struct cfg_loader *L, const struct cfg_src *src, const char *prefix, const char *text,
                       size_t len, cfg_doc **out)
{
    L->chain[0] = *src;
    L->nchain = 1;
    L->file = src->name;
    int rc = load_source(L, prefix, text, len, &L->doc->root);
    if (rc) {
        cfg_free(L->doc);
        return rc;
    }
    *out = L->doc;
    return 0;
}

static int loader_init(struct cfg_loader *L, cfg_resolve_fn resolve, void *ctx, cxl_err *err)
{
    memset(L, 0, sizeof *L);
    L->resolve = resolve;
    L->rctx = ctx;
    L->err = err;
    L->doc = calloc(1, sizeof *L->doc);
    if (!L->doc)
        return cfg_oom(L);
    return 0;
}

int cfg_load_file(const char *path, cfg_resolve_fn resolve, void *ctx, cfg_doc **out, cxl_err *err)
{
    cxl_err_clear(err);
    if (!out || !path)
        return cxl_errf(err, CXL_EINTERNAL, "cfg_load_file: NULL argument");
    *out = NULL;
    struct cfg_loader L;
    int rc = loader_init(&L, resolve, ctx, err);
    if (rc)
        return rc;
    struct cfg_src src;
    memset(&src, 0, sizeof src);
    src.kind = CFG_SRC_FILE;
    char *buf = NULL, *prefix = NULL;
    size_t len = 0;
    int e = read_file(path, &buf, &len, &src.dev, &src.ino);
    if (e) {
        cfg_free(L.doc);
        if (e == ENOMEM)
            return cxl_errf(err, CXL_ENOMEM, "out of memory reading '%s'", path);
        char why[160];
        return cxl_errf_at(err, CXL_EIO, path, 0, 0, "cannot read configuration file: %s",
                           read_why(e, why, sizeof why));
    }
    if (!(src.name = cfg_doc_strdup(L.doc, path)) || !(prefix = dir_prefix(L.doc, path)) ||
        doc_add_file(L.doc, src.name)) {
        free(buf);
        cfg_free(L.doc);
        return cfg_oom(&L);
    }
    rc = load_common(&L, &src, prefix, buf, len, out);
    free(buf);
    return rc;
}

int cfg_load_text(const char *display_name, const char *text, cfg_resolve_fn resolve, void *ctx, cfg_doc **out,
                  cxl_err *err)
{
    cxl_err_clear(err);
    if (!out || !text)
        return cxl_errf(err, CXL_EINTERNAL, "cfg_load_text: NULL argument");
    *out = NULL;
    struct cfg_loader L;
    int rc = loader_init(&L, resolve, ctx, err);
    if (rc)
        return rc;
    struct cfg_src src;
    memset(&src, 0, sizeof src);
    src.kind = CFG_SRC_TEXT;
    if (!(src.name = cfg_doc_strdup(L.doc, display_name ? display_name : "<text>"))) {
        cfg_free(L.doc);
        return cfg_oom(&L);
    }
    return load_common(&L, &src, "", text, strlen(text), out);
}
