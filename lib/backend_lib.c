/* backend_lib.c - the backend registry (host/cxl/backend.c) as libcxlsim compiles it: the C model and the
 * analytical backend built in, the others loaded from their modules where installed (CXLSIM_BACKEND_MODULES,
 * backend_module.h). The `cxlsim` command's copy is compiled with CXLSIM_HAVE_VERILATOR and CXLSIM_HAVE_XRT
 * where those backends are built (source properties of host/cxl/backend.c, cmake/host.cmake); this file is a
 * different source, so the library never references the C++ or XRT backends and links with a C linker
 * alone. A backend it can neither find nor load is "not built into this library" (lib/cxlsim.c). */
#include "../host/cxl/backend.c"
