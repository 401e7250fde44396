/* vkernel_vl.h - force-included into the verilated kernel's sources (CMake, sim/verilator): Verilator
 * prints ($display, $error texts, "%Error: ... Verilog $stop") through VL_PRINTF, which the harness
 * redirects into the handle's error message instead of stdout (vkernel.cpp). */
#ifndef CXLSIM_VKERNEL_VL_H
#define CXLSIM_VKERNEL_VL_H
#ifdef __cplusplus
extern "C" void vkernel_vl_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#else
void vkernel_vl_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
#define VL_PRINTF vkernel_vl_printf
#endif
