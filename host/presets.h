/* presets.h - the device presets of configs/devices/, embedded in the binary at build time
 * (cmake/embed.cmake writes presets_data.inc from the YAML files), so `cxlsim probe` works from any
 * folder and the shipped YAML stays the single source. */
#ifndef CXLSIM_PRESETS_H
#define CXLSIM_PRESETS_H

const char *const *presets_device_names(void);
/* NULL when unknown. */
const char *presets_device_text(const char *name);
/* "<preset NAME>" (configs/devices/NAME.yaml), for error locations; NULL when unknown. */
const char *presets_device_display(const char *name);

#endif
