/* module_xrt.c - the xrt backend (host/cxl/backend_xrt.c) as a module libcxlsim loads (backend_module.h):
 * <libdir>/cxlsim/backend_xrt.so, linked with XRT's xrt_coreutil, so that the library itself needs no XRT. */
#include "../host/cxl/backend_xrt.c"
#include "backend_module.h"

CXLSIM_BACKEND_MODULE(cxl_backend_xrt_ops)
