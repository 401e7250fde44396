/* override.c - `--set KEY=VALUE` applied to a loaded configuration document (override.h). */
#define _POSIX_C_SOURCE 200809L
#include "config/override.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfgnode.h"

#define OVERRIDE_PREFIX "--set "

int override_is_mark(const char *file)
{
    return file && !strncmp(file, OVERRIDE_PREFIX, sizeof OVERRIDE_PREFIX - 1);
}

static int check_key(const char *key, cxl_err *err)
{
    char cut[CFG_CLIP_SZ];
    size_t n = strlen(key);
    if (!n)
        return cxl_errf(err, CXL_EUSAGE, "--set: the key is empty; write KEY=VALUE, e.g. training.tp=8");
    if (n > OVERRIDE_MAX_KEY)
        return cxl_errf(err, CXL_EUSAGE, "--set %s: the key is longer than %d bytes", cfg_clip(key, cut, sizeof cut),
                        OVERRIDE_MAX_KEY);
    for (const char *s = key;; s++) {
        size_t len = strcspn(s, ".");
        if (!len)
            return cxl_errf(err, CXL_EUSAGE, "--set %s: an empty name in the key path; names are separated by "
                            "single dots, e.g. training.tp", cfg_clip(key, cut, sizeof cut));
        s += len;
        if (!*s)
            return 0;
    }
}

int override_add(override_list *l, const char *key, const char *value, cxl_err *err)
{
    int rc = check_key(key, err);
    if (rc)
        return rc;
    if (strlen(value) > OVERRIDE_MAX_VALUE)
        return cxl_errf(err, CXL_EUSAGE, "--set %s: the value is longer than %d bytes", key, OVERRIDE_MAX_VALUE);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        override_item *v = realloc(l->items, cap * sizeof *v);
        if (!v)
            return cxl_errf(err, CXL_ENOMEM, "out of memory");
        l->items = v;
        l->cap = cap;
    }
    override_item *it = &l->items[l->n];
    it->key = strdup(key);
    it->value = strdup(value);
    if (!it->key || !it->value) {
        free(it->key);
        free(it->value);
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    }
    l->n++;
    return 0;
}

int override_parse(override_list *l, const char *arg, cxl_err *err)
{
    char cut[CFG_CLIP_SZ];
    const char *eq = strchr(arg, '=');
    if (!eq)
        return cxl_errf(err, CXL_EUSAGE, "--set '%s': expected KEY=VALUE, e.g. training.tp=8",
                        cfg_clip(arg, cut, sizeof cut));
    size_t klen = (size_t)(eq - arg);
    if (klen > OVERRIDE_MAX_KEY)
        return cxl_errf(err, CXL_EUSAGE, "--set %s: the key is longer than %d bytes", cfg_clip(arg, cut, sizeof cut),
                        OVERRIDE_MAX_KEY);
    char key[OVERRIDE_MAX_KEY + 1];
    memcpy(key, arg, klen);
    key[klen] = '\0';
    return override_add(l, key, eq + 1, err);
}

void override_free(override_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Mark a value's nodes as given by the override named file (line 0: cxl_err_format prints the name
 * alone). The depth is bounded by the loader's nesting limit. */
static void mark_tree(cfg_node *n, const char *file)
{
    n->file = file;
    n->line = n->col = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == CFG_MAP)
            mark_tree(n->keys[i], file);
        mark_tree(n->vals[i], file);
    }
}

/* The value as a node of doc: parsed as YAML the way `key: VALUE` is in a file. */
static int parse_value(cfg_doc *doc, const char *file, const char *value, cfg_node **out, cxl_err *err)
{
    size_t len = strlen(value);
    char *text = malloc(len + 4);
    if (!text)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    memcpy(text, "v: ", 3);
    memcpy(text + 3, value, len + 1);
    cfg_doc *vd = NULL;
    int rc = cfg_load_text(file, text, NULL, NULL, &vd, err);
    free(text);
    if (rc) {
        char cut[CFG_CLIP_SZ], msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        if (rc == CXL_ENOMEM)
            return rc;
        return cxl_errf_at(err, CXL_ECONFIG, file, 0, 0, "'%s' is not a YAML value (%s)",
                           cfg_clip(value, cut, sizeof cut), msg);
    }
    cfg_node *root = cfg_doc_root(vd);
    if (root->n != 1) {
        cfg_free(vd);
        return cxl_errf_at(err, CXL_ECONFIG, file, 0, 0, "the value is not one YAML value");
    }
    *out = root->vals[0];
    mark_tree(*out, file);
    cfg_doc_adopt(doc, vd);
    return 0;
}

static cfg_node *new_node(cfg_doc *doc, enum cfg_kind kind, const char *file)
{
    cfg_node *n = cfg_doc_alloc(doc, sizeof *n);
    if (n) {
        memset(n, 0, sizeof *n);
        n->kind = kind;
        n->file = file;
    }
    return n;
}

/* Append key -> val to map m (its arrays are copied: they may be shared with nothing else to grow). */
static int map_append(cfg_doc *doc, cfg_node *m, cfg_node *key, cfg_node *val)
{
    cfg_node **keys = cfg_doc_alloc(doc, (m->n + 1) * sizeof *keys);
    cfg_node **vals = cfg_doc_alloc(doc, (m->n + 1) * sizeof *vals);
    if (!keys || !vals)
        return CXL_ENOMEM;
    if (m->n) {
        memcpy(keys, m->keys, m->n * sizeof *keys);
        memcpy(vals, m->vals, m->n * sizeof *vals);
    }
    keys[m->n] = key;
    vals[m->n] = val;
    m->keys = keys;
    m->vals = vals;
    m->n++;
    return 0;
}

static int map_put(cfg_doc *doc, cfg_node *m, const char *name, const char *file, cfg_node *val)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->keys[i]->str, name)) {
            m->vals[i] = val;
            return 0;
        }
    cfg_node *k = new_node(doc, CFG_SCALAR, file);
    if (!k || !(k->str = cfg_doc_strdup(doc, name)))
        return CXL_ENOMEM;
    k->plain = 1;
    return map_append(doc, m, k, val);
}

/* The mapping under key name of m, made when absent; a scalar there becomes { extends: SCALAR }. */
static int descend(cfg_doc *doc, cfg_node *m, const char *name, const char *file, cfg_node **out)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->keys[i]->str, name))
            continue;
        cfg_node *v = m->vals[i];
        if (v->kind == CFG_MAP) {
            *out = v;
            return 0;
        }
        if (v->kind == CFG_SEQ)
            return 1;
        cfg_node *ref = new_node(doc, CFG_MAP, file);
        if (!ref || map_put(doc, ref, "extends", file, v))
            return CXL_ENOMEM;
        ref->keys[0]->file = v->file;   /* the reference keeps where it was written, for its folder */
        ref->keys[0]->line = v->line;
        ref->keys[0]->col = v->col;
        m->vals[i] = ref;
        *out = ref;
        return 0;
    }
    cfg_node *fresh = new_node(doc, CFG_MAP, file);
    if (!fresh || map_put(doc, m, name, file, fresh))
        return CXL_ENOMEM;
    *out = fresh;
    return 0;
}

static int apply_one(cfg_doc *doc, const override_item *it, cxl_err *err)
{
    char disp[OVERRIDE_MAX_KEY + sizeof OVERRIDE_PREFIX];
    snprintf(disp, sizeof disp, OVERRIDE_PREFIX "%s", it->key);
    const char *file = cfg_doc_strdup(doc, disp);
    if (!file)
        return cxl_errf(err, CXL_ENOMEM, "out of memory");
    cfg_node *val = NULL;
    int rc = parse_value(doc, file, it->value, &val, err);
    if (rc)
        return rc;
    cfg_node *cur = cfg_doc_root(doc);
    const char *seg = it->key;
    for (;;) {
        char name[OVERRIDE_MAX_KEY + 1];
        size_t len = strcspn(seg, ".");
        memcpy(name, seg, len);
        name[len] = '\0';
        if (!seg[len])
            rc = map_put(doc, cur, name, file, val);
        else
            rc = descend(doc, cur, name, file, &cur);
        if (rc == 1)
            return cxl_errf_at(err, CXL_ECONFIG, file, 0, 0, "'%.*s' is a sequence; a key path cannot go into one "
                               "(set the whole sequence: %.*s=[...])", (int)(seg - it->key + len), it->key,
                               (int)(seg - it->key + len), it->key);
        if (rc)
            return cxl_errf(err, CXL_ENOMEM, "out of memory");
        if (!seg[len])
            return 0;
        seg += len + 1;
    }
}

int override_apply(cfg_doc *doc, const override_list *l, cxl_err *err)
{
    for (size_t i = 0; l && i < l->n; i++) {
        int rc = apply_one(doc, &l->items[i], err);
        if (rc)
            return rc;
    }
    return 0;
}
