/* cfg.h - YAML configuration documents: loading, inheritance, and binding to C structs.
 *
 * A configuration file is one YAML mapping. It may name a parent with a top-level key
 *     extends: NAME-OR-PATH
 * A parent is looked up first as a path relative to the including file's folder (or the current folder
 * for text not from a file), then through the caller's resolver (built-in presets by name). The child's
 * mapping is deep-merged over the parent's: maps merge key by key, scalars and sequences replace. Chains
 * of any depth work; a cycle is an error naming the chain. Every node remembers the file, line and column
 * it came from, so an error in an inherited value points at the file that set it.
 *
 * libyaml accepts duplicate keys; this loader rejects them. Anchors and aliases are rejected (they would
 * make error locations ambiguous). Every error fills a cxl_err with file:line:column (1-based) and returns
 * CXL_ECONFIG (CXL_EIO when a file cannot be read, is not a regular file, or is larger than 16 MiB;
 * CXL_ENOMEM on allocation failure). Nothing is printed. Text must be UTF-8 (the first invalid byte is
 * named at its line and column). Loading is O(n log n) in the keys of a file and its parents.
 *
 * YAML traps are refused by cfg_bind rather than guessed (docs/config.md, "YAML"): a plain ~, null or
 * empty value, a quoted value for an integer, real or boolean key, and integers with leading zeros.
 * Values quoted in messages are cut after 64 bytes.
 *
 * Binding: cfg_bind() walks a mapping against a table of cfg_field and writes values into a struct at the
 * given offsets. Unknown keys, wrong types, bad units, out-of-range values and missing required fields are
 * errors that say what would be valid.
 */
#ifndef CXLSIM_CFG_H
#define CXLSIM_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct cfg_doc cfg_doc;
typedef struct cfg_node cfg_node;

enum cfg_kind { CFG_SCALAR, CFG_MAP, CFG_SEQ };

/* Resolve a parent name that is not a readable file: on success set *text (NUL-terminated, owned by the
 * resolver and alive until cfg_free) and *display_name (used in error locations, e.g. "<preset asic>")
 * and return 0; return -1 when the name is unknown. */
typedef int (*cfg_resolve_fn)(void *ctx, const char *name, const char **text, const char **display_name);

int cfg_load_file(const char *path, cfg_resolve_fn resolve, void *ctx, cfg_doc **out, cxl_err *err);
int cfg_load_text(const char *display_name, const char *text, cfg_resolve_fn resolve, void *ctx,
                  cfg_doc **out, cxl_err *err);
void cfg_free(cfg_doc *doc);

/* Call fn for each file the document was read from: the file cfg_load_file loaded, then every parent
 * of its `extends` chain that is a file (not a preset), in the order read; stops at and returns the first
 * non-zero result. The paths live as long as the document. */
int cfg_each_file(const cfg_doc *doc, int (*fn)(void *ctx, const char *path), void *ctx);

/* The merged root mapping (never NULL after a successful load). The "extends" key is removed. */
const cfg_node *cfg_root(const cfg_doc *doc);

enum cfg_kind cfg_kind(const cfg_node *n);
const char *cfg_scalar(const cfg_node *n);               /* NULL unless a scalar */
size_t cfg_map_size(const cfg_node *n);                  /* 0 unless a map */
const char *cfg_map_key(const cfg_node *n, size_t i);
const cfg_node *cfg_map_value(const cfg_node *n, size_t i);
const cfg_node *cfg_map_key_node(const cfg_node *n, size_t i); /* the key's own node, for its mark */
const cfg_node *cfg_map_get(const cfg_node *n, const char *key); /* NULL when absent or n not a map */
size_t cfg_seq_size(const cfg_node *n);                  /* 0 unless a sequence */
const cfg_node *cfg_seq_at(const cfg_node *n, size_t i);
/* Where the node was written: file display name, 1-based line and column. */
void cfg_mark(const cfg_node *n, const char **file, int *line, int *col);

/* Fill err with the node's location and the message; returns CXL_ECONFIG. */
int cfg_errf(cxl_err *err, const cfg_node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* s as a message quotes it: s itself when at most 64 bytes, else its first 64 bytes (at a UTF-8 character
 * boundary), "..." and its length in bytes, written into buf (CFG_CLIP_SZ bytes suffice). */
enum { CFG_CLIP_SZ = 104 };
const char *cfg_clip(const char *s, char *buf, size_t sz);

/* The index of the choice (NULL-terminated list) closest to a mistyped name, by edit distance with
 * transpositions, case-insensitive, when close enough to suggest ("did you mean"); -1 otherwise. */
int cfg_suggest(const char *typed, const char *const *choices);

/* ---- binding ---- */

enum cfg_type {
    CFG_T_U64,     /* plain non-negative integer (uint64_t) */
    CFG_T_TIME,    /* time with unit ps/ns/us/ms/s -> uint64_t picoseconds */
    CFG_T_RATE,    /* transfer rate GT/s or MT/s -> uint64_t MT/s (32GT/s -> 32000) */
    CFG_T_FREQ,    /* frequency Hz/kHz/MHz/GHz -> uint64_t kHz */
    CFG_T_SIZE,    /* size B/KB/MB/GB/TB (10^3) or KiB/MiB/GiB/TiB (2^10) -> uint64_t bytes */
    CFG_T_BW,      /* bandwidth B/s, KB/s, MB/s, GB/s, GiB/s, ... -> uint64_t bytes per second */
    CFG_T_DOUBLE,  /* real number -> double */
    CFG_T_BOOL,    /* true/false -> int */
    CFG_T_ENUM,    /* one of `choices` (NULL-terminated) -> int index */
    CFG_T_STRING,  /* any scalar -> char[str_size] at offset */
    CFG_T_MAP,     /* nested mapping bound with `sub` at offset (sub offsets relative to it) */
    CFG_T_CUSTOM,  /* any node handed to `custom` */
    CFG_T_RETIRED  /* a key no longer accepted: binding it is an error at the key whose message is `help`
                      (what replaces it and how to convert); left out of key lists, suggestions and dumps */
};

typedef struct cfg_field cfg_field;
struct cfg_field {
    const char *key;
    enum cfg_type type;
    size_t offset;           /* offsetof into the bound struct */
    int required;            /* missing -> error */
    double min, max;         /* inclusive range in the stored unit (ignored when min > max) */
    const char *const *choices;  /* CFG_T_ENUM */
    const cfg_field *sub;    /* CFG_T_MAP: table terminated by a field with key NULL */
    size_t str_size;         /* CFG_T_STRING */
    int (*custom)(const cfg_node *n, void *dst, cxl_err *err); /* CFG_T_CUSTOM */
    const char *help;        /* one line shown in errors and docs, e.g. "PHY + retimer latency, e.g. 20ns" */
};

/* Bind mapping `map` against `fields` (terminated by key == NULL) into `base`. Fields absent from the map
 * keep the values already in `base` (callers pre-fill defaults). `map` may be NULL when the whole section
 * is absent: then only required fields are checked (and reported at `parent` if given). Optional out-array
 * `seen` (one int per field) reports which keys were present. */
int cfg_bind(const cfg_node *map, const cfg_node *parent, const char *section, const cfg_field *fields,
             void *base, int *seen, cxl_err *err);

/* Units alone (also used by the command line). Return 0, or -1 with a reason in why[whysz]. */
int cfg_parse_u64(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_time_ps(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_rate_mts(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_freq_khz(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_size_bytes(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_bw_bps(const char *s, uint64_t *out, char *why, size_t whysz);
int cfg_parse_double(const char *s, double *out, char *why, size_t whysz);

#endif
