/* override.h - `--set KEY=VALUE`: values given on the command line (or by a sweep point, sweep.h) for
 * dotted key paths of a configuration document, e.g. `training.tp=8`, `cluster.nodes=128`,
 * `link.width=8`.
 *
 * An override is applied to the loaded document after `extends` and before binding (cfg.h), so that it
 * passes every check a value written in the file passes: unknown keys with "did you mean", units, ranges,
 * choices, the cross-checks after binding. The value is YAML, as after `key:` in a file: a scalar in the
 * file's units (`40MB`, `2.5us`), or a flow sequence or mapping (`[a, b]`, `{extends: x, nodes: 4}`).
 * Applying one:
 *   - a key path that is absent is created (missing mappings on the way too);
 *   - a present value is replaced (a mapping too: overrides do not merge into mappings);
 *   - a path that goes through a scalar treats the scalar as a reference (a preset or a file name, as an
 *     experiment's `model: gpt3-175b`) and turns it into `{ extends: NAME, KEY: VALUE }` (compose.h);
 *   - a path that goes through a sequence is refused.
 * The nodes an override creates are marked with the display name "--set KEY" and line 0, so every error
 * about them reads `--set training.tp: ...` (cxl_err_format) where a file's reads `file:line:column: ...`.
 * Later overrides of the same key win. Applying n overrides to a document of k keys is O(n (k + v)), v
 * the size of a value. Errors: CXL_EUSAGE for a malformed KEY=VALUE, CXL_ECONFIG for a value that is not
 * YAML or a path through a sequence, CXL_ENOMEM.
 */
#ifndef CXLSIM_OVERRIDE_H
#define CXLSIM_OVERRIDE_H

#include <stddef.h>

#include "config/cfg.h"
#include "util/err.h"

enum { OVERRIDE_MAX_KEY = 256, OVERRIDE_MAX_VALUE = 4096 };

typedef struct override_item {
    char *key;       /* "training.tp" */
    char *value;     /* "8" */
} override_item;

/* A list of overrides in the order given; owns its strings. Zero-initialised is empty. */
typedef struct override_list {
    size_t n, cap;
    override_item *items;
} override_list;

/* Append KEY, VALUE: the key is dotted names, none empty, at most OVERRIDE_MAX_KEY bytes. */
int override_add(override_list *l, const char *key, const char *value, cxl_err *err);
/* Append "KEY=VALUE" as written after --set (the first '=' splits). */
int override_parse(override_list *l, const char *arg, cxl_err *err);
void override_free(override_list *l);
/* Apply every override of l (NULL or empty: nothing) to doc, in order. */
int override_apply(cfg_doc *doc, const override_list *l, cxl_err *err);
/* Whether a node's file display name (cfg_mark) is one an override made. */
int override_is_mark(const char *file);

#endif
