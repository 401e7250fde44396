/* cfg_int.h - the inside of the configuration loader (cfg.h), shared by its files and nobody else:
 * cfg_doc.c (document memory, tree access), cfg_msg.c (message helpers), cfg_parse.c (YAML to nodes),
 * cfg_load.c (files and `extends`), cfg_units.c (numbers with units), cfg_bind.c (binding to structs). */
#ifndef CXLSIM_CFG_INT_H
#define CXLSIM_CFG_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "config/cfg.h"
#include "config/cfgnode.h"

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

struct key_ix {
    const char *key;
    size_t ix;
};

/* document memory (cfg_doc.c; cfg_doc_alloc, cfg_doc_strdup: cfgnode.h) */
char *cfg_doc_strndup(cfg_doc *d, const char *s, size_t n);
/* index of key among map m's keys, or -1 */
ptrdiff_t cfg_map_find(const cfg_node *m, const char *key);

/* messages (cfg_msg.c) */
/* Append printf output to buf (size sz, current length *len), truncating silently. */
void cfg_app(char *buf, size_t sz, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* printf into why (size whysz) when why is not NULL */
void cfg_set_why(char *why, size_t whysz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *cfg_kind_name(enum cfg_kind k);
int cfg_edit_distance(const char *a, const char *b);
/* whether an edit distance d from typed is close enough to suggest */
int cfg_close_enough(const char *typed, int d);

/* parsing (cfg_parse.c) */
int cfg_oom(struct cfg_loader *L);
/* order of struct key_ix by key, then index */
int cfg_key_ix_cmp(const void *a, const void *b);
/* text (len bytes) of L->file to a node tree in L->doc */
int cfg_parse_source(struct cfg_loader *L, const char *text, size_t len, cfg_node **out);

#endif
