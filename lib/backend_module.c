/* backend_module.c - finding and loading a backend module (backend_module.h). */
#define _GNU_SOURCE /* dladdr */
#include "backend_module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the optional backends the project has are looked for: a name never becomes an arbitrary path. */
static const char *const modular[] = { "xrt", "verilator", NULL };

const cxl_backend_ops *cxl_backend_module(const char *name);

const cxl_backend_ops *cxl_backend_module(const char *name)
{
    int known = 0;
    for (size_t i = 0; modular[i]; i++)
        known |= !strcmp(modular[i], name);
    if (!known)
        return NULL;
    char dir[4096], path[4200];
    const char *env = getenv("CXLSIM_BACKEND_DIR");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else {
        Dl_info self;
        if (!dladdr((void *)cxl_backend_module, &self) || !self.dli_fname)
            return NULL;
        snprintf(dir, sizeof dir, "%s", self.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash)
            snprintf(slash, sizeof dir - (size_t)(slash - dir), "/cxlsim");
        else
            snprintf(dir, sizeof dir, "cxlsim");
    }
    snprintf(path, sizeof path, "%s/backend_%s.so", dir, name);
    /* RTLD_LOCAL: the module's copies of the host modules stay its own. Never closed: the operations it
     * returns are used by backends that outlive this call, and the loader counts references itself. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    cxlsim_module_entry entry;
    *(void **)&entry = dlsym(h, CXLSIM_MODULE_ENTRY);
    const cxl_backend_ops *ops = entry ? entry(CXLSIM_MODULE_ABI) : NULL;
    if (!ops || strcmp(ops->name, name)) {
        dlclose(h);
        return NULL;
    }
    return ops;
}
