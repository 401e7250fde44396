/* preset_fixture.h - a device preset's model parameters for cmocka tests: devcfg_load + devcfg_to_params,
 * failing the test with the loader's message. Header-only (static inline), as hw_fixture.h. Include after
 * <cmocka.h>. */
#ifndef PRESET_FIXTURE_H
#define PRESET_FIXTURE_H

#include "config/devcfg.h"

static inline void pfx_preset(const char *name, cxl_params *p)
{
    devcfg c;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(name, &c, &e) || devcfg_to_params(&c, p, &e))
        fail_msg("%s: %s", name, e.msg);
}

#endif
