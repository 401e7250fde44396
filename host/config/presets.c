#include "config/presets.h"

#include <stddef.h>
#include <string.h>

typedef struct preset {
    const char *name, *display, *text;
} preset;

/* Generated: static const preset KIND_presets[] = { {...}, ... }; and KIND_preset_names[]. */
#include "presets_devices.inc"
#include "presets_models.inc"
#include "presets_gpus.inc"
#include "presets_clusters.inc"
#include "presets_experiments.inc"

#define KIND(folder, arr, names) { folder, arr, sizeof arr / sizeof arr[0], names }
static const struct preset_kind {
    const char *folder;
    const preset *list;
    size_t n;
    const char *const *names;
} kinds[] = {
    KIND("devices", device_presets, device_preset_names),
    KIND("models", model_presets, model_preset_names),
    KIND("gpus", gpu_presets, gpu_preset_names),
    KIND("clusters", cluster_presets, cluster_preset_names),
    KIND("experiments", experiment_presets, experiment_preset_names),
};

static const char *const no_names[] = { NULL };

static const struct preset_kind *find_kind(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].folder, kind))
            return &kinds[i];
    return NULL;
}

static const preset *find(const char *kind, const char *name)
{
    const struct preset_kind *k = find_kind(kind);
    if (!k || !name || !*name)
        return NULL;
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->list[i].name, name))
            return &k->list[i];
    return NULL;
}

const char *const *presets_names(const char *kind)
{
    const struct preset_kind *k = find_kind(kind);
    return k ? k->names : no_names;
}

const char *presets_text(const char *kind, const char *name)
{
    const preset *p = find(kind, name);
    return p ? p->text : NULL;
}

const char *presets_display(const char *kind, const char *name)
{
    const preset *p = find(kind, name);
    return p ? p->display : NULL;
}

const char *const *presets_device_names(void) { return presets_names("devices"); }
const char *presets_device_text(const char *name) { return presets_text("devices", name); }
const char *presets_device_display(const char *name) { return presets_display("devices", name); }
