/* backend_module.c - finding and loading a backend module (backend_module.h). */
#define _GNU_SOURCE /* dladdr */
#include "backend_module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the optional backends the project has are looked for: a name never becomes an arbitrary path. */
static const char *const modular[] = { "xrt", "verilator", NULL };

/* The module file of backend `name` into path: 0, or -1 where `name` has no module or the library's own
 * folder is unknown. */
static int module_path(const char *name, char *path, size_t n)
{
    int known = 0;
    for (size_t i = 0; modular[i]; i++)
        known |= !strcmp(modular[i], name);
    if (!known)
        return -1;
    char dir[4096];
    const char *env = getenv("CXLSIM_BACKEND_DIR");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else {
        Dl_info self;
        if (!dladdr((void *)cxl_backend_module, &self) || !self.dli_fname)
            return -1;
        snprintf(dir, sizeof dir, "%s", self.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash)
            snprintf(slash, sizeof dir - (size_t)(slash - dir), "/cxlsim");
        else
            snprintf(dir, sizeof dir, "cxlsim");
    }
    snprintf(path, n, "%s/backend_%s.so", dir, name);
    return 0;
}

/* Load the module at path; on failure NULL, and why into why (n bytes) when why is not NULL. */
static const cxl_backend_ops *load(const char *name, const char *path, char *why, size_t n)
{
    /* RTLD_LOCAL: the module's copies of the host modules stay its own. Never closed: the operations it
     * returns are used by backends that outlive this call, and the loader counts references itself. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (why)
            snprintf(why, n, "%s", e ? e : path);
        return NULL;
    }
    cxlsim_module_entry entry;
    *(void **)&entry = dlsym(h, CXLSIM_MODULE_ENTRY);
    const cxl_backend_ops *ops = entry ? entry(CXLSIM_MODULE_ABI) : NULL;
    if (!ops || strcmp(ops->name, name)) {
        if (why)
            snprintf(why, n, "%s: %s", path,
                     !entry ? "no entry point " CXLSIM_MODULE_ENTRY
                     : !ops ? "built with another build of libcxlsim (module ABI differs): install both from one build"
                            : "holds another backend");
        dlclose(h);
        return NULL;
    }
    return ops;
}

const cxl_backend_ops *cxl_backend_module(const char *name)
{
    char path[4200];
    return module_path(name, path, sizeof path) ? NULL : load(name, path, NULL, 0);
}

void cxl_backend_module_why(const char *name, char *msg, size_t n)
{
    char path[4200];
    if (module_path(name, path, sizeof path))
        snprintf(msg, n, "backend '%s' has no module, or the library's own folder is unknown", name);
    else if (!load(name, path, msg, n))
        return;
    else
        snprintf(msg, n, "%s loads", path);
}
