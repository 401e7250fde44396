/* sweep.h - a sweep file: one base experiment and the axes along which `cxlsim sweep` varies it.
 *
 *     base: gpt3-175b-1024-a100.yaml   # an experiment preset, or a file relative to this file's folder
 *                                      # (command probe: a device preset or file)
 *     command: train                   # train (default), memory, or probe: what each point runs
 *     probe: { backend: csim, quick: true }   # command probe only: the backend, --quick's windows
 *     axes:                            # crossed, in this order (the last varies fastest)
 *       training.tp: [1, 2, 4, 8]      # a list of values, as `--set KEY=VALUE` takes them (override.h)
 *       training.pp: { from: 1, to: 64, times: 2 }   # a range of integers: `step: N` adds, `times: N`
 *                                                    # multiplies (1, 2, 4, ..., 64)
 *     zip:                             # optional: each entry's axes move together (one length)
 *       - { training.micro_batch: [1, 2], training.global_batch: [1536, 3072] }
 *     filter: training.tp * training.pp <= 512      # optional (sweepexpr.h)
 *     best: 5                          # points in the summary (default 5)
 *
 * Points are numbered in the product of the groups (each crossed axis is one group, each zip entry one),
 * the last group fastest; the filter keeps a subset, numbers unchanged. A point is the base experiment
 * with the `--set` overrides of the command line first, then one value of every axis.
 *
 * sweep_load checks everything that does not depend on how values combine, each a CXL_ECONFIG at the
 * sweep file's line and column and naming the axis: an axis's key or value that the experiment does not
 * accept (each value of a crossed axis is bound alone over the base, each entry of a zip group with its
 * partners: an unknown key, a wrong unit or type, a value out of range or not among the choices, with
 * the configuration's own message; a device is loaded whole, so its checks between keys count too: zip
 * keys that must change together, as dram.standard and dram.speed), an empty list or range, zipped
 * lists of different lengths, an axis given twice, more than SWEEP_MAX_POINTS points, a filter that does
 * not parse or keeps no point. What depends on the combination (a layout that does not fit the model or
 * the cluster, memory) is the point's status, not an error (sweeprun.h). Loading costs one bind of the
 * base per distinct axis value, plus O(points x filter length).
 */
#ifndef CXLSIM_SWEEP_H
#define CXLSIM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "config/compose.h"
#include "util/err.h"
#include "config/override.h"

enum { SWEEP_MAX_AXES = 32, SWEEP_MAX_POINTS = 1000000, SWEEP_MAX_VALUES = 65536, SWEEP_DEFAULT_BEST = 5 };
enum sweep_command { SWEEP_TRAIN = 0, SWEEP_MEMORY = 1, SWEEP_PROBE = 2 };
#define SWEEP_PROBE_REFERENCE "local-ddr5"   /* the local-DDR path of a probe sweep's latency ratio */
extern const char *const sweep_command_names[];

typedef struct sweep_axis {
    char key[OVERRIDE_MAX_KEY + 1];   /* "training.tp" */
    size_t group;                     /* its group: the crossed axes one each, a zip entry one for all */
    size_t nvals;
    char **vals;                      /* the values as text, as --set takes them */
    cfgloc loc;                       /* where the axis is written in the sweep file */
} sweep_axis;

typedef struct sweep_spec {
    char path[512];                   /* the sweep file */
    char base[1024];                  /* preset name, or path (from the current folder) */
    int command;                      /* enum sweep_command */
    char probe_backend[16];           /* command probe: the backend ("csim") */
    int probe_quick;                  /* command probe: probe --quick's windows (and 2 curve points) */
    size_t naxes, ngroups;
    sweep_axis axes[SWEEP_MAX_AXES];
    size_t group_len[SWEEP_MAX_AXES];
    char filter[1024];                /* "" for none */
    size_t best;
    uint64_t product;                 /* points before the filter */
    size_t npoints;                   /* points the filter keeps */
    uint64_t *points;                 /* their numbers, ascending */
    uint64_t fingerprint;             /* FNV-1a of base, command, the axes and their values, and the filter */
} sweep_spec;

/* Load and check a sweep file; global: the command line's --set overrides (NULL for none), which
 * the axis checks apply under each value. */
int sweep_load(const char *path, const override_list *global, sweep_spec *sp, cxl_err *err);
void sweep_free(sweep_spec *sp);
/* The index into axes[a].vals of the value axis a takes at point. */
size_t sweep_value_index(const sweep_spec *sp, size_t a, uint64_t point);
/* The overrides of a point: global's (may be NULL), then each axis's value. out is appended to. */
int sweep_point_overrides(const sweep_spec *sp, const override_list *global, uint64_t point, override_list *out,
                          cxl_err *err);

#endif
