/* compose.c - component references: file, preset or inline mapping, with overrides and locations. */
#define _POSIX_C_SOURCE 200809L
#include "config/compose.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/cfgdump.h"
#include "config/presets.h"

void cfgloc_from(cfgloc *l, const cfg_node *n)
{
    memset(l, 0, sizeof *l);
    if (!n)
        return;
    const char *f = NULL;
    cfg_mark(n, &f, &l->line, &l->col);
    snprintf(l->file, sizeof l->file, "%s", f ? f : "");
}

int cfgloc_errf(cxl_err *err, const cfgloc *l, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (l && l->file[0])
        return cxl_errf_at(err, CXL_ECONFIG, l->file, l->line, l->col, "%s", msg);
    return cxl_errf(err, CXL_ECONFIG, "%s", msg);
}

void compose_preset_list(const char *kind, const char *typed, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    const char *const *names = presets_names(kind);
    int near = typed ? cfg_suggest(typed, names) : -1;
    if (near >= 0) {
        int w = snprintf(buf, sz, "did you mean '%s'? ", names[near]);
        len = w < 0 ? 0 : (size_t)w < sz ? (size_t)w : sz - 1;
    }
    for (size_t i = 0; names[i] && len + 1 < sz; i++) {
        int w = snprintf(buf + len, sz - len, "%s%s", i ? ", " : "presets: ", names[i]);
        if (w < 0)
            break;
        len += (size_t)w < sz - len ? (size_t)w : sz - len - 1;
    }
}

int compose_unknown(const char *kind, const char *what, const char *name, cxl_err *err)
{
    char list[1024], cut[CFG_CLIP_SZ];
    compose_preset_list(kind, name, list, sizeof list);
    return cxl_errf(err, CXL_ECONFIG, "unknown %s '%s': not a file and not a built-in preset; %s", what,
                    cfg_clip(name, cut, sizeof cut), list);
}

struct resolve_ctx {
    const char *kind;
};

static int resolve(void *ctx, const char *name, const char **text, const char **display)
{
    const struct resolve_ctx *r = ctx;
    const char *t = presets_text(r->kind, name);
    if (!t)
        return -1;
    *text = t;
    *display = presets_display(r->kind, name);
    return 0;
}

int compose_each_file(const char *presets_kind, const char *source, int (*fn)(void *ctx, const char *path),
                      void *ctx)
{
    struct stat st;
    if (!source || !*source || stat(source, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    struct resolve_ctx r = { presets_kind };
    cfg_doc *doc = NULL;
    cxl_err e;
    /* it loaded before the run; a file changed since then has nothing more to say */
    if (cfg_load_file(source, presets_kind ? resolve : NULL, &r, &doc, &e))
        return 0;
    int rc = cfg_each_file(doc, fn, ctx);
    cfg_free(doc);
    return rc;
}

static size_t nfields(const cfg_field *f)
{
    size_t n = 0;
    while (f[n].key)
        n++;
    return n;
}

static cfgloc *locs(const compose_kind *k, void *obj) { return (cfgloc *)((char *)obj + k->loc_offset); }

/* Record the location of every key present in map. */
static void record(const compose_kind *k, const cfg_node *map, void *obj)
{
    cfgloc *l = locs(k, obj);
    for (size_t i = 0; k->fields[i].key; i++) {
        const cfg_node *v = cfg_map_get(map, k->fields[i].key);
        if (v)
            cfgloc_from(&l[i], v);
    }
}

/* Load the named component ("dir" is the folder of the naming file, "" for the current one) and bind
 * it whole. at: the naming node for errors, or NULL. */
static int load_named(const compose_kind *k, const char *name, const char *dir, const cfg_node *at, void *obj,
                      cxl_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : dir, name);
    struct resolve_ctx r = { k->presets };
    cfg_doc *doc = NULL;
    int rc;
    const char *text = k->presets ? presets_text(k->presets, name) : NULL;
    if (access(path, R_OK) == 0) {
        rc = cfg_load_file(path, resolve, &r, &doc, err);
    } else if (text) {
        rc = cfg_load_text(presets_display(k->presets, name), text, resolve, &r, &doc, err);
    } else {
        char valid[768], cut[CFG_CLIP_SZ], cutp[CFG_CLIP_SZ];
        compose_preset_list(k->presets, name, valid, sizeof valid);
        const char *shown = cfg_clip(name, cut, sizeof cut), *pshown = cfg_clip(path, cutp, sizeof cutp);
        if (at)
            return cfg_errf(err, at, "%s: unknown %s '%s': no file '%s' and no preset of that name; %s",
                            k->what, k->what, shown, pshown, k->presets ? valid : "no presets");
        return cxl_errf(err, CXL_ECONFIG, "unknown %s '%s': no file '%s' and no preset of that name; %s",
                        k->what, shown, pshown, k->presets ? valid : "no presets");
    }
    if (rc)
        return rc;
    const cfg_node *root = cfg_root(doc);
    rc = cfg_bind(root, NULL, "", k->fields, obj, NULL, err);
    if (!rc) {
        record(k, root, obj);
        char *src = (char *)obj + k->source_offset;
        snprintf(src, k->source_size, "%s", text && access(path, R_OK) != 0 ? presets_display(k->presets, name)
                                                                             : path);
    }
    cfg_free(doc);
    return rc;
}

static int noop(const cfg_node *n, void *dst, cxl_err *err)
{
    (void)n, (void)dst, (void)err;
    return 0;
}

/* The folder of the file a node was written in ("" for text that is not a file). */
static void node_dir(const cfg_node *n, char *buf, size_t sz)
{
    const char *f = NULL;
    int line, col;
    cfg_mark(n, &f, &line, &col);
    buf[0] = '\0';
    if (!f || f[0] == '<')
        return;
    const char *slash = strrchr(f, '/');
    if (slash)
        snprintf(buf, sz, "%.*s", (int)(slash - f + 1), f);
}

static void init(const compose_kind *k, void *obj)
{
    k->defaults(obj);
    memset(locs(k, obj), 0, nfields(k->fields) * sizeof(cfgloc));
}

int compose_ref(const compose_kind *k, const cfg_node *ref, void *obj, cxl_err *err)
{
    size_t n = nfields(k->fields);
    if (n > COMPOSE_MAX_FIELDS)
        return cxl_errf(err, CXL_EINTERNAL, "compose: %s table has %zu fields (at most %d)", k->what, n,
                        COMPOSE_MAX_FIELDS);
    init(k, obj);
    cfgloc *root = (cfgloc *)((char *)obj + k->root_loc_offset);
    cfgloc_from(root, ref);
    char dir[512];
    node_dir(ref, dir, sizeof dir);
    const char *s = cfg_scalar(ref);
    if (s) {
        if (!*s)
            return cfg_errf(err, ref, "%s: empty; name a preset or a file", k->what);
        int rc = load_named(k, s, dir, ref, obj, err);
        return rc;
    }
    if (cfg_kind(ref) != CFG_MAP)
        return cfg_errf(err, ref, "%s: expected a preset name, a file path or a mapping (optionally with "
                        "'extends: NAME' and overrides)", k->what);
    const cfg_node *ext = cfg_map_get(ref, "extends");
    if (!ext) {
        int rc = cfg_bind(ref, NULL, k->what, k->fields, obj, NULL, err);
        if (!rc) {
            record(k, ref, obj);
            char where[sizeof root->file];
            memcpy(where, root->file, sizeof where);
            snprintf((char *)obj + k->source_offset, k->source_size, "%s (inline)", where);
        }
        return rc;
    }
    const char *name = cfg_scalar(ext);
    if (!name || !*name)
        return cfg_errf(err, ext, "%s.extends: name one %s (a preset name or a file path)", k->what, k->what);
    /* the parent is named relative to the file that wrote `extends` (a `--set` override may have made
     * the mapping around a reference written in a file: override.h) */
    node_dir(ext, dir, sizeof dir);
    int rc = load_named(k, name, dir, ext, obj, err);
    if (rc)
        return rc;
    /* The overrides: the same table with nothing required, plus the 'extends' key itself. */
    cfg_field over[COMPOSE_MAX_FIELDS + 2];
    memcpy(over, k->fields, n * sizeof *over);
    for (size_t i = 0; i < n; i++)
        over[i].required = 0;
    memset(&over[n], 0, sizeof over[n]);
    over[n].key = "extends";
    over[n].type = CFG_T_CUSTOM;
    over[n].custom = noop;
    memset(&over[n + 1], 0, sizeof over[n + 1]);
    rc = cfg_bind(ref, NULL, k->what, over, obj, NULL, err);
    if (!rc)
        record(k, ref, obj);
    return rc;
}

int compose_load(const compose_kind *k, const char *name_or_path, void *obj, cxl_err *err)
{
    cxl_err_clear(err);
    if (!name_or_path || !*name_or_path)
        return cxl_errf(err, CXL_EUSAGE, "no %s given", k->what);
    init(k, obj);
    memset((char *)obj + k->root_loc_offset, 0, sizeof(cfgloc));
    return load_named(k, name_or_path, "", NULL, obj, err);
}

void compose_dump(FILE *out, const compose_kind *k, const void *obj, int indent)
{
    if (!k->quiet_from) {
        cfgdump_fields(out, k->fields, obj, indent, k->dump_custom, NULL);
        return;
    }
    const cfgloc *loc = (const cfgloc *)((const char *)obj + k->loc_offset);
    cfg_field one[2];
    memset(one, 0, sizeof one);
    for (size_t i = 0; k->fields[i].key; i++) {
        if (i >= k->quiet_from && !loc[i].file[0])
            continue;
        one[0] = k->fields[i];
        cfgdump_fields(out, one, obj, indent, k->dump_custom, NULL);
    }
}
