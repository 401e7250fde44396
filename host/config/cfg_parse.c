/* cfg_parse.c - one YAML text to a node tree (libyaml), with every error at file:line:column.
 *
 * Parsing is two passes over the same text: an event pass (yaml_parser_parse) that rejects anchors,
 * aliases and multi-document streams, which the document API hides (it resolves aliases and forgets
 * anchor names), then yaml_parser_load() to build the node tree with marks. Config files are small, so
 * the second pass costs nothing that matters.
 */
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

#include <yaml.h>

/* ---- error helpers ---- */

int cfg_oom(struct cfg_loader *L)
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
        return cfg_oom(L);
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
        return cfg_oom(L);
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
    cfg_app(L->path, sizeof L->path, &len, "%s%s", len ? "." : "", key);
    L->plen = len;
}

static void path_push_index(struct cfg_loader *L, size_t i, size_t *saved)
{
    *saved = L->plen;
    size_t len = L->plen;
    cfg_app(L->path, sizeof L->path, &len, "[%zu]", i);
    L->plen = len;
}

static void path_pop(struct cfg_loader *L, size_t saved)
{
    L->plen = saved;
    L->path[saved] = '\0';
}

static cfg_node *new_node(struct cfg_loader *L, enum cfg_kind kind, yaml_mark_t m)
{
    cfg_node *n = cfg_doc_alloc(L->doc, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->file = L->file;
    n->line = (int)m.line + 1;
    n->col = (int)m.column + 1;
    return n;
}

int cfg_key_ix_cmp(const void *a, const void *b)
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
        return cfg_oom(L);
    for (size_t i = 0; i < m->n; i++) {
        v[i].key = m->keys[i]->str;
        v[i].ix = i;
    }
    qsort(v, m->n, sizeof *v, cfg_key_ix_cmp);
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
        if (!n || !(n->str = cfg_doc_strndup(L->doc, v, len)))
            return cfg_oom(L);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return 0;
    }
    case YAML_SEQUENCE_NODE: {
        cfg_node *n = new_node(L, CFG_SEQ, yn->start_mark);
        if (!n)
            return cfg_oom(L);
        n->n = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        if (!(n->vals = cfg_doc_alloc(L->doc, n->n * sizeof *n->vals)))
            return cfg_oom(L);
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
            return cfg_oom(L);
        n->n = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        if (!(n->keys = cfg_doc_alloc(L->doc, n->n * sizeof *n->keys)) ||
            !(n->vals = cfg_doc_alloc(L->doc, n->n * sizeof *n->vals)))
            return cfg_oom(L);
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
int cfg_parse_source(struct cfg_loader *L, const char *text, size_t len, cfg_node **out)
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
        return cfg_oom(L);
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
