/* cfg_doc.c - a loaded configuration document: its memory and read access to its node tree (cfg.h).
 *
 * Ownership: every node, string and array of a document lives in the document's block list (cfg_doc_alloc)
 * and is released by cfg_free() alone. Merging for `extends` therefore only moves pointers between trees
 * of the same document, and every error path simply frees the document.
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

/* ---- document memory ---- */

void *cfg_doc_alloc(cfg_doc *d, size_t sz)
{
    cfg_blk *b = malloc(sizeof *b + (sz ? sz : 1));
    if (!b)
        return NULL;
    b->next = d->blocks;
    d->blocks = b;
    return b + 1;
}

char *cfg_doc_strndup(cfg_doc *d, const char *s, size_t n)
{
    char *p = cfg_doc_alloc(d, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *cfg_doc_strdup(cfg_doc *d, const char *s)
{
    return cfg_doc_strndup(d, s, strlen(s));
}

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


/* ---- tree access ---- */

ptrdiff_t cfg_map_find(const cfg_node *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->keys[i]->str, key) == 0)
            return (ptrdiff_t)i;
    return -1;
}


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
    ptrdiff_t i = cfg_map_find(n, key);
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
