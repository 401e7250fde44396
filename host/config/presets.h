/* presets.h - the presets of configs/<folder>/ (devices, models, gpus, clusters, experiments), embedded
 * in the binary at build time (cmake/embed.cmake writes one presets_<folder>.inc per folder), so every
 * command works from any folder and the shipped YAML stays the single source.
 *
 * A preset kind is the folder name: "devices", "models", "gpus", "clusters", "experiments". An unknown
 * kind behaves as an empty folder. */
#ifndef CXLSIM_PRESETS_H
#define CXLSIM_PRESETS_H

/* Names of a kind's presets, sorted, NULL-terminated (an empty list for an unknown kind). */
const char *const *presets_names(const char *kind);
/* The YAML text, or NULL when unknown. */
const char *presets_text(const char *kind, const char *name);
/* "configs/<kind>/NAME.yaml", for error locations; NULL when unknown. */
const char *presets_display(const char *kind, const char *name);

/* The device presets (kind "devices"). */
const char *const *presets_device_names(void);
const char *presets_device_text(const char *name);
const char *presets_device_display(const char *name);

#endif
