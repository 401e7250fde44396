#include "presets.h"

#include <stddef.h>
#include <string.h>

typedef struct preset {
    const char *name, *display, *text;
} preset;

/* Generated: static const preset device_presets[] = { {...}, ... }; and the names array. */
#include "presets_data.inc"

const char *const *presets_device_names(void) { return device_preset_names; }

static const preset *find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof device_presets / sizeof device_presets[0]; i++)
        if (!strcmp(device_presets[i].name, name))
            return &device_presets[i];
    return NULL;
}

const char *presets_device_text(const char *name)
{
    const preset *p = find(name);
    return p ? p->text : NULL;
}

const char *presets_device_display(const char *name)
{
    const preset *p = find(name);
    return p ? p->display : NULL;
}
