/* compose.h - load one component of an experiment (a model, a GPU, a cluster, a training setup) from a
 * reference, and remember where every value was written.
 *
 * A reference is one of
 *     NAME-OR-PATH                       a file (relative to the folder of the file that names it), else a
 *                                        built-in preset of the component's kind (presets.h)
 *     { extends: NAME-OR-PATH, k: v }    that component, then the fields given here override its own
 *     { k: v, ... }                      the whole component inline (required keys must be present)
 * A component file may itself `extends` another (cfg.h's rules). Binding uses the component's flat field
 * table (cfg_bind): unknown or duplicate keys, wrong types and units are errors with file:line:column.
 *
 * Every component struct carries a cfgloc array parallel to its field table: the location of the value
 * that was finally used (the override, if any), or the component's reference when the key was never
 * written. Checks that run after the documents are freed cite these locations.
 */
#ifndef CXLSIM_COMPOSE_H
#define CXLSIM_COMPOSE_H

#include <stddef.h>
#include <stdio.h>

#include "config/cfg.h"
#include "config/cfgdump.h"
#include "util/err.h"

#define COMPOSE_MAX_FIELDS 96

typedef struct cfgloc {
    char file[192];     /* display name of the file ("" when unknown) */
    int line, col;      /* 1-based; 0 when unknown */
} cfgloc;

typedef struct compose_kind {
    const char *what;             /* "model": used in messages */
    const char *presets;          /* preset kind ("models"), or NULL when there are no presets */
    const cfg_field *fields;      /* flat table terminated by key NULL, at most COMPOSE_MAX_FIELDS */
    void (*defaults)(void *obj);  /* neutral defaults before binding */
    size_t loc_offset;            /* offsetof the cfgloc array (one per field) in the struct */
    size_t root_loc_offset;       /* offsetof a cfgloc for the reference itself */
    size_t source_offset, source_size; /* char[] receiving "where it came from" */
    /* Fields from this index on are dumped (compose_dump) only when a file or an override set them: keys
     * added after the configuration hash of existing experiments was fixed leave those hashes (and the
     * goldens of tests/golden/) unchanged. 0: every field is dumped. */
    size_t quiet_from;
    /* Prints the kind's CFG_T_CUSTOM fields in compose_dump, as YAML that binds back to the same values;
     * NULL: they are left out of the dump */
    cfgdump_custom_fn dump_custom;
} compose_kind;

/* Load from a reference node (scalar or mapping) found in another document. */
int compose_ref(const compose_kind *k, const cfg_node *ref, void *obj, cxl_err *err);
/* Load from a name or a path given outside any file (command line, tests). Errors without location
 * name the valid presets. */
int compose_load(const compose_kind *k, const char *name_or_path, void *obj, cxl_err *err);

/* Call fn for each configuration file a component loaded from `source` (its recorded source: a file
 * path, else a preset or inline text, which read no file) was read from: that file and every file of its
 * `extends` chain (cfg_each_file), found by loading it again with the presets of presets_kind (NULL: a
 * kind without presets, such as an op-times file: files only). Stops at
 * and returns fn's first non-zero result; 0 when source is no readable file. */
int compose_each_file(const char *presets_kind, const char *source, int (*fn)(void *ctx, const char *path),
                      void *ctx);

/* Fill a location from a node (all zero for NULL). */
void cfgloc_from(cfgloc *l, const cfg_node *n);
/* Fill err with CXL_ECONFIG at location l and the message; returns CXL_ECONFIG. */
int cfgloc_errf(cxl_err *err, const cfgloc *l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "presets: a, b, c" of a preset kind's names into buf, after "did you mean 'b'? " when typed (may be
 * NULL) is close to one of them (cfg_suggest). */
void compose_preset_list(const char *kind, const char *typed, char *buf, size_t sz);
/* CXL_ECONFIG: name is neither a file nor a preset of kind ("devices", ...); what names the thing
 * ("device") in the message, which lists the presets and the closest one. */
int compose_unknown(const char *kind, const char *what, const char *name, cxl_err *err);
/* Print a component's resolved fields (cfgdump.h) at indent. */
void compose_dump(FILE *out, const compose_kind *k, const void *obj, int indent);

#endif
