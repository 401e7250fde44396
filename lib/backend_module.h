/* backend_module.h - optional backends as shared modules that libcxlsim loads when they are installed.
 *
 * The library links with a C linker and needs neither XRT nor a C++ runtime; a backend that does (xrt:
 * libxrt_coreutil; verilator: the verilated kernel and the C++ runtime) is built as a module,
 * <libdir>/cxlsim/backend_<name>.so, which exports one function, CXLSIM_MODULE_ENTRY (and nothing of what
 * it links statically: cmake/library.cmake). libcxlsim looks for the module of a backend it does not have
 * when the backend is first asked for: in $CXLSIM_BACKEND_DIR when set, else in the cxlsim/ folder beside
 * the library itself. The module carries its own copy of the host modules it uses (no global state is
 * shared: there is none), so it must come from the same build as the library; CXLSIM_MODULE_ABI, a
 * checksum of the structs they exchange, refuses a module of another build. */
#ifndef CXLSIM_BACKEND_MODULE_H
#define CXLSIM_BACKEND_MODULE_H

#include <stdint.h>

#include "../host/cxl/backend.h"

#define CXLSIM_MODULE_ENTRY "cxlsim_backend_module_v1"
#define CXLSIM_MODULE_ABI                                                                                        \
    ((uint32_t)(sizeof(cxl_backend) * 1000003u + sizeof(cxl_params) * 1009u + sizeof(cxl_stats) * 31u +          \
                sizeof(cxl_desc) * 7u + sizeof(cxl_completion) + sizeof(cxl_backend_opts) * 3u + sizeof(cxl_backend_ops) * 101u))

/* The entry point a module exports: its backend's operations for a library of the same CXLSIM_MODULE_ABI,
 * else NULL. */
typedef const cxl_backend_ops *(*cxlsim_module_entry)(uint32_t abi);

/* The operations of backend `name` from its module, loaded on the first call; NULL when `name` has no
 * module or it is not installed, does not load or is of another build. */
const cxl_backend_ops *cxl_backend_module(const char *name);
/* Why cxl_backend_module(name) returned NULL, into msg (n bytes): the file it looked for and the loader's
 * reason ("...: cannot open shared object file: No such file or directory"). */
void cxl_backend_module_why(const char *name, char *msg, size_t n);

/* Define a module's entry point for the operations `ops` (in the module's one source file). */
#define CXLSIM_BACKEND_MODULE(ops)                                                                               \
    __attribute__((visibility("default"))) const cxl_backend_ops *cxlsim_backend_module_v1(uint32_t abi);        \
    const cxl_backend_ops *cxlsim_backend_module_v1(uint32_t abi) { return abi == CXLSIM_MODULE_ABI ? &(ops) : NULL; }

#endif
