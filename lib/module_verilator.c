/* module_verilator.c - the verilator backend (host/cxl/backend_verilator.c) as a module libcxlsim loads
 * (backend_module.h): <libdir>/cxlsim/backend_verilator.so, linked with the verilated kernel builds the
 * cxlsim command has (sim/verilator, cmake/verilator.cmake) and the C++ runtime, so that the library itself
 * links with a C linker. */
#include "../host/cxl/backend_verilator.c"
#include "backend_module.h"

CXLSIM_BACKEND_MODULE(cxl_backend_verilator_ops)
