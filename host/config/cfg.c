/* cfg.c - YAML configuration loading (libyaml document API), `extends` inheritance, and struct binding.
 *
 * Ownership: every node, string and array of a document lives in the document's block list (doc_alloc)
 * and is released by cfg_free() alone. Merging for `extends` therefore only moves pointers between trees
 * of the same document, and every error path simply frees the document.
 *
 * Parsing is two passes over the same text: an event pass (yaml_parser_parse) that rejects anchors,
 * aliases and multi-document streams, which the document API hides (it resolves aliases and forgets
 * anchor names), then yaml_parser_load() to build the node tree with marks. Config files are small, so
 * the second pass costs nothing that matters.
 */
#define _POSIX_C_SOURCE 200809L

#include "config/cfg.h"
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

#include <yaml.h>

enum {
    CFG_MAX_NEST = 64,       /* mapping/sequence nesting; bounds the recursion of conversion and merge */
    CFG_MAX_EXTENDS = 32,    /* parents in one `extends` chain */
    CFG_MAX_DIGITS = 64,     /* significant digits accepted in a number with a unit */
    CFG_MAX_KEYLEN = 64,     /* longest key compared for "did you mean" */
    CFG_SHOW_MAX = 64,       /* bytes of a value or key quoted in a message before it is cut */
    CFG_MAX_FILE = 16 << 20  /* bytes of one configuration file (bounds memory and time of a load) */
};

typedef union cfg_blk {
    union cfg_blk *next;
    max_align_t align_;
} cfg_blk;

/* A file the document was read from (the loaded file, then each `extends` parent that is a file). */
struct cfg_file {
    const char *path;
    struct cfg_file *next;
};

struct cfg_doc {
    cfg_blk *blocks;
    cfg_node *root;
    struct cfg_file *files, **files_end;
};

/* Where a source in an `extends` chain came from, to detect cycles. */
enum cfg_src_kind { CFG_SRC_TEXT, CFG_SRC_FILE, CFG_SRC_PRESET };
struct cfg_src {
    enum cfg_src_kind kind;
    const char *name;    /* display name */
    const char *text;    /* CFG_SRC_PRESET: the resolver's text */
    dev_t dev;           /* CFG_SRC_FILE */
    ino_t ino;
};

struct cfg_loader {
    cfg_doc *doc;
    cfg_resolve_fn resolve;
    void *rctx;
    cxl_err *err;
    struct cfg_src chain[CFG_MAX_EXTENDS + 1];
    int nchain;
    const char *file;    /* display name of the source being converted */
    char path[256];      /* key path of the node being converted, for messages */
    size_t plen;
};

/* ---- document memory ---- */

static void *doc_alloc(cfg_doc *d, size_t sz)
{
    cfg_blk *b = malloc(sizeof *b + (sz ? sz : 1));
    if (!b)
        return NULL;
    b->next = d->blocks;
    d->blocks = b;
    return b + 1;
}

static char *doc_strndup(cfg_doc *d, const char *s, size_t n)
{
    char *p = doc_alloc(d, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char *doc_strdup(cfg_doc *d, const char *s)
{
    return doc_strndup(d, s, strlen(s));
}

void *cfg_doc_alloc(cfg_doc *doc, size_t sz) { return doc_alloc(doc, sz); }

char *cfg_doc_strdup(cfg_doc *doc, const char *s) { return doc_strdup(doc, s); }

cfg_node *cfg_doc_root(cfg_doc *doc) { return doc ? doc->root : NULL; }

void cfg_doc_adopt(cfg_doc *dst, cfg_doc *src)
{
    /* src is the small one (a value): walk its chain, not dst's */
    cfg_blk **tail = &src->blocks;
    while (*tail)
        tail = &(*tail)->next;
    *tail = dst->blocks;
    dst->blocks = src->blocks;
    free(src);
}

void cfg_free(cfg_doc *doc)
{
    if (!doc)
        return;
    cfg_blk *b = doc->blocks;
    while (b) {
        cfg_blk *next = b->next;
        free(b);
        b = next;
    }
    free(doc);
}

/* ---- small text helpers ---- */

/* Append printf output to buf (size sz, current length *len), truncating silently. */
static void app(char *buf, size_t sz, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void app(char *buf, size_t sz, size_t *len, const char *fmt, ...)
{
    if (*len >= sz)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf + *len, sz - *len, fmt, ap);
    va_end(ap);
    if (r > 0)
        *len = (size_t)r >= sz - *len ? sz - 1 : *len + (size_t)r;
}

static void set_why(char *why, size_t whysz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t whysz, const char *fmt, ...)
{
    if (!why || !whysz)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whysz, fmt, ap);
    va_end(ap);
}

/* s as quoted in a message: whole when short, else its first CFG_SHOW_MAX bytes (cut at a UTF-8
 * character boundary) and the full length, so that the reason after it always fits the message. */
const char *cfg_clip(const char *s, char *buf, size_t sz)
{
    size_t len = strlen(s);
    if (len <= CFG_SHOW_MAX)
        return s;
    size_t cut = CFG_SHOW_MAX;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(buf, sz, "%.*s... (%zu bytes)", (int)cut, s, len);
    return buf;
}

static const char *kind_name(enum cfg_kind k)
{
    switch (k) {
    case CFG_MAP: return "a mapping";
    case CFG_SEQ: return "a sequence";
    default: return "a scalar";
    }
}

/* Optimal string alignment distance (Levenshtein plus adjacent transposition), ASCII case-insensitive.
 * O(|a|*|b|); keys longer than CFG_MAX_KEYLEN count as far from everything. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > CFG_MAX_KEYLEN || lb > CFG_MAX_KEYLEN)
        return INT_MAX / 2;
    int d[CFG_MAX_KEYLEN + 1][CFG_MAX_KEYLEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int cost = ca != cb;
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

/* Whether a candidate at distance d is close enough to a typed word to suggest it. */
static int close_enough(const char *typed, int d)
{
    int len = (int)strlen(typed);
    int limit = 1 + len / 5;
    if (limit > 3)
        limit = 3;
    return d <= limit && d < len;
}

/* ---- error helpers ---- */

int cfg_errf(cxl_err *err, const cfg_node *at, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!at)
        return cxl_errf(err, CXL_ECONFIG, "%s", msg);
    return cxl_errf_at(err, CXL_ECONFIG, at->file, at->line, at->col, "%s", msg);
}

static int oom(struct cfg_loader *L)
{
    return cxl_errf(L->err, CXL_ENOMEM, "out of memory while loading configuration");
}

static int err_at_mark(struct cfg_loader *L, yaml_mark_t m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err_at_mark(struct cfg_loader *L, yaml_mark_t m, const char *fmt, ...)
{
    char msg[sizeof L->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cxl_errf_at(L->err, CXL_ECONFIG, L->file, (int)m.line + 1, (int)m.column + 1, "%s", msg);
}

/* Turn a libyaml failure into an error record. */
static int yaml_fail(struct cfg_loader *L, const yaml_parser_t *p, const char *text, size_t len)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return oom(L);
    case YAML_READER_ERROR: {
        /* Reader errors (bad encoding, control characters) carry a byte offset, not a mark. */
        int line = 1, col = 1;
        for (size_t i = 0; i < p->problem_offset && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if (p->problem_value != -1)
            return cxl_errf_at(L->err, CXL_ECONFIG, L->file, line, col,
                               "invalid input: %s (byte 0x%02X at offset %zu); configuration files are UTF-8 text",
                               problem, (unsigned)p->problem_value, p->problem_offset);
        return cxl_errf_at(L->err, CXL_ECONFIG, L->file, line, col,
                           "invalid input: %s (at byte offset %zu); configuration files are UTF-8 text", problem,
                           p->problem_offset);
    }
    default:
        if (p->context)
            return err_at_mark(L, p->problem_mark, "YAML syntax error: %s (%s at line %d, column %d)", problem,
                               p->context, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
        return err_at_mark(L, p->problem_mark, "YAML syntax error: %s", problem);
    }
}

/* The offset of the first byte of text that does not start a valid UTF-8 sequence (overlong forms,
 * surrogates and code points above U+10FFFF included), or len when all is valid. libyaml reports such
 * input at the byte after the bad one (a Latin-1 'e acute' followed by a newline is "byte 0x0A"), so
 * the loader checks first and names the byte itself. O(len). */
static size_t utf8_bad_offset(const unsigned char *t, size_t len)
{
    static const uint32_t least[4] = { 0, 0x80, 0x800, 0x10000 };
    size_t i = 0;
    while (i < len) {
        unsigned c = t[i];
        size_t n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 4;
        if (n == 4)
            return i;
        uint32_t cp = c & (0x7Fu >> n);
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (t[i + k] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (t[i + k] & 0x3Fu);
        }
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n + 1;
    }
    return len;
}

/* An error at byte offset off of text: line and column counted in characters up to it. */
static int err_at_offset(struct cfg_loader *L, const char *text, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int err_at_offset(struct cfg_loader *L, const char *text, size_t off, const char *fmt, ...)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            col++;
        }
    }
    char msg[sizeof L->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cxl_errf_at(L->err, CXL_ECONFIG, L->file, line, col, "%s", msg);
}

/* ---- pass 1: events (anchors, aliases, document count, syntax) ---- */

static int scan_events(struct cfg_loader *L, const char *text, size_t len)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return oom(L);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = 0, docs = 0, done = 0;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = yaml_fail(L, &p, text, len);
            break;
        }
        const yaml_char_t *anchor = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = err_at_mark(L, ev.start_mark,
                                 "a second YAML document starts here; a configuration file holds exactly one "
                                 "document (one mapping)");
            break;
        case YAML_ALIAS_EVENT:
            rc = err_at_mark(L, ev.start_mark,
                             "alias '*%s' is not allowed: write the value out, so that every value has one "
                             "location (use 'extends' to share settings between files)",
                             (const char *)ev.data.alias.anchor);
            break;
        case YAML_SCALAR_EVENT: anchor = ev.data.scalar.anchor; break;
        case YAML_SEQUENCE_START_EVENT: anchor = ev.data.sequence_start.anchor; break;
        case YAML_MAPPING_START_EVENT: anchor = ev.data.mapping_start.anchor; break;
        default: break;
        }
        if (anchor && rc == 0)
            rc = err_at_mark(L, ev.start_mark,
                             "anchor '&%s' is not allowed: anchors and aliases make error locations ambiguous "
                             "(use 'extends' to share settings between files)",
                             (const char *)anchor);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    if (rc == 0 && docs == 0)
        rc = cxl_errf_at(L->err, CXL_ECONFIG, L->file, 1, 1,
                         "the file is empty; a configuration is one YAML mapping, e.g. 'link: {width: 16}'");
    return rc;
}

/* ---- pass 2: document -> node tree ---- */

static void path_push_key(struct cfg_loader *L, const char *key, size_t *saved)
{
    *saved = L->plen;
    size_t len = L->plen;
    app(L->path, sizeof L->path, &len, "%s%s", len ? "." : "", key);
    L->plen = len;
}

static void path_push_index(struct cfg_loader *L, size_t i, size_t *saved)
{
    *saved = L->plen;
    size_t len = L->plen;
    app(L->path, sizeof L->path, &len, "[%zu]", i);
    L->plen = len;
}

static void path_pop(struct cfg_loader *L, size_t saved)
{
    L->plen = saved;
    L->path[saved] = '\0';
}

static cfg_node *new_node(struct cfg_loader *L, enum cfg_kind kind, yaml_mark_t m)
{
    cfg_node *n = doc_alloc(L->doc, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->file = L->file;
    n->line = (int)m.line + 1;
    n->col = (int)m.column + 1;
    return n;
}

struct key_ix {
    const char *key;
    size_t ix;
};

static int key_ix_cmp(const void *a, const void *b)
{
    const struct key_ix *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* Reject duplicate keys in map m. Sorting makes it O(n log n) so a hostile file cannot make it quadratic;
 * the reported duplicate is the earliest second occurrence in the file. */
static int check_dup_keys(struct cfg_loader *L, const cfg_node *m)
{
    if (m->n < 2)
        return 0;
    struct key_ix *v = malloc(m->n * sizeof *v);
    if (!v)
        return oom(L);
    for (size_t i = 0; i < m->n; i++) {
        v[i].key = m->keys[i]->str;
        v[i].ix = i;
    }
    qsort(v, m->n, sizeof *v, key_ix_cmp);
    size_t first = 0, second = SIZE_MAX;
    for (size_t i = 1; i < m->n; i++) {
        if (strcmp(v[i].key, v[i - 1].key) == 0) {
            size_t run = i - 1;
            while (run > 0 && strcmp(v[run - 1].key, v[i].key) == 0)
                run--;
            if (v[i].ix < second) {
                second = v[i].ix;
                first = v[run].ix;
            }
        }
    }
    free(v);
    if (second == SIZE_MAX)
        return 0;
    const cfg_node *k2 = m->keys[second], *k1 = m->keys[first];
    size_t saved;
    path_push_key(L, k2->str, &saved);
    int rc = cfg_errf(L->err, k2, "duplicate key '%s': first defined at line %d, column %d; a key may appear once "
                      "per mapping", L->path, k1->line, k1->col);
    path_pop(L, saved);
    return rc;
}

static int convert(struct cfg_loader *L, yaml_document_t *yd, int index, int depth, cfg_node **out)
{
    yaml_node_t *yn = yaml_document_get_node(yd, index);
    if (!yn)
        return cxl_errf(L->err, CXL_EINTERNAL, "libyaml document refers to a missing node %d", index);
    if (depth > CFG_MAX_NEST)
        return err_at_mark(L, yn->start_mark, "nesting deeper than %d levels", CFG_MAX_NEST);

    switch (yn->type) {
    case YAML_SCALAR_NODE: {
        const char *v = (const char *)yn->data.scalar.value;
        size_t len = yn->data.scalar.length;
        if (memchr(v, '\0', len))
            return err_at_mark(L, yn->start_mark, "a NUL character is not allowed in a value");
        cfg_node *n = new_node(L, CFG_SCALAR, yn->start_mark);
        if (!n || !(n->str = doc_strndup(L->doc, v, len)))
            return oom(L);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return 0;
    }
    case YAML_SEQUENCE_NODE: {
        cfg_node *n = new_node(L, CFG_SEQ, yn->start_mark);
        if (!n)
            return oom(L);
        n->n = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        if (!(n->vals = doc_alloc(L->doc, n->n * sizeof *n->vals)))
            return oom(L);
        for (size_t i = 0; i < n->n; i++) {
            size_t saved;
            path_push_index(L, i, &saved);
            int rc = convert(L, yd, yn->data.sequence.items.start[i], depth + 1, &n->vals[i]);
            path_pop(L, saved);
            if (rc)
                return rc;
        }
        *out = n;
        return 0;
    }
    case YAML_MAPPING_NODE: {
        cfg_node *n = new_node(L, CFG_MAP, yn->start_mark);
        if (!n)
            return oom(L);
        n->n = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        if (!(n->keys = doc_alloc(L->doc, n->n * sizeof *n->keys)) ||
            !(n->vals = doc_alloc(L->doc, n->n * sizeof *n->vals)))
            return oom(L);
        /* Keys first, so a duplicate is reported before anything nested below it. */
        for (size_t i = 0; i < n->n; i++) {
            yaml_node_t *yk = yaml_document_get_node(yd, yn->data.mapping.pairs.start[i].key);
            if (yk && yk->type != YAML_SCALAR_NODE)
                return err_at_mark(L, yk->start_mark, "a key must be a plain name, not %s",
                                   yk->type == YAML_MAPPING_NODE ? "a mapping" : "a sequence");
            int rc = convert(L, yd, yn->data.mapping.pairs.start[i].key, depth + 1, &n->keys[i]);
            if (rc)
                return rc;
        }
        int rc = check_dup_keys(L, n);
        if (rc)
            return rc;
        for (size_t i = 0; i < n->n; i++) {
            size_t saved;
            path_push_key(L, n->keys[i]->str, &saved);
            rc = convert(L, yd, yn->data.mapping.pairs.start[i].value, depth + 1, &n->vals[i]);
            path_pop(L, saved);
            if (rc)
                return rc;
        }
        *out = n;
        return 0;
    }
    default:
        return err_at_mark(L, yn->start_mark, "empty YAML node");
    }
}

/* Parse one source into a tree whose root is a mapping. */
static int parse_source(struct cfg_loader *L, const char *text, size_t len, cfg_node **out)
{
    size_t bad = utf8_bad_offset((const unsigned char *)text, len);
    if (bad < len)
        return err_at_offset(L, text, bad, "invalid input: byte 0x%02X (offset %zu) is not UTF-8; configuration "
                             "files are UTF-8 text (a Latin-1 file converts with iconv -f latin1 -t utf-8)",
                             (unsigned)(unsigned char)text[bad], bad);
    int rc = scan_events(L, text, len);
    if (rc)
        return rc;

    yaml_parser_t p;
    yaml_document_t yd;
    if (!yaml_parser_initialize(&p))
        return oom(L);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &yd)) {
        rc = yaml_fail(L, &p, text, len);
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_node_t *yroot = yaml_document_get_root_node(&yd);
    if (!yroot) {
        rc = cxl_errf_at(L->err, CXL_ECONFIG, L->file, 1, 1,
                         "the file is empty; a configuration is one YAML mapping, e.g. 'link: {width: 16}'");
    } else if (yroot->type != YAML_MAPPING_NODE) {
        rc = err_at_mark(L, yroot->start_mark,
                         "the top level must be a mapping of keys (e.g. 'link: {width: 16}'), not %s",
                         yroot->type == YAML_SEQUENCE_NODE ? "a sequence" : "a scalar");
    } else {
        L->plen = 0;
        L->path[0] = '\0';
        rc = convert(L, &yd, 1, 0, out);
    }
    yaml_document_delete(&yd);
    yaml_parser_delete(&p);
    return rc;
}

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
    struct cfg_file *f = doc_alloc(doc, sizeof *f);
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
    return doc_strndup(d, path, slash ? (size_t)(slash - path) + 1 : 0);
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

static ptrdiff_t map_find(const cfg_node *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->keys[i]->str, key) == 0)
            return (ptrdiff_t)i;
    return -1;
}

/* The index of key in dst's keys, through idx (dst's keys sorted by key_ix_cmp), or -1. */
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
    cfg_node **keys = doc_alloc(L->doc, (dst->n + src->n) * sizeof *keys);
    cfg_node **vals = doc_alloc(L->doc, (dst->n + src->n) * sizeof *vals);
    if (!keys || !vals)
        return oom(L);
    struct key_ix *idx = NULL;
    if (dst->n) {
        memcpy(keys, dst->keys, dst->n * sizeof *keys);
        memcpy(vals, dst->vals, dst->n * sizeof *vals);
        if (!(idx = malloc(dst->n * sizeof *idx)))
            return oom(L);
        for (size_t i = 0; i < dst->n; i++) {
            idx[i].key = dst->keys[i]->str;
            idx[i].ix = i;
        }
        qsort(idx, dst->n, sizeof *idx, key_ix_cmp);
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
    ptrdiff_t ix = map_find(root, "extends");
    if (ix < 0) {
        *out = root;
        return 0;
    }
    const cfg_node *v = root->vals[ix];
    if (v->kind != CFG_SCALAR)
        return cfg_errf(L->err, v, "'extends' must name one parent (a file path or a preset name), not %s",
                        kind_name(v->kind));
    const char *name = v->str;
    if (!*name)
        return cfg_errf(L->err, v, "'extends' is empty; name a parent file (e.g. base.yaml) or a preset");
    memmove(&root->keys[ix], &root->keys[ix + 1], (root->n - (size_t)ix - 1) * sizeof *root->keys);
    memmove(&root->vals[ix], &root->vals[ix + 1], (root->n - (size_t)ix - 1) * sizeof *root->vals);
    root->n--;

    /* 1. A file relative to the including file's folder (absolute names as they are). */
    size_t plen = name[0] == '/' ? 0 : strlen(prefix), nlen = strlen(name);
    char *fpath = doc_alloc(L->doc, plen + nlen + 1);
    if (!fpath)
        return oom(L);
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
            return oom(L);
        }
    } else if (e == ENOMEM) {
        return oom(L);
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
        if (!(src.name = doc_strdup(L->doc, rname ? rname : name)))
            return oom(L);
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
            app(chain, sizeof chain, &clen, "%s -> ", L->chain[k].name);
        app(chain, sizeof chain, &clen, "%s", L->chain[i].name);
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
    int rc = parse_source(L, text, len, &root);
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
        return oom(L);
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
    if (!(src.name = doc_strdup(L.doc, path)) || !(prefix = dir_prefix(L.doc, path)) ||
        doc_add_file(L.doc, src.name)) {
        free(buf);
        cfg_free(L.doc);
        return oom(&L);
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
    if (!(src.name = doc_strdup(L.doc, display_name ? display_name : "<text>"))) {
        cfg_free(L.doc);
        return oom(&L);
    }
    return load_common(&L, &src, "", text, strlen(text), out);
}

/* ---- suggestions ---- */

int cfg_suggest(const char *typed, const char *const *choices)
{
    int best = -1, bestd = INT_MAX;
    for (int i = 0; typed && choices && choices[i]; i++) {
        int d = edit_distance(typed, choices[i]);
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return best >= 0 && close_enough(typed, bestd) ? best : -1;
}

/* ---- tree access ---- */

const cfg_node *cfg_root(const cfg_doc *doc)
{
    return doc ? doc->root : NULL;
}

enum cfg_kind cfg_kind(const cfg_node *n)
{
    return n ? n->kind : CFG_SCALAR;
}

const char *cfg_scalar(const cfg_node *n)
{
    return n && n->kind == CFG_SCALAR ? n->str : NULL;
}

size_t cfg_map_size(const cfg_node *n)
{
    return n && n->kind == CFG_MAP ? n->n : 0;
}

const char *cfg_map_key(const cfg_node *n, size_t i)
{
    return n && n->kind == CFG_MAP && i < n->n ? n->keys[i]->str : NULL;
}

const cfg_node *cfg_map_value(const cfg_node *n, size_t i)
{
    return n && n->kind == CFG_MAP && i < n->n ? n->vals[i] : NULL;
}

const cfg_node *cfg_map_key_node(const cfg_node *n, size_t i)
{
    return n && n->kind == CFG_MAP && i < n->n ? n->keys[i] : NULL;
}

const cfg_node *cfg_map_get(const cfg_node *n, const char *key)
{
    if (!n || n->kind != CFG_MAP || !key)
        return NULL;
    ptrdiff_t i = map_find(n, key);
    return i < 0 ? NULL : n->vals[i];
}

size_t cfg_seq_size(const cfg_node *n)
{
    return n && n->kind == CFG_SEQ ? n->n : 0;
}

const cfg_node *cfg_seq_at(const cfg_node *n, size_t i)
{
    return n && n->kind == CFG_SEQ && i < n->n ? n->vals[i] : NULL;
}

void cfg_mark(const cfg_node *n, const char **file, int *line, int *col)
{
    if (file)
        *file = n ? n->file : "";
    if (line)
        *line = n ? n->line : 0;
    if (col)
        *col = n ? n->col : 0;
}

/* ---- numbers and units ---- */

/* A unit is 2^p2 * 5^p5 of the stored unit, so every conversion is exact integer arithmetic. */
struct cfg_unit {
    const char *name;
    int p2, p5;
};

struct cfg_unit_kind {
    const struct cfg_unit *units;   /* terminated by name NULL */
    const char *stored;             /* stored unit, for messages */
    const char *example;
};

static const struct cfg_unit time_units[] = {
    {"ps", 0, 0}, {"ns", 3, 3}, {"us", 6, 6}, {"ms", 9, 9}, {"s", 12, 12}, {NULL, 0, 0}};
static const struct cfg_unit rate_units[] = {{"MT/s", 0, 0}, {"GT/s", 3, 3}, {NULL, 0, 0}};
static const struct cfg_unit freq_units[] = {
    {"Hz", -3, -3}, {"kHz", 0, 0}, {"MHz", 3, 3}, {"GHz", 6, 6}, {NULL, 0, 0}};
static const struct cfg_unit size_units[] = {
    {"B", 0, 0},    {"KB", 3, 3},    {"MB", 6, 6},    {"GB", 9, 9},    {"TB", 12, 12},
    {"PB", 15, 15}, {"KiB", 10, 0}, {"MiB", 20, 0}, {"GiB", 30, 0}, {"TiB", 40, 0}, {"PiB", 50, 0},
    {NULL, 0, 0}};
static const struct cfg_unit bw_units[] = {
    {"B/s", 0, 0},    {"KB/s", 3, 3},    {"MB/s", 6, 6},    {"GB/s", 9, 9},    {"TB/s", 12, 12},
    {"KiB/s", 10, 0}, {"MiB/s", 20, 0}, {"GiB/s", 30, 0}, {"TiB/s", 40, 0},
    /* bit rates (network links): 1 b/s = 2^-3 B/s */
    {"Kb/s", 0, 3},   {"Mb/s", 3, 6},   {"Gb/s", 6, 9},   {"Tb/s", 9, 12},  {NULL, 0, 0}};

static const struct cfg_unit_kind time_kind = {time_units, "ps", "90ns"};
static const struct cfg_unit_kind rate_kind = {rate_units, "MT/s", "32GT/s"};
static const struct cfg_unit_kind freq_kind = {freq_units, "kHz", "1.5GHz"};
static const struct cfg_unit_kind size_kind = {size_units, "B", "64KiB"};
static const struct cfg_unit_kind bw_kind = {bw_units, "B/s", "25.6GB/s"};

static void unit_list(const struct cfg_unit_kind *k, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const struct cfg_unit *u = k->units; u->name; u++)
        app(buf, sz, &len, "%s%s", u == k->units ? "" : ", ", u->name);
}

/* Divide the decimal number d[0..*n) (most significant first) by a small divisor in place; returns the
 * remainder. Leading zeros are stripped. */
static unsigned digits_div(unsigned char *d, size_t *n, unsigned divisor)
{
    unsigned rem = 0;
    for (size_t i = 0; i < *n; i++) {
        unsigned cur = rem * 10 + d[i];
        d[i] = (unsigned char)(cur / divisor);
        rem = cur % divisor;
    }
    size_t z = 0;
    while (z < *n && d[z] == 0)
        z++;
    memmove(d, d + z, *n - z);
    *n -= z;
    return rem;
}

/* "<digits>[.<digits>][ ]<unit>" -> stored unit, exactly: the digits are kept as a decimal string, divided
 * exactly by 2 and 5 where the unit and the decimal point require it, then multiplied up with overflow
 * checks. No floating point is involved. */
static int parse_unit_value(const char *s, const struct cfg_unit_kind *k, uint64_t *out, char *why, size_t whysz)
{
    char units[128];
    unit_list(k, units, sizeof units);
    if (!s || !*s) {
        set_why(why, whysz, "empty value; expected a number with a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    if (*s == '-') {
        set_why(why, whysz, "negative values are not allowed; expected e.g. %s", k->example);
        return -1;
    }
    if (!isdigit((unsigned char)*s)) {
        set_why(why, whysz, "expected a number with a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    const char *ip = s, *p = s;
    while (isdigit((unsigned char)*p))
        p++;
    size_t iplen = (size_t)(p - ip);
    const char *fp = NULL;
    size_t fplen = 0;
    if (*p == '.') {
        fp = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        fplen = (size_t)(p - fp);
        if (fplen == 0) {
            set_why(why, whysz, "expected digits after the decimal point, e.g. %s", k->example);
            return -1;
        }
    }
    if (*p == ' ' && p[1] != '\0')
        p++;
    if (*p == '\0') {
        set_why(why, whysz, "needs a unit, e.g. %s (units: %s)", k->example, units);
        return -1;
    }
    const struct cfg_unit *u = k->units;
    while (u->name && strcmp(u->name, p) != 0)
        u++;
    if (!u->name) {
        set_why(why, whysz, "unknown unit '%s'; accepted units: %s", p, units);
        return -1;
    }

    /* Significant digits: integer part without leading zeros, fraction without trailing zeros. */
    while (iplen > 0 && *ip == '0') {
        ip++;
        iplen--;
    }
    while (fplen > 0 && fp[fplen - 1] == '0')
        fplen--;
    if (iplen + fplen > CFG_MAX_DIGITS) {
        set_why(why, whysz, "too many digits (at most %d significant digits)", CFG_MAX_DIGITS);
        return -1;
    }
    unsigned char d[CFG_MAX_DIGITS];
    size_t n = 0;
    for (size_t i = 0; i < iplen; i++)
        d[n++] = (unsigned char)(ip[i] - '0');
    for (size_t i = 0; i < fplen; i++)
        d[n++] = (unsigned char)(fp[i] - '0');
    size_t z = 0;
    while (z < n && d[z] == 0)
        z++;
    memmove(d, d + z, n - z);
    n -= z;

    /* value = D * 10^-F * 2^p2 * 5^p5 of the stored unit */
    int e2 = u->p2 - (int)fplen, e5 = u->p5 - (int)fplen;
    for (; e2 < 0; e2++)
        if (digits_div(d, &n, 2) != 0)
            goto not_whole;
    for (; e5 < 0; e5++)
        if (digits_div(d, &n, 5) != 0)
            goto not_whole;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (UINT64_MAX - d[i]) / 10)
            goto overflow;
        v = v * 10 + d[i];
    }
    for (; e2 > 0; e2--) {
        if (v > UINT64_MAX / 2)
            goto overflow;
        v *= 2;
    }
    for (; e5 > 0; e5--) {
        if (v > UINT64_MAX / 5)
            goto overflow;
        v *= 5;
    }
    *out = v;
    return 0;

not_whole:
    set_why(why, whysz, "not a whole number of %s (values are stored as integer %s; 1 %s is the smallest step)",
            k->stored, k->stored, k->stored);
    return -1;
overflow:
    set_why(why, whysz, "too large (at most %" PRIu64 " %s)", UINT64_MAX, k->stored);
    return -1;
}

int cfg_parse_time_ps(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &time_kind, out, why, whysz);
}

int cfg_parse_rate_mts(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &rate_kind, out, why, whysz);
}

int cfg_parse_freq_khz(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &freq_kind, out, why, whysz);
}

int cfg_parse_size_bytes(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &size_kind, out, why, whysz);
}

int cfg_parse_bw_bps(const char *s, uint64_t *out, char *why, size_t whysz)
{
    return parse_unit_value(s, &bw_kind, out, why, whysz);
}

int cfg_parse_u64(const char *s, uint64_t *out, char *why, size_t whysz)
{
    if (!s || !*s) {
        set_why(why, whysz, "empty value; expected a non-negative integer, e.g. 16");
        return -1;
    }
    if (*s == '-') {
        set_why(why, whysz, "negative values are not allowed; expected a non-negative integer, e.g. 16");
        return -1;
    }
    /* strtoull would accept leading space, a sign and "0x"; only plain decimal digits are allowed. */
    if (!isdigit((unsigned char)*s)) {
        set_why(why, whysz, "expected a non-negative integer, e.g. 16");
        return -1;
    }
    /* YAML 1.1 reads 010 as octal 8, YAML 1.2 as 10: refuse the ambiguity rather than pick one. */
    if (s[0] == '0' && isdigit((unsigned char)s[1])) {
        set_why(why, whysz, "leading zero: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write the number "
                "without leading zeros, e.g. 8");
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || v > UINT64_MAX) {
        set_why(why, whysz, "too large (at most %" PRIu64 ")", UINT64_MAX);
        return -1;
    }
    if (*end) {
        set_why(why, whysz, "not a plain integer (unexpected '%s' after the number); expected e.g. 16", end);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int cfg_parse_double(const char *s, double *out, char *why, size_t whysz)
{
    if (!s || !*s) {
        set_why(why, whysz, "empty value; expected a number, e.g. 0.75");
        return -1;
    }
    /* Decimal notation only: strtod would also take "inf", "nan", hex floats and leading space. Note that
     * strtod follows LC_NUMERIC; cxlsim never changes the locale. */
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p)) {
            set_why(why, whysz, "not a number (unexpected '%s'); expected e.g. 0.75 or 1e-3", p);
            return -1;
        }
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) {
        set_why(why, whysz, "not a number; expected e.g. 0.75 or 1e-3");
        return -1;
    }
    if (errno == ERANGE || !isfinite(v)) {
        set_why(why, whysz, "out of the range of a double");
        return -1;
    }
    *out = v;
    return 0;
}

/* ---- binding ---- */

static const char *type_desc(enum cfg_type t)
{
    switch (t) {
    case CFG_T_U64: return "a non-negative integer, e.g. 16";
    case CFG_T_TIME: return "a time with a unit (ps, ns, us, ms, s), e.g. 90ns";
    case CFG_T_RATE: return "a transfer rate (MT/s, GT/s), e.g. 32GT/s";
    case CFG_T_FREQ: return "a frequency (Hz, kHz, MHz, GHz), e.g. 1.5GHz";
    case CFG_T_SIZE: return "a size (B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB), e.g. 64KiB";
    case CFG_T_BW: return "a bandwidth (B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, or bits: Kb/s, Mb/s, Gb/s, Tb/s), e.g. 25.6GB/s or 200Gb/s";
    case CFG_T_DOUBLE: return "a number, e.g. 0.75";
    case CFG_T_BOOL: return "true or false";
    case CFG_T_ENUM: return "one of the choices";
    case CFG_T_STRING: return "a string";
    case CFG_T_MAP: return "a mapping";
    default: return "a value";
    }
}

static const char *stored_unit(enum cfg_type t)
{
    switch (t) {
    case CFG_T_TIME: return " ps";
    case CFG_T_RATE: return " MT/s";
    case CFG_T_FREQ: return " kHz";
    case CFG_T_SIZE: return " B";
    case CFG_T_BW: return " B/s";
    default: return "";
    }
}

/* What a field accepts, for messages: the type description, or the choices of an enum. */
static void expect_desc(const cfg_field *f, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    if (f->type != CFG_T_ENUM || !f->choices) {
        app(buf, sz, &len, "%s", type_desc(f->type));
        return;
    }
    app(buf, sz, &len, "one of: ");
    for (int i = 0; f->choices[i]; i++)
        app(buf, sz, &len, "%s%s", i ? ", " : "", f->choices[i]);
}

static void key_path(char *buf, size_t sz, const char *section, const char *key)
{
    if (section && *section)
        snprintf(buf, sz, "%s.%s", section, key);
    else
        snprintf(buf, sz, "%s", key);
}

static void field_list(const cfg_field *fields, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const cfg_field *f = fields; f->key; f++)
        app(buf, sz, &len, "%s%s", f == fields ? "" : ", ", f->key);
}

static void help_suffix(const cfg_field *f, char *buf, size_t sz)
{
    if (f->help && *f->help)
        snprintf(buf, sz, " (%s: %s)", f->key, f->help);
    else
        buf[0] = '\0';
}

/* A range applies unless min > max. min == max == 0 also means "no range": that is what a field table
 * written with designated initializers gets by default, and "only 0 is valid" is never a useful range. */
static int has_range(const cfg_field *f)
{
    return !(f->min > f->max) && !(f->min == 0 && f->max == 0);
}

static int range_error(cxl_err *err, const cfg_field *f, const cfg_node *n, const char *path, const char *shown,
                       const char *help)
{
    const char *unit = stored_unit(f->type);
    if (f->type != CFG_T_DOUBLE && f->min >= 0 && f->max < 18446744073709551616.0)
        return cfg_errf(err, n, "'%s' = %s is out of range: valid values are %" PRIu64 "%s to %" PRIu64 "%s%s", path,
                        shown, (uint64_t)f->min, unit, (uint64_t)f->max, unit, help);
    return cfg_errf(err, n, "'%s' = %s is out of range: valid values are %.15g%s to %.15g%s%s", path, shown, f->min,
                    unit, f->max, unit, help);
}

static int bind_field(const cfg_field *f, const cfg_node *n, const char *path, void *base, cxl_err *err)
{
    char help[300], why[512], shown[300], cut[CFG_CLIP_SZ];
    help_suffix(f, help, sizeof help);
    void *dst = (char *)base + f->offset;

    if (f->type == CFG_T_CUSTOM) {
        if (!f->custom)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_CUSTOM without a handler", path);
        int rc = f->custom(n, dst, err);
        if (rc && err && err->code == 0)
            cfg_errf(err, n, "bad value for '%s'%s", path, help);
        return rc ? (rc < 0 ? rc : CXL_ECONFIG) : 0;
    }
    if (f->type == CFG_T_MAP) {
        char keys[600];
        if (!f->sub)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_MAP without a sub-table", path);
        if (n->kind != CFG_MAP) {
            field_list(f->sub, keys, sizeof keys);
            if (n->kind == CFG_SCALAR)
                return cfg_errf(err, n, "'%s' must be a mapping with keys %s; got the scalar '%s'%s", path, keys,
                                cfg_clip(n->str, cut, sizeof cut), help);
            return cfg_errf(err, n, "'%s' must be a mapping with keys %s; got %s%s", path, keys,
                            kind_name(n->kind), help);
        }
        return cfg_bind(n, NULL, path, f->sub, dst, NULL, err);
    }
    if (n->kind != CFG_SCALAR) {
        expect_desc(f, shown, sizeof shown);
        return cfg_errf(err, n, "'%s' must be %s; got %s%s", path, shown, kind_name(n->kind), help);
    }

    /* YAML traps, refused rather than guessed (docs/config.md, "YAML"): a plain ~, null or empty value
     * is YAML's null, not the text "~"; a quoted number or boolean is a string in YAML. */
    if (n->plain && (!n->str[0] || !strcmp(n->str, "~") || !strcmp(n->str, "null") || !strcmp(n->str, "Null") ||
                     !strcmp(n->str, "NULL")))
        return cfg_errf(err, n, "'%s' has no value ('%s' is YAML's null); give a value, or remove the key to "
                        "keep the default%s", path, n->str, help);
    if (!n->plain && (f->type == CFG_T_U64 || f->type == CFG_T_DOUBLE || f->type == CFG_T_BOOL)) {
        expect_desc(f, shown, sizeof shown);
        return cfg_errf(err, n, "'%s' = \"%s\" is quoted, which makes it a string in YAML; expected %s, "
                        "written without quotes%s", path, cfg_clip(n->str, cut, sizeof cut), shown, help);
    }
    const char *s = cfg_clip(n->str, cut, sizeof cut);
    snprintf(shown, sizeof shown, "'%s'", s);
    uint64_t u = 0;
    int bad = 0;
    switch (f->type) {
    case CFG_T_U64: bad = cfg_parse_u64(n->str, &u, why, sizeof why); break;
    case CFG_T_TIME: bad = cfg_parse_time_ps(n->str, &u, why, sizeof why); break;
    case CFG_T_RATE: bad = cfg_parse_rate_mts(n->str, &u, why, sizeof why); break;
    case CFG_T_FREQ: bad = cfg_parse_freq_khz(n->str, &u, why, sizeof why); break;
    case CFG_T_SIZE: bad = cfg_parse_size_bytes(n->str, &u, why, sizeof why); break;
    case CFG_T_BW: bad = cfg_parse_bw_bps(n->str, &u, why, sizeof why); break;
    case CFG_T_DOUBLE: {
        double d = 0;
        if (cfg_parse_double(n->str, &d, why, sizeof why))
            return cfg_errf(err, n, "'%s' = '%s': %s%s", path, s, why, help);
        if (has_range(f) && (d < f->min || d > f->max))
            return range_error(err, f, n, path, shown, help);
        *(double *)dst = d;
        return 0;
    }
    case CFG_T_BOOL:
        if (strcmp(n->str, "true") == 0)
            *(int *)dst = 1;
        else if (strcmp(n->str, "false") == 0)
            *(int *)dst = 0;
        else
            return cfg_errf(err, n, "'%s' = '%s': expected true or false%s", path, s, help);
        return 0;
    case CFG_T_ENUM: {
        if (!f->choices)
            return cxl_errf(err, CXL_EINTERNAL, "field '%s' is CFG_T_ENUM without choices", path);
        char list[600];
        size_t len = 0;
        const char *best = NULL;
        int bestd = INT_MAX;
        list[0] = '\0';
        for (int i = 0; f->choices[i]; i++) {
            if (strcmp(f->choices[i], n->str) == 0) {
                *(int *)dst = i;
                return 0;
            }
            app(list, sizeof list, &len, "%s%s", i ? ", " : "", f->choices[i]);
            int d = edit_distance(n->str, f->choices[i]);
            if (d < bestd) {
                bestd = d;
                best = f->choices[i];
            }
        }
        if (best && close_enough(n->str, bestd))
            return cfg_errf(err, n, "'%s' = '%s' is not a valid choice; did you mean '%s'? Choices: %s%s", path, s,
                            best, list, help);
        return cfg_errf(err, n, "'%s' = '%s' is not a valid choice; choices: %s%s", path, s, list, help);
    }
    case CFG_T_STRING: {
        size_t len = strlen(n->str);
        if (f->str_size == 0 || len >= f->str_size)
            return cfg_errf(err, n, "'%s' = '%s' is too long (%zu bytes; at most %zu)%s", path, s, len,
                            f->str_size ? f->str_size - 1 : 0, help);
        memcpy(dst, n->str, len + 1);
        return 0;
    }
    default:
        return cxl_errf(err, CXL_EINTERNAL, "field '%s' has an unknown type %d", path, (int)f->type);
    }
    if (bad)
        return cfg_errf(err, n, "'%s' = '%s': %s%s", path, s, why, help);
    if (f->type != CFG_T_U64)
        snprintf(shown, sizeof shown, "'%s' (%" PRIu64 "%s)", s, u, stored_unit(f->type));
    if (has_range(f) && ((double)u < f->min || (double)u > f->max))
        return range_error(err, f, n, path, shown, help);
    *(uint64_t *)dst = u;
    return 0;
}

int cfg_bind(const cfg_node *map, const cfg_node *parent, const char *section, const cfg_field *fields,
             void *base, int *seen, cxl_err *err)
{
    char path[256], keys[600], help[300];
    size_t nf = 0;
    if (!fields || !base)
        return cxl_errf(err, CXL_EINTERNAL, "cfg_bind: NULL field table or base");
    while (fields[nf].key)
        nf++;
    if (seen)
        memset(seen, 0, nf * sizeof *seen);
    /* "'link'" or "the top level", and "in 'link'" or "at the top level", for messages. */
    char what[300], scope[300];
    if (section && *section) {
        snprintf(what, sizeof what, "'%s'", section);
        snprintf(scope, sizeof scope, "in '%s'", section);
    } else {
        snprintf(what, sizeof what, "the top level");
        snprintf(scope, sizeof scope, "at the top level");
    }

    if (map && map->kind != CFG_MAP) {
        field_list(fields, keys, sizeof keys);
        if (map->kind == CFG_SCALAR)
            return cfg_errf(err, map, "%s must be a mapping with keys %s; got the scalar '%s'", what, keys,
                            map->str);
        return cfg_errf(err, map, "%s must be a mapping with keys %s; got %s", what, keys, kind_name(map->kind));
    }

    /* Present keys, in file order. O(keys * fields). */
    for (size_t i = 0; map && i < map->n; i++) {
        const cfg_node *k = map->keys[i];
        size_t j = 0;
        while (j < nf && strcmp(fields[j].key, k->str) != 0)
            j++;
        char cut[CFG_CLIP_SZ];
        key_path(path, sizeof path, section, j == nf ? cfg_clip(k->str, cut, sizeof cut) : k->str);
        if (j == nf) {
            const char *best = NULL;
            int bestd = INT_MAX;
            for (size_t t = 0; t < nf; t++) {
                int d = edit_distance(k->str, fields[t].key);
                if (d < bestd) {
                    bestd = d;
                    best = fields[t].key;
                }
            }
            field_list(fields, keys, sizeof keys);
            if (best && close_enough(k->str, bestd))
                return cfg_errf(err, k, "unknown key '%s'; did you mean '%s'? Valid keys %s: %s", path, best, scope,
                                keys);
            return cfg_errf(err, k, "unknown key '%s'; valid keys %s: %s", path, scope, keys);
        }
        if (seen)
            seen[j] = 1;
        int rc = bind_field(&fields[j], map->vals[i], path, base, err);
        if (rc)
            return rc;
    }

    /* Required keys that are absent. */
    for (size_t j = 0; j < nf; j++) {
        if (!fields[j].required || (map && map_find(map, fields[j].key) >= 0))
            continue;
        key_path(path, sizeof path, section, fields[j].key);
        help_suffix(&fields[j], help, sizeof help);
        const cfg_node *at = map ? map : parent;
        if (!map && section && *section)
            return cfg_errf(err, at, "missing required key '%s' (section '%s' is absent)%s", path, section, help);
        expect_desc(&fields[j], keys, sizeof keys);
        return cfg_errf(err, at, "missing required key '%s'; expected %s%s", path, keys, help);
    }
    return 0;
}
