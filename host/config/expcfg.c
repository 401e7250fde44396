/* expcfg.c - experiments: compose model, GPU, cluster, training and CXL memory; run the layout checks. */
#define _POSIX_C_SOURCE 200809L
#include "config/expcfg.h"

#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "config/cfgdump.h"
#include "config/parallel.h"
#include "config/presets.h"

static int bind_model(const cfg_node *n, void *dst, cxl_err *err)
{
    int rc = compose_ref(&modelcfg_kind, n, dst, err);
    return rc ? rc : modelcfg_finish(dst, err);
}

static int bind_gpu(const cfg_node *n, void *dst, cxl_err *err) { return compose_ref(&gpucfg_kind, n, dst, err); }

static int bind_cluster(const cfg_node *n, void *dst, cxl_err *err)
{
    return compose_ref(&clustercfg_kind, n, dst, err);
}

static int bind_training(const cfg_node *n, void *dst, cxl_err *err)
{
    return compose_ref(&traincfg_kind, n, dst, err);
}

static int bind_cxl(const cfg_node *n, void *dst, cxl_err *err) { return compose_ref(&cxlcfg_kind, n, dst, err); }

#define X(f) offsetof(expcfg, f)
static const cfg_field fields[] = {
    { "name", CFG_T_STRING, X(name), 1, 1, 0, NULL, NULL, 64, NULL, "experiment name" },
    { "description", CFG_T_STRING, X(description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "model", CFG_T_CUSTOM, X(model), 1, 1, 0, NULL, NULL, 0, bind_model,
      "a model preset (cxlsim presets models), a file, or { extends: NAME, overrides... }" },
    { "gpu", CFG_T_CUSTOM, X(gpu), 1, 1, 0, NULL, NULL, 0, bind_gpu, "a GPU preset, a file, or a mapping" },
    { "cluster", CFG_T_CUSTOM, X(cluster), 1, 1, 0, NULL, NULL, 0, bind_cluster,
      "a cluster preset, a file, or a mapping" },
    { "training", CFG_T_CUSTOM, X(train), 1, 1, 0, NULL, NULL, 0, bind_training,
      "the training setup: global_batch, micro_batch, tp, pp, dp, ..." },
    { "cxl", CFG_T_CUSTOM, X(cxl), 0, 1, 0, NULL, NULL, 0, bind_cxl,
      "optional CXL memory: memory (none, per-node, pool), device, offload_optimizer, ..." },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static int resolve(void *ctx, const char *name, const char **text, const char **display)
{
    (void)ctx;
    const char *t = presets_text("experiments", name);
    if (!t)
        return -1;
    *text = t;
    *display = presets_display("experiments", name);
    return 0;
}

/* The folder of the experiment file ("" for text and for a path without a folder). */
static void exp_dir(const expcfg *x, char *buf, size_t sz)
{
    const char *slash = x->source[0] == '<' ? NULL : strrchr(x->source, '/');
    snprintf(buf, sz, "%.*s", slash ? (int)(slash - x->source + 1) : 0, x->source);
}

/* The name of a file without folder and .yaml: "configs/experiments/a.yaml" -> "a". */
static void stem(const char *path, char *buf, size_t sz)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".yaml"))
        n -= 5;
    snprintf(buf, sz, "%.*s", (int)n, base);
}

/* An experiment that extends another is its own experiment: a name or description it inherits from
 * the parent would describe the parent. Without its own, the name is the file's and the description
 * says what it extends. */
static void own_name(const cfg_node *root, expcfg *x)
{
    const char *top, *f;
    int line, col;
    cfg_mark(root, &top, &line, &col);
    const cfg_node *name = cfg_map_get(root, "name"), *desc = cfg_map_get(root, "description");
    const cfg_node *inherited = NULL;
    /* a value given by `--set` is the experiment's own */
    if (name && (cfg_mark(name, &f, &line, &col), strcmp(f, top) && !override_is_mark(f))) {
        inherited = name;
        stem(top, x->name, sizeof x->name);
    }
    if (desc && (cfg_mark(desc, &f, &line, &col), strcmp(f, top) && !override_is_mark(f)))
        inherited = desc;
    else if (!inherited || desc)
        return;
    cfg_mark(inherited, &f, &line, &col);
    char parent[sizeof x->name];
    stem(f, parent, sizeof parent);
    snprintf(x->description, sizeof x->description, "extends %s", parent);
}

int expcfg_check_layout(expcfg *x, cxl_err *err)
{
    /* Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by x tp
     * (megatron/tokenizer/tokenizer.py _vocab_size_with_padding) */
    uint64_t mult = x->train.vocab_divisible_by * x->train.tp;
    x->model.vocab_padded = mult > 1 ? (x->model.vocab + mult - 1) / mult * mult : 0;
    int rc = parallel_check(&x->model, &x->gpu, &x->cluster, &x->train, err);
    /* Megatron-FSDP's optim_grads_params shards like ZeRO-3 (parallel.c refuses another stage given with
     * it): memory, tiers and the optimizer's shard read the stage from `zero` */
    if (!rc && x->train.data_parallel == TRAINCFG_DP_FSDP) {
        x->train.zero = 3;
        x->train.overlap_grad_reduce = 1; /* asserted by Megatron-FSDP for these strategies (parallel.c) */
    }
    x->train.fp8_non_tn = x->gpu.mxfp8;
    return rc;
}

static int finish(cfg_doc *doc, int rc, const override_list *ov, int flags, expcfg *x, cxl_err *err)
{
    if (!rc && (rc = override_apply(doc, ov, err)) != 0)
        cfg_free(doc);
    else if (!rc) {
        memset(x, 0, offsetof(expcfg, source));
        cxlcfg_none(&x->cxl);       /* kept when the section is absent */
        const cfg_node *root = cfg_root(doc);
        cfgloc_from(&x->root, root);
        rc = cfg_bind(root, NULL, "", fields, x, NULL, err);
        if (!rc)
            own_name(root, x);
        cfg_free(doc);
    }
    if (rc || (flags & EXPCFG_BIND_ONLY))
        return rc;
    rc = parallel_derive_dp(&x->model, &x->cluster, &x->train, err);
    if (!rc)
        rc = expcfg_check_layout(x, err);
    if (!rc) {
        char dir[512];
        exp_dir(x, dir, sizeof dir);
        rc = cxlcfg_finish(&x->cxl, x->cluster.nodes, dir, err);
    }
    if (!rc)
        rc = cxlcfg_check_model(&x->cxl, x->model.experts, x->model.name, err);
    return rc;
}

int expcfg_load_with(const char *path_or_preset, const override_list *ov, int flags, expcfg *out, cxl_err *err)
{
    cfg_doc *doc = NULL;
    int rc;
    cxl_err_clear(err);
    memset(out, 0, sizeof *out);
    const char *text = presets_text("experiments", path_or_preset);
    if (text && !strchr(path_or_preset, '/') && !strstr(path_or_preset, ".yaml")) {
        snprintf(out->source, sizeof out->source, "%s", presets_display("experiments", path_or_preset));
        rc = cfg_load_text(out->source, text, resolve, NULL, &doc, err);
    } else if (path_or_preset && !strchr(path_or_preset, '/') && !strstr(path_or_preset, ".yaml") &&
               access(path_or_preset, F_OK) != 0) {
        return compose_unknown("experiments", "experiment", path_or_preset, err);
    } else {
        snprintf(out->source, sizeof out->source, "%s", path_or_preset ? path_or_preset : "");
        rc = cfg_load_file(path_or_preset ? path_or_preset : "", resolve, NULL, &doc, err);
    }
    return finish(doc, rc, ov, flags, out, err);
}

int expcfg_load(const char *path_or_preset, expcfg *out, cxl_err *err)
{
    return expcfg_load_with(path_or_preset, NULL, 0, out, err);
}

int expcfg_load_text(const char *display_name, const char *text, const override_list *ov, expcfg *out,
                     cxl_err *err)
{
    cfg_doc *doc = NULL;
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "%s", display_name ? display_name : "<text>");
    int rc = cfg_load_text(display_name, text, resolve, NULL, &doc, err);
    return finish(doc, rc, ov, 0, out, err);
}

int expcfg_each_file(const expcfg *x, int (*fn)(void *ctx, const char *path), void *ctx)
{
    const struct { const char *kind, *source; } parts[] = {
        { "experiments", x->source },
        { modelcfg_kind.presets, x->model.source },
        { gpucfg_kind.presets, x->gpu.source },
        { clustercfg_kind.presets, x->cluster.source },
        { traincfg_kind.presets, x->train.source },
        { cxlcfg_kind.presets, x->cxl.source },
        { "devices", x->cxl.memory != CXLCFG_NONE ? x->cxl.device_path : NULL },
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0] && !rc; i++)
        rc = compose_each_file(parts[i].kind, parts[i].source, fn, ctx);
    return rc;
}

int expcfg_options_diff(const expcfg *x, cfgdump_diff_fn fn, void *ctx)
{
    traincfg *t = malloc(sizeof *t);
    cxlcfg *c = malloc(sizeof *c);
    if (!t || !c) {
        free(t);
        free(c);
        return CXL_ENOMEM;
    }
    traincfg_kind.defaults(t);
    cfgdump_diff(traincfg_kind.fields, &x->train, t, "training.", fn, ctx);
    if (x->cxl.memory != CXLCFG_NONE) {
        cxlcfg_kind.defaults(c);
        cfgdump_diff(cxlcfg_kind.fields, &x->cxl, c, "cxl.", fn, ctx);
    }
    free(t);
    free(c);
    return 0;
}

/* cfgdump hook: each part of the experiment with its own field table. */
static void dump_part(FILE *out, const cfg_field *f, const void *dst, int indent, void *ctx)
{
    static const struct { const char *key; const compose_kind *kind; } parts[] = {
        { "model", &modelcfg_kind }, { "gpu", &gpucfg_kind }, { "cluster", &clustercfg_kind },
        { "training", &traincfg_kind }, { "cxl", &cxlcfg_kind },
    };
    (void)ctx;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!strcmp(f->key, parts[i].key)) {
            fprintf(out, "%*s%s:\n", indent, "", f->key);
            compose_dump(out, parts[i].kind, dst, indent + 2);
        }
}

int expcfg_dump(FILE *out, const expcfg *x)
{
    cfgdump_fields(out, fields, x, 0, dump_part, NULL);
    if (x->cxl.memory == CXLCFG_NONE)
        return 0;
    /* the device in effect, as comments: cxl.device names it, the values are part of the configuration */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return CXL_ENOMEM;
    devcfg_dump(m, &x->cxl.dev);
    if (fclose(m)) {
        free(text);
        return CXL_ENOMEM;
    }
    fprintf(out, "# cxl.device '%s' in effect:\n", x->cxl.dev.name);
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(out, "#   %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
    free(text);
    return 0;
}
