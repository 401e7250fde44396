# yosys.cmake - the RTL synthesis estimate targets (rtl_synth, rtl_synth_<build>): Yosys, where installed.
# ---- RTL synthesis estimate (Yosys) ----
# `cmake --build build --target rtl_synth` runs scripts/rtl_synth.sh: Yosys synth_xilinx for UltraScale+
# on the top level cxl_kernel (default preset) and prints LUT, FF, BRAM, URAM and DSP counts with their
# share of an Alveo U250 / U280 / U55C (docs/rtl-synthesis.md). Only where yosys is installed; not part
# of `all` and not a test. Hierarchical (each module once per parameter set), without Yosys's `share`
# pass, one Yosys process per module (RTL_SYNTH_SPLIT=1: the memory of the largest module, not of the
# whole design); RTL_SYNTH_JOBS=N in the environment runs N modules at a time (docs/rtl-synthesis.md).
# LUT mapping with `abc -fast` by default (-DCXLSIM_RTL_SYNTH_ABC=full for synth_xilinx's own: hours more
# on the DRAM channel and the 16-source links). Module netlists are cached: a rerun after an RTL change
# synthesises only the modules that changed. Output: <build dir>/rtl_synth/.
set(CXLSIM_RTL_SYNTH_ABC "fast" CACHE STRING "LUT mapping of the rtl_synth target: fast (abc -fast) or full")
set_property(CACHE CXLSIM_RTL_SYNTH_ABC PROPERTY STRINGS fast full)
find_program(YOSYS yosys)
if(YOSYS)
  add_custom_target(rtl_synth
    COMMAND ${CMAKE_COMMAND} -E env YOSYS=${YOSYS} RTL_SYNTH_FLATTEN=0 RTL_SYNTH_NOSHARE=1 RTL_SYNTH_SPLIT=1
            RTL_SYNTH_ABC=${CXLSIM_RTL_SYNTH_ABC}
            bash ${CMAKE_SOURCE_DIR}/scripts/rtl_synth.sh cxl_kernel ${CMAKE_BINARY_DIR}/rtl_synth
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    USES_TERMINAL
    COMMENT "Yosys synth_xilinx (xcup) resource estimate of hw/rtl cxl_kernel")
  # rtl_synth_<build> (rtl_synth_card_1x1, rtl_synth_card_pool, rtl_synth_full): the same for a named
  # build of the top (hw/rtl/builds.txt's parameters, RTL_SYNTH_BUILD), into <build dir>/rtl_synth/<build>/
  foreach(bname IN LISTS RTL_BUILD_NAMES)
    string(MAKE_C_IDENTIFIER ${bname} bid)
    add_custom_target(rtl_synth_${bid}
      COMMAND ${CMAKE_COMMAND} -E env YOSYS=${YOSYS} RTL_SYNTH_FLATTEN=0 RTL_SYNTH_NOSHARE=1 RTL_SYNTH_SPLIT=1
              RTL_SYNTH_ABC=${CXLSIM_RTL_SYNTH_ABC} RTL_SYNTH_BUILD=${bname}
              bash ${CMAKE_SOURCE_DIR}/scripts/rtl_synth.sh cxl_kernel ${CMAKE_BINARY_DIR}/rtl_synth/${bname}
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
      USES_TERMINAL
      COMMENT "Yosys synth_xilinx (xcup) resource estimate of hw/rtl cxl_kernel, build ${bname}")
  endforeach()
else()
  message(STATUS "cxlsim: yosys not found: no rtl_synth target (apt-get install yosys)")
endif()
