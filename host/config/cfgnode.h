/* cfgnode.h - the node tree of a configuration document, for the modules that edit a loaded document
 * (cfg_parse.c and cfg_load.c, which build it, and override.c, which applies `--set KEY=VALUE` to it).
 * Everyone else goes through cfg.h's accessors.
 *
 * Ownership: every node, string and array lives in the document's block list (cfg_doc_alloc) and is
 * released by cfg_free() alone; an editor only moves pointers within one document, or adopts the blocks
 * of another document whole (cfg_doc_adopt).
 */
#ifndef CXLSIM_CFGNODE_H
#define CXLSIM_CFGNODE_H

#include <stddef.h>

#include "config/cfg.h"

struct cfg_node {
    enum cfg_kind kind;
    const char *file;    /* display name, owned by the document */
    int line, col;       /* 1-based; 0 for a value given on the command line (`--set`) */
    char *str;           /* CFG_SCALAR: NUL-terminated value */
    int plain;           /* CFG_SCALAR: written without quotes (YAML plain style) */
    size_t n;            /* CFG_MAP: pairs; CFG_SEQ: items */
    cfg_node **keys;     /* CFG_MAP: key nodes (always scalars) */
    cfg_node **vals;     /* CFG_MAP: values; CFG_SEQ: items */
};

/* sz bytes (maximally aligned) owned by doc; NULL when out of memory. */
void *cfg_doc_alloc(cfg_doc *doc, size_t sz);
/* A copy of s owned by doc; NULL when out of memory. */
char *cfg_doc_strdup(cfg_doc *doc, const char *s);
/* Move every block of src into dst and free src's shell: src's nodes now live as long as dst. */
void cfg_doc_adopt(cfg_doc *dst, cfg_doc *src);
/* The root mapping, writable. */
cfg_node *cfg_doc_root(cfg_doc *doc);

#endif
