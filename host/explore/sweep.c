/* sweep.c - sweep files: parsing, the checks of the axes, and the points (sweep.h). */
#define _POSIX_C_SOURCE 200809L
#include "explore/sweep.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl/backend.h"
#include "config/cfg.h"
#include "config/devcfg.h"
#include "config/expcfg.h"
#include "explore/sweepexpr.h"

const char *const sweep_command_names[] = { "train", "memory", "probe", NULL };

typedef unsigned long long ull;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;   /* a separator, so that "ab","c" differs from "a","bc" */
}

static int oom(cxl_err *err) { return cxl_errf(err, CXL_ENOMEM, "out of memory"); }

static int push_value(sweep_axis *a, const char *v, const cfg_node *at, cxl_err *err)
{
    if (a->nvals >= SWEEP_MAX_VALUES)
        return cfg_errf(err, at, "axis '%s': more than %d values", a->key, SWEEP_MAX_VALUES);
    if (!(a->nvals & (a->nvals - 1)) || !a->nvals) {
        char **v2 = realloc(a->vals, (a->nvals ? 2 * a->nvals : 1) * sizeof *v2);
        if (!v2)
            return oom(err);
        a->vals = v2;
    }
    if (!(a->vals[a->nvals] = strdup(v)))
        return oom(err);
    a->nvals++;
    return 0;
}

static int range_u64(const cfg_node *r, const char *k, uint64_t *out, int need, const char *axis, cxl_err *err)
{
    const cfg_node *n = cfg_map_get(r, k);
    char why[160];
    if (!n)
        return need ? cfg_errf(err, r, "axis '%s': a range needs '%s'", axis, k) : 1;
    if (!cfg_scalar(n) || cfg_parse_u64(cfg_scalar(n), out, why, sizeof why))
        return cfg_errf(err, n, "axis '%s': %s: %s", axis, k, cfg_scalar(n) ? why : "expected an integer");
    return 0;
}

/* { from: A, to: B, step: S } or { from: A, to: B, times: M }: integers from A up to B. */
static int range_values(sweep_axis *a, const cfg_node *r, cxl_err *err)
{
    static const char *const keys[] = { "from", "to", "step", "times", NULL };
    for (size_t i = 0; i < cfg_map_size(r); i++) {
        const char *k = cfg_map_key(r, i);
        int known = 0;
        for (int j = 0; keys[j]; j++)
            known |= !strcmp(k, keys[j]);
        if (!known)
            return cfg_errf(err, cfg_map_key_node(r, i), "axis '%s': unknown range key '%s'; a range has from, to, "
                            "and step or times", a->key, k);
    }
    uint64_t from, to, step = 0, times = 0;
    int rc;
    if ((rc = range_u64(r, "from", &from, 1, a->key, err)) || (rc = range_u64(r, "to", &to, 1, a->key, err)))
        return rc;
    int has_step = !range_u64(r, "step", &step, 0, a->key, err), has_times = !range_u64(r, "times", &times, 0, a->key, err);
    if (err->code)
        return err->code;
    if (has_step == has_times)
        return cfg_errf(err, r, "axis '%s': a range needs one of step (adds) or times (multiplies)", a->key);
    if ((has_step && step == 0) || (has_times && times < 2) || (has_times && from == 0))
        return cfg_errf(err, r, "axis '%s': %s", a->key, has_step ? "step must be at least 1"
                        : "times must be at least 2, from at least 1");
    for (uint64_t v = from; v <= to;) {
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (ull)v);
        if ((rc = push_value(a, buf, r, err)))
            return rc;
        uint64_t next = has_step ? v + step : v * times;
        if (next <= v || (has_times && next / times != v))
            break;      /* past 2^64: the range ends */
        v = next;
    }
    return 0;
}

static int add_axis(sweep_spec *sp, const cfg_node *key, const cfg_node *vals, size_t group, cxl_err *err)
{
    const char *k = cfg_scalar(key);
    if (sp->naxes >= SWEEP_MAX_AXES)
        return cfg_errf(err, key, "more than %d axes", SWEEP_MAX_AXES);
    for (size_t i = 0; i < sp->naxes; i++)
        if (!strcmp(sp->axes[i].key, k))
            return cfg_errf(err, key, "axis '%s' is given twice (first at line %d)", k, sp->axes[i].loc.line);
    override_list probe = { 0 };
    int rc = override_add(&probe, k, "0", err);
    override_free(&probe);
    if (rc)
        return cfg_errf(err, key, "axis '%s': %s", k, err->msg);
    sweep_axis *a = &sp->axes[sp->naxes++];
    snprintf(a->key, sizeof a->key, "%s", k);
    a->group = group;
    cfgloc_from(&a->loc, key);
    if (cfg_kind(vals) == CFG_MAP)
        rc = range_values(a, vals, err);
    else if (cfg_kind(vals) == CFG_SEQ) {
        for (size_t i = 0; i < cfg_seq_size(vals) && !rc; i++) {
            const char *v = cfg_scalar(cfg_seq_at(vals, i));
            rc = v ? push_value(a, v, cfg_seq_at(vals, i), err)
                   : cfg_errf(err, cfg_seq_at(vals, i), "axis '%s': a value is one scalar, as after --set KEY=", k);
        }
    } else
        rc = cfg_errf(err, vals, "axis '%s': expected a list of values ([1, 2, 4]) or a range ({from: 1, to: 8, "
                      "times: 2})", k);
    if (!rc && !a->nvals)
        rc = cfg_errf(err, vals, "axis '%s' has no values: the product of the axes would be empty", k);
    return rc;
}

/* Load the base with overrides ov: an experiment bound only (its layout is the point's business), or a
 * device. */
static int load_base(const sweep_spec *sp, const override_list *ov, cxl_err *err)
{
    if (sp->command == SWEEP_PROBE) {
        devcfg *d = malloc(sizeof *d);
        int rc = d ? devcfg_load_with(sp->base, ov, d, err) : oom(err);
        free(d);
        return rc;
    }
    expcfg *x = malloc(sizeof *x);
    int rc = x ? expcfg_load_with(sp->base, ov, EXPCFG_BIND_ONLY, x, err) : oom(err);
    free(x);
    return rc;
}

/* Entry i of group g (one value of each of its axes) over the base and the command line's overrides: an
 * error at one of the group's `--set` marks is the axis's. */
static int check_entry(const sweep_spec *sp, const override_list *global, size_t g, size_t i, cxl_err *err)
{
    override_list ov = { 0 };
    int rc = 0;
    for (size_t k = 0; global && k < global->n && !rc; k++)
        rc = override_add(&ov, global->items[k].key, global->items[k].value, err);
    for (size_t a = 0; a < sp->naxes && !rc; a++)
        if (sp->axes[a].group == g)
            rc = override_add(&ov, sp->axes[a].key, sp->axes[a].vals[i], err);
    if (!rc)
        rc = load_base(sp, &ov, err);
    override_free(&ov);
    for (size_t a = 0; rc && a < sp->naxes; a++) {
        const sweep_axis *ax = &sp->axes[a];
        char mark[OVERRIDE_MAX_KEY + 8], inner[2048], cut[CFG_CLIP_SZ];
        snprintf(mark, sizeof mark, "--set %s", ax->key);
        if (ax->group != g || strcmp(err->file, mark))
            continue;
        cxl_err_format(err, inner, sizeof inner);
        return cfgloc_errf(err, &ax->loc, "axis '%s', value '%s': %s", ax->key,
                           cfg_clip(ax->vals[i], cut, sizeof cut), inner);
    }
    /* an error elsewhere comes of the combination with the base (a device's checks between keys): the
     * points that have it say so */
    if (rc && rc != CXL_ENOMEM) {
        cxl_err_clear(err);
        rc = 0;
    }
    return rc;
}

/* qsort order of pointers into an axis's values: by the value */
static int cmp_val(const void *a, const void *b) { return strcmp(**(char **const *)a, **(char **const *)b); }

/* Every entry of group g: a crossed axis's distinct values (found by sorting, O(v log v)) one by one, a
 * zip group's entries each with its partners. One load of the base per entry checked. */
static int check_group(const sweep_spec *sp, const override_list *global, size_t g, cxl_err *err)
{
    size_t first = 0, n = 0;
    for (size_t a = 0; a < sp->naxes; a++)
        if (sp->axes[a].group == g)
            first = n++ ? first : a;
    if (n > 1) {
        int rc = 0;
        for (size_t i = 0; i < sp->group_len[g] && !rc; i++)
            rc = check_entry(sp, global, g, i, err);
        return rc;
    }
    const sweep_axis *a = &sp->axes[first];
    char ***p = malloc(a->nvals * sizeof *p);
    if (!p)
        return oom(err);
    for (size_t i = 0; i < a->nvals; i++)
        p[i] = &a->vals[i];
    qsort(p, a->nvals, sizeof *p, cmp_val);
    int rc = 0;
    for (size_t i = 0; i < a->nvals && !rc; i++)
        if (!i || strcmp(*p[i - 1], *p[i]))
            rc = check_entry(sp, global, g, (size_t)(p[i] - a->vals), err);
    free(p);
    return rc;
}

static int zip_group(sweep_spec *sp, const cfg_node *m, cxl_err *err)
{
    if (cfg_kind(m) != CFG_MAP || !cfg_map_size(m))
        return cfg_errf(err, m, "zip: each entry is a mapping of axes whose lists move together, e.g. "
                        "{ training.micro_batch: [1, 2], training.global_batch: [1536, 3072] }");
    size_t first = sp->naxes, g = sp->ngroups++;
    for (size_t i = 0; i < cfg_map_size(m); i++) {
        int rc = add_axis(sp, cfg_map_key_node(m, i), cfg_map_value(m, i), g, err);
        if (rc)
            return rc;
        const sweep_axis *a = &sp->axes[sp->naxes - 1], *a0 = &sp->axes[first];
        if (a->nvals != a0->nvals)
            return cfg_errf(err, cfg_map_key_node(m, i), "zip: axis '%s' has %zu value(s) but '%s' has %zu; zipped "
                            "axes move together and need lists of one length", a->key, a->nvals, a0->key, a0->nvals);
    }
    sp->group_len[g] = sp->axes[first].nvals;
    return 0;
}

size_t sweep_value_index(const sweep_spec *sp, size_t a, uint64_t point)
{
    size_t g = sp->axes[a].group;
    uint64_t stride = 1;
    for (size_t h = g + 1; h < sp->ngroups; h++)
        stride *= sp->group_len[h];
    return (size_t)(point / stride % sp->group_len[g]);
}

int sweep_point_overrides(const sweep_spec *sp, const override_list *global, uint64_t point, override_list *out,
                          cxl_err *err)
{
    int rc = 0;
    for (size_t g = 0; global && g < global->n && !rc; g++)
        rc = override_add(out, global->items[g].key, global->items[g].value, err);
    for (size_t a = 0; a < sp->naxes && !rc; a++)
        rc = override_add(out, sp->axes[a].key, sp->axes[a].vals[sweep_value_index(sp, a, point)], err);
    return rc;
}

struct look_ctx {
    const sweep_spec *sp;
    uint64_t point;
};

static int look(void *ctx, const char *name, size_t len, double *out, char *why, size_t whysz)
{
    const struct look_ctx *c = ctx;
    for (size_t a = 0; a < c->sp->naxes; a++) {
        const sweep_axis *ax = &c->sp->axes[a];
        if (strlen(ax->key) != len || strncmp(ax->key, name, len))
            continue;
        const char *v = ax->vals[sweep_value_index(c->sp, a, c->point)];
        char *end;
        *out = !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : strtod(v, &end);
        if (strcmp(v, "true") && strcmp(v, "false") && (end == v || *end)) {
            snprintf(why, whysz, "axis '%s' has the value '%.64s', not a number", ax->key, v);
            return -1;
        }
        return 0;
    }
    snprintf(why, whysz, "'%.*s' is not an axis of this sweep", (int)(len > 64 ? 64 : len), name);
    return -1;
}

/* The product of the groups, bounded before any value is checked. */
static int product(sweep_spec *sp, cxl_err *err)
{
    sp->product = 1;
    for (size_t g = 0; g < sp->ngroups; g++) {
        if (sp->group_len[g] > SWEEP_MAX_POINTS / sp->product)
            return cxl_errf(err, CXL_ECONFIG, "%s: the axes make more than %d points (the most one sweep runs); "
                            "split it or narrow the axes", sp->path, SWEEP_MAX_POINTS);
        sp->product *= sp->group_len[g];
    }
    return 0;
}

/* The points the filter keeps. */
static int expand(sweep_spec *sp, const cfgloc *filter_at, cxl_err *err)
{
    if (!(sp->points = malloc(sp->product * sizeof *sp->points)))
        return oom(err);
    for (uint64_t p = 0; p < sp->product; p++) {
        double keep = 1;
        char why[256];
        struct look_ctx c = { sp, p };
        if (sp->filter[0] && sweepexpr_eval(sp->filter, look, &c, &keep, why, sizeof why))
            return cfgloc_errf(err, filter_at, "filter: %s", why);
        if (keep != 0)
            sp->points[sp->npoints++] = p;
    }
    if (!sp->npoints)
        return cfgloc_errf(err, filter_at, "filter: keeps none of the %llu points", (ull)sp->product);
    return 0;
}

/* The base named in the sweep file: a preset name as it is, a path from the sweep file's folder. */
static void base_path(sweep_spec *sp, const char *base)
{
    const char *slash = strrchr(sp->path, '/');
    if (base[0] == '/' || !slash || (!strchr(base, '/') && !strstr(base, ".yaml")))
        snprintf(sp->base, sizeof sp->base, "%s", base);
    else
        snprintf(sp->base, sizeof sp->base, "%.*s%s", (int)(slash - sp->path + 1), sp->path, base);
}

/* The base experiment binds (with the command line's overrides); an error without a location of its own
 * (an unknown preset name) is given the base's. */
static int check_base(const sweep_spec *sp, const override_list *global, const cfgloc *at, cxl_err *err)
{
    int rc = load_base(sp, global, err);
    if (rc && !err->file[0]) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rc = cfgloc_errf(err, at, "base: %s", msg);
    }
    return rc;
}

static int top_keys(const cfg_node *root, cxl_err *err)
{
    static const char *const keys[] = { "base", "command", "probe", "axes", "zip", "filter", "best", "description",
                                        NULL };
    for (size_t i = 0; i < cfg_map_size(root); i++) {
        const char *k = cfg_map_key(root, i);
        int j = 0;
        while (keys[j] && strcmp(keys[j], k))
            j++;
        if (keys[j])
            continue;
        int near = cfg_suggest(k, keys);
        char hint[64] = "";
        if (near >= 0)
            snprintf(hint, sizeof hint, "did you mean '%s'? ", keys[near]);
        return cfg_errf(err, cfg_map_key_node(root, i), "unknown key '%s'; %svalid: base, command, probe, axes, "
                        "zip, filter, best, description", k, hint);
    }
    return 0;
}

/* probe: { backend: NAME, quick: BOOL }, for command probe only. */
static int probe_options(sweep_spec *sp, const cfg_node *root, cxl_err *err)
{
    static const cfg_field fields[] = {
        { "backend", CFG_T_STRING, offsetof(sweep_spec, probe_backend), 0, 1, 0, NULL, NULL, 16, NULL,
          "the backend of every point: csim, analytical, verilator, xrt" },
        { "quick", CFG_T_BOOL, offsetof(sweep_spec, probe_quick), 0, 1, 0, NULL, NULL, 0, NULL,
          "probe --quick's windows and samples, and 2 curve points" },
        { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
    };
    const cfg_node *pr = cfg_map_get(root, "probe");
    snprintf(sp->probe_backend, sizeof sp->probe_backend, "csim");
    if (pr && sp->command != SWEEP_PROBE)
        return cfg_errf(err, pr, "probe: options of command probe only (the command is %s)",
                        sweep_command_names[sp->command]);
    if (!pr)
        return 0;
    if (cfg_kind(pr) != CFG_MAP)
        return cfg_errf(err, pr, "probe: a mapping, e.g. { backend: csim, quick: true }");
    int rc = cfg_bind(pr, NULL, "probe", fields, sp, NULL, err);
    if (rc)
        return rc;
    for (const char *const *n = cxl_backend_names(); *n; n++)
        if (!strcmp(*n, sp->probe_backend))
            return 0;
    return cfg_errf(err, cfg_map_get(pr, "backend"), "probe.backend: unknown backend '%s'; valid: csim, "
                    "analytical, verilator, xrt", sp->probe_backend);
}

static int scalars(sweep_spec *sp, const cfg_node *root, cxl_err *err)
{
    const cfg_node *b = cfg_map_get(root, "base"), *c = cfg_map_get(root, "command");
    const cfg_node *f = cfg_map_get(root, "filter"), *best = cfg_map_get(root, "best");
    if (!b || !cfg_scalar(b) || !*cfg_scalar(b))
        return cfg_errf(err, b ? b : root, "base: name the experiment the sweep varies (a preset name or a file)");
    base_path(sp, cfg_scalar(b));
    if (c) {
        const char *v = cfg_scalar(c);
        int k = 0;
        while (v && sweep_command_names[k] && strcmp(sweep_command_names[k], v))
            k++;
        if (!v || !sweep_command_names[k])
            return cfg_errf(err, c, "command: '%s'; valid: train, memory, probe", v ? v : "(not a scalar)");
        sp->command = k;
    }
    int rc = probe_options(sp, root, err);
    if (rc)
        return rc;
    if (f && (!cfg_scalar(f) || strlen(cfg_scalar(f)) >= sizeof sp->filter))
        return cfg_errf(err, f, "filter: one condition of at most %zu characters, e.g. 'training.tp * training.pp "
                        "<= 64'", sizeof sp->filter - 1);
    if (f)
        snprintf(sp->filter, sizeof sp->filter, "%s", cfg_scalar(f));
    sp->best = SWEEP_DEFAULT_BEST;
    uint64_t nb;
    char why[160];
    if (best && (!cfg_scalar(best) || cfg_parse_u64(cfg_scalar(best), &nb, why, sizeof why) || nb > 1000))
        return cfg_errf(err, best, "best: the number of points in the summary, 0 to 1000");
    if (best)
        sp->best = (size_t)nb;
    return 0;
}

static int axes_of(sweep_spec *sp, const cfg_node *root, cxl_err *err)
{
    const cfg_node *ax = cfg_map_get(root, "axes"), *zip = cfg_map_get(root, "zip");
    if (ax && cfg_kind(ax) != CFG_MAP)
        return cfg_errf(err, ax, "axes: a mapping of key paths to values, e.g. { training.tp: [1, 2, 4] }");
    if (zip && cfg_kind(zip) != CFG_SEQ)
        return cfg_errf(err, zip, "zip: a list of mappings of axes that move together");
    int rc = 0;
    for (size_t i = 0; i < cfg_map_size(ax) && !rc; i++) {
        sp->group_len[sp->ngroups] = 0;
        rc = add_axis(sp, cfg_map_key_node(ax, i), cfg_map_value(ax, i), sp->ngroups, err);
        if (!rc)
            sp->group_len[sp->ngroups] = sp->axes[sp->naxes - 1].nvals, sp->ngroups++;
    }
    for (size_t i = 0; i < cfg_seq_size(zip) && !rc; i++)
        rc = zip_group(sp, cfg_seq_at(zip, i), err);
    if (!rc && !sp->naxes)
        rc = cfg_errf(err, root, "no axes: give 'axes:' (and/or 'zip:') with at least one key and its values");
    return rc;
}

int sweep_load(const char *path, const override_list *global, sweep_spec *sp, cxl_err *err)
{
    memset(sp, 0, sizeof *sp);
    cxl_err_clear(err);
    snprintf(sp->path, sizeof sp->path, "%s", path);
    cfg_doc *doc = NULL;
    int rc = cfg_load_file(path, NULL, NULL, &doc, err);
    if (rc)
        return rc;
    const cfg_node *root = cfg_root(doc), *f = cfg_map_get(root, "filter");
    cfgloc filter_at, base_at;
    cfgloc_from(&filter_at, f);
    cfgloc_from(&base_at, cfg_map_get(root, "base"));
    rc = top_keys(root, err);
    if (!rc)
        rc = scalars(sp, root, err);
    if (!rc)
        rc = axes_of(sp, root, err);
    cfg_free(doc);
    if (!rc)
        rc = product(sp, err);
    if (!rc)
        rc = check_base(sp, global, &base_at, err);
    for (size_t g = 0; g < sp->ngroups && !rc; g++)
        rc = check_group(sp, global, g, err);
    if (!rc)
        rc = expand(sp, &filter_at, err);
    if (rc) {
        sweep_free(sp);
        return rc;
    }
    uint64_t h = fnv(0xcbf29ce484222325ull, sp->base);
    h = fnv(h, sweep_command_names[sp->command]);
    if (sp->command == SWEEP_PROBE)
        h = fnv(fnv(h, sp->probe_backend), sp->probe_quick ? "quick" : "full");
    for (size_t g = 0; global && g < global->n; g++)
        h = fnv(fnv(h, global->items[g].key), global->items[g].value);
    for (size_t a = 0; a < sp->naxes; a++) {
        char grp[24];
        snprintf(grp, sizeof grp, "%zu", sp->axes[a].group);
        h = fnv(fnv(h, sp->axes[a].key), grp);
        for (size_t i = 0; i < sp->axes[a].nvals; i++)
            h = fnv(h, sp->axes[a].vals[i]);
    }
    sp->fingerprint = fnv(h, sp->filter);
    return 0;
}

void sweep_free(sweep_spec *sp)
{
    for (size_t a = 0; a < sp->naxes; a++) {
        for (size_t i = 0; i < sp->axes[a].nvals; i++)
            free(sp->axes[a].vals[i]);
        free(sp->axes[a].vals);
        sp->axes[a].vals = NULL;
        sp->axes[a].nvals = 0;
    }
    free(sp->points);
    sp->points = NULL;
    sp->naxes = sp->npoints = 0;
}
