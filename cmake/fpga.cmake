# fpga.cmake - the FPGA hardware build targets (xclbin_<card>, xo_rtl: Vitis, Vivado) and the xclbin writer for
# XRT without a card (cxlsim-xclbin).
# ---- FPGA hardware build (issue 6) ----
# `cmake --build build --target xclbin_u250` (xclbin_u280, xclbin_u55c) builds the HLS kernel (hw/hls) into
# <build dir>/fpga/cxl_kernel.hw.<card>.xclbin with Vitis; `--target xo_rtl` packages the RTL kernel (hw/rtl)
# as <build dir>/fpga/cxl_kernel_rtl.xo with Vivado. All run hw/fpga/build.sh (hw/fpga/README.md); none is
# part of `all` or a test (v++ --link takes hours). The targets exist whether or not the tools were found at
# configure time (a shell may source Vitis's settings64.sh later): asked for without the tool, a target
# fails with build.sh's message ("skipped: v++ not found; source <Vitis>/settings64.sh", exit 3), because a
# binary the user asked for and did not get is a failure. test cli_fpga_build_dryrun (tests/cli) checks the
# commands, the error paths and the register map of package_xo.tcl without any of the tools.
find_program(VITIS_VPP v++)
find_program(VIVADO_EXE vivado)
set(FPGA_OUT ${CMAKE_BINARY_DIR}/fpga)
set(FPGA_ENV)
if(VITIS_VPP)
  list(APPEND FPGA_ENV VPP=${VITIS_VPP})
endif()
if(VIVADO_EXE)
  list(APPEND FPGA_ENV VIVADO=${VIVADO_EXE})
endif()
foreach(card IN ITEMS u250 u280 u55c)
  add_custom_target(xclbin_${card}
    COMMAND ${CMAKE_COMMAND} -E env ${FPGA_ENV}
            bash ${CMAKE_SOURCE_DIR}/hw/fpga/build.sh --platform ${card} --kernel hls --target hw --out ${FPGA_OUT}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    USES_TERMINAL
    COMMENT "v++ (Vitis): HLS kernel cxl_kernel for the Alveo ${card} -> ${FPGA_OUT}/cxl_kernel.hw.${card}.xclbin")
endforeach()
add_custom_target(xo_rtl
  COMMAND ${CMAKE_COMMAND} -E env ${FPGA_ENV}
          bash ${CMAKE_SOURCE_DIR}/hw/fpga/build.sh --kernel rtl --xo-only --out ${FPGA_OUT}
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  USES_TERMINAL
  COMMENT "Vivado package_xo: RTL kernel hw/rtl -> ${FPGA_OUT}/cxl_kernel_rtl.xo")
if(VITIS_VPP AND VIVADO_EXE)
  message(STATUS "cxlsim: FPGA hardware build: v++ and vivado found: targets xclbin_u250, xclbin_u280, "
                 "xclbin_u55c, xo_rtl (not part of all; hours each)")
elseif(VITIS_VPP)
  message(STATUS "cxlsim: FPGA hardware build: v++ found, vivado not: targets xclbin_u250/u280/u55c usable, "
                 "xo_rtl fails when asked for (source <Vivado>/settings64.sh)")
elseif(VIVADO_EXE)
  message(STATUS "cxlsim: FPGA hardware build: vivado found, v++ not: target xo_rtl usable, "
                 "xclbin_u250/u280/u55c fail when asked for (source <Vitis>/settings64.sh)")
else()
  message(STATUS "cxlsim: FPGA hardware build: v++ and vivado not found: targets xclbin_u250/u280/u55c and "
                 "xo_rtl fail with that reason when asked for (source <Vitis>/settings64.sh)")
endif()

# ---- XRT without a card (issue 6) ----
# sim/xrt writes an xclbin that describes cxl_kernel's interface (no bitstream) for XRT's no-op shim
# (XCL_EMULATION_MODE=noop, Debian's libxrt 2.13): cxlsim-xclbin OUT [--rtl] [--kernel NAME]. test_xrt runs
# the xrt backend's whole call sequence through the shim, and tests/cli/xrt.sh its errors and exit codes.
# XRT needs XILINX_XRT/lib to hold its shim library (docs/references.md "Toolchain facts");
# scripts/xrt-env.sh makes such a folder of links to Debian's libraries, here in <build>/xrt-noop for the tests.
add_library(cxlxclbin STATIC ${CMAKE_SOURCE_DIR}/sim/xrt/xclbin_write.c)
target_include_directories(cxlxclbin PUBLIC ${CMAKE_SOURCE_DIR}/sim/xrt)
add_executable(cxlsim-xclbin ${CMAKE_SOURCE_DIR}/sim/xrt/xclbin_tool.c)
target_link_libraries(cxlsim-xclbin PRIVATE cxlxclbin)
target_link_libraries(bench_xrt PRIVATE cxlxclbin)   # host cost per batch and descriptor, no-op shim
