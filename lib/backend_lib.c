/* backend_lib.c - the backend registry (host/backend.c) as libcxlsim compiles it: with the C model and the
 * analytical backend only. The `cxlsim` command's copy is compiled with CXLSIM_HAVE_VERILATOR and
 * CXLSIM_HAVE_XRT where those backends are built (source properties of host/backend.c, CMakeLists.txt);
 * this file is a different source, so the library never references the C++ or XRT backends and links
 * with a C linker alone. Asking the library for them is "not built into this library" (lib/cxlsim.c). */
#include "../host/backend.c"
