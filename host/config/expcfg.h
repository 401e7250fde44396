/* expcfg.h - an experiment: one model, one GPU type, one cluster and one training setup, as written in
 * configs/experiments/ (and configs/validation/).
 *
 *     name: llama2-7b-2x8-h100
 *     model: llama2-7b                         # preset name or file (compose.h)
 *     gpu: h100-sxm
 *     cluster: { extends: dgx-h100, nodes: 2 } # a preset with fields overridden
 *     training: { global_batch: 1024, tp: 2, ... }
 *     cxl: { memory: per-node, device: asic, offload_optimizer: cpu }   # optional (cxlcfg.h)
 *
 * The experiment file itself may `extends` another experiment (cfg.h). expcfg_load() loads every part,
 * derives training.dp when it is not given (GPUs / (tp x pp x cp), parallel_derive_dp),
 * checks the model's shape and the parallel layout (parallel.h), then the `cxl:` section against the
 * cluster (cxlcfg_finish: its device, relative paths from the experiment's folder); without the section
 * there is no CXL memory (cxlcfg_none). It does not check memory capacity (gpumem.h, tiers.h), so that a
 * caller can report the estimate of a layout that does not fit.
 */
#ifndef CXLSIM_EXPCFG_H
#define CXLSIM_EXPCFG_H

#include <stdio.h>

#include "config/clustercfg.h"
#include "config/compose.h"
#include "config/cfgdump.h"
#include "config/cxlcfg.h"
#include "util/err.h"
#include "config/gpucfg.h"
#include "config/modelcfg.h"
#include "config/override.h"
#include "config/traincfg.h"

/* The built-in default experiment (issue 3): LLaMA-2 7B on 2 nodes of 8 H100. */
#define EXPCFG_DEFAULT "llama2-7b-2x8-h100"

typedef struct expcfg {
    char name[64];
    char description[256];
    char source[512];           /* a path or "configs/experiments/NAME.yaml" */
    modelcfg model;
    gpucfg gpu;
    clustercfg cluster;
    traincfg train;
    cxlcfg cxl;                 /* memory none when the experiment has no `cxl:` section */
    cfgloc root;                /* the experiment's top-level mapping */
} expcfg;

/* Load from a file path or an experiment preset name. */
int expcfg_load(const char *path_or_preset, expcfg *out, cxl_err *err);
/* The same with `--set` overrides (override.h; NULL for none) applied to the experiment's document.
 * flags EXPCFG_BIND_ONLY: stop after binding (every key, type, unit and range checked; the layout,
 * the CXL section's device and its checks not), which a sweep uses to check its axes one by one. */
enum { EXPCFG_BIND_ONLY = 1 };
int expcfg_load_with(const char *path_or_preset, const override_list *ov, int flags, expcfg *out, cxl_err *err);
/* After a change of the training section in memory (a layout search, search.h): what loading derives
 * from the layout (the vocabulary padded to vocab_divisible_by x tp) and parallel_check(), with its
 * messages. training.dp is not derived here: set it. 0 or CXL_ECONFIG. */
int expcfg_check_layout(expcfg *x, cxl_err *err);
/* Load from YAML text (display_name for locations; relative references resolve from the current folder),
 * then the overrides ov (may be NULL) as expcfg_load_with. */
int expcfg_load_text(const char *display_name, const char *text, const override_list *ov, expcfg *out,
                     cxl_err *err);
/* Call fn for each configuration file the experiment was read from (compose_each_file): the
 * experiment's file and its `extends` chain, then the files of its model, GPU, cluster, training and
 * CXL sections and of the CXL device, each with its own chain. Presets and inline sections read no file.
 * A file may come more than once. Stops at and returns fn's first non-zero result. */
int expcfg_each_file(const expcfg *x, int (*fn)(void *ctx, const char *path), void *ctx);

/* The options in effect that differ from their defaults (the training section, and the cxl section when
 * memory is not none, against compose_kind.defaults): fn(ctx, "training.KEY", value, default) in field
 * order, values as cfgdump_value prints them (cfgdump_diff). Values derived at load count as in effect
 * (training.dp from the GPUs). The model, GPU and cluster are descriptions, not options: not compared.
 * 0 or CXL_ENOMEM. */
int expcfg_options_diff(const expcfg *x, cfgdump_diff_fn fn, void *ctx);

/* Print the experiment as YAML with every value in effect after `extends`, overrides and defaults
 * (cfgdump.h), the CXL device's as comments: `train --dump-config`. 0 or CXL_ENOMEM. */
int expcfg_dump(FILE *out, const expcfg *x);

#endif
