# verilator.cmake - the RTL through Verilator: the verilated-library helpers (and CXLSIM_RTL_REUSE), the unit
# models of the RTL equivalence tests (tests/rtl), gen_layout and cxl_layout.vh, and the verilator backend's
# kernel builds, harness and profile-guided build (rtl_pgo_build.cmake).
# ---- RTL (Verilator) ----
# hw/rtl checked against hw/hls one unit at a time: each tests/rtl/unit/test_<module>.cpp drives the
# verilated hw/rtl/<module>.v and the C functions of the same concept (cxlhw) with the same random
# stimulus and stops at the first differing output (tests/rtl/README.md). Verilator is optional (detected
# above); without it these targets are skipped and tests/cli/rtl_lint.sh reports itself skipped.
# Verilated sources (the model and Verilator's runtime) build in their own static library without our
# -Wall -Wextra -Werror (generated code is not ours to keep warning-free) and without the sanitizers:
# CXLSIM_SANITIZE instruments the RTL harnesses and the C model they are compared with.
# Verilator warnings do not stop the build (-Wno-fatal): cli_rtl_lint fails on them instead, so one
# module's lint warning is one failing test, not a tree that no longer configures.
# The verilated libraries are the same in every build of a tree (no sanitizers, no debug information),
# so a second build can take them from a first one instead of verilating and compiling them again:
# -DCXLSIM_RTL_REUSE=<build folder of this tree, already built>. CI's sanitized pass does this (.ci/run);
# the reused libraries are not rebuilt when hw/rtl changes, so it is for such scripted passes only.
set(CXLSIM_RTL_REUSE "" CACHE PATH "Build folder of this tree whose verilated libraries to reuse (CI's second pass)")
if(verilator_FOUND)
  get_directory_property(RTL_VERILATED_OPTIONS COMPILE_OPTIONS)
  # Generated code is built without our warnings, without the sanitizers (they instrument our harness
  # and the C model; instrumenting tens of thousands of generated lines multiplies the compile time on
  # CI's two cores) and without debug information.
  list(REMOVE_ITEM RTL_VERILATED_OPTIONS -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all)
  list(APPEND RTL_VERILATED_OPTIONS -g0)
endif()
# cxlsim_verilated(TARGET PREFIX verilate() arguments... [COMPILE_OPTIONS ..., last]): a static library of the
# verilated design whose headers its users see as system headers (Verilator's are not -Wextra clean).
function(cxlsim_verilated target prefix)
  cmake_parse_arguments(CV "" "" "COMPILE_OPTIONS" ${ARGN})
  if(CXLSIM_RTL_REUSE)
    set(lib ${CXLSIM_RTL_REUSE}/lib${target}.a)
    set(gen ${CXLSIM_RTL_REUSE}/CMakeFiles/${target}.dir/${prefix}.dir)
    if(NOT EXISTS ${lib} OR NOT EXISTS ${gen}/${prefix}.h)
      message(FATAL_ERROR "CXLSIM_RTL_REUSE=${CXLSIM_RTL_REUSE}: ${lib} or ${gen}/${prefix}.h is missing "
                          "(build that folder first, or leave CXLSIM_RTL_REUSE empty)")
    endif()
    add_library(${target} STATIC IMPORTED GLOBAL)
    set(incs ${gen} ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${lib} INTERFACE_INCLUDE_DIRECTORIES "${incs}"
                          INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${incs}" INTERFACE_LINK_LIBRARIES "${VERILATOR_MT_CFLAGS}")
  else()
    add_library(${target} STATIC)
    set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS ${RTL_VERILATED_OPTIONS} ${CV_COMPILE_OPTIONS})
    verilate(${target} PREFIX ${prefix} ${CV_UNPARSED_ARGUMENTS})
    get_target_property(incs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    set_property(TARGET ${target} PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${incs})
  endif()
endfunction()
# cxlsim_verilated_also(TARGET PREFIX verilate() arguments...): one more verilated model (another PREFIX) in
# the library that cxlsim_verilated made, sharing its Verilator runtime and compile options.
function(cxlsim_verilated_also target prefix)
  if(CXLSIM_RTL_REUSE)
    set(gen ${CXLSIM_RTL_REUSE}/CMakeFiles/${target}.dir/${prefix}.dir)
    if(NOT EXISTS ${gen}/${prefix}.h)
      message(FATAL_ERROR "CXLSIM_RTL_REUSE=${CXLSIM_RTL_REUSE}: ${gen}/${prefix}.h is missing "
                          "(build that folder first, or leave CXLSIM_RTL_REUSE empty)")
    endif()
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${gen})
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${gen})
  else()
    verilate(${target} PREFIX ${prefix} ${ARGN})
    get_target_property(incs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    set_property(TARGET ${target} PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${incs})
  endif()
endfunction()
if(NOT CXLSIM_VERILATOR)
  message(STATUS "cxlsim: CXLSIM_VERILATOR is OFF: RTL unit equivalence tests not built")
elseif(NOT verilator_FOUND)
  message(STATUS "cxlsim: Verilator not found: RTL unit equivalence tests not built (apt-get install verilator)")
elseif(CXLSIM_TESTS)
  file(GLOB RTL_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/rtl/unit/test_*.cpp)
  # every unit model in one library, rtl_Vunits (a PREFIX V<module> each), so that Verilator's runtime
  # compiles once for all of them instead of once per module (about 15 CPU seconds each on 2 cores)
  set(RTL_UNITS_MADE OFF)
  foreach(src IN LISTS RTL_UNIT_TESTS)
    get_filename_component(name ${src} NAME_WE)
    string(REGEX REPLACE "^test_" "" module ${name})
    set(uargs TOP_MODULE ${module} SOURCES ${CMAKE_SOURCE_DIR}/hw/rtl/${module}.v
              VERILATOR_ARGS -I${CMAKE_SOURCE_DIR}/hw/rtl -Wno-fatal --x-assign unique --x-initial unique
              OPT_FAST -O2 OPT_SLOW -O1 OPT_GLOBAL -O1)
    if(NOT RTL_UNITS_MADE)
      cxlsim_verilated(rtl_Vunits V${module} ${uargs})
      set(RTL_UNITS_MADE ON)
    else()
      cxlsim_verilated_also(rtl_Vunits V${module} ${uargs})
    endif()
  endforeach()   # their harnesses and tests: tests/rtl/CMakeLists.txt
  message(STATUS "cxlsim: RTL unit equivalence tests: ${RTL_UNIT_TESTS}")
  # The whole model (hw/rtl/cxl_model.v) against hw/hls/cxl_model.c, model cycle for model cycle, on the
  # shipped device presets (docs/rtl.md). Off by default: the verilated whole model takes about 20 CPU
  # minutes to compile; CI checks the whole model through the verilator backend (test_compare).
  option(CXLSIM_RTL_MODEL_TEST "Build and run the whole-model RTL equivalence test (slow to compile)" OFF)
  if(CXLSIM_RTL_MODEL_TEST)
    cxlsim_verilated(rtl_Vcxl_model Vcxl_model TOP_MODULE cxl_model
                     SOURCES ${CMAKE_SOURCE_DIR}/hw/rtl/cxl_model.v
                     VERILATOR_ARGS -I${CMAKE_SOURCE_DIR}/hw/rtl -Wno-fatal --x-assign unique --x-initial unique
                     OPT_FAST -O2 OPT_SLOW -O1 OPT_GLOBAL -O1)
  endif()
endif()

# ---- the verilator backend: hw/rtl/cxl_kernel.v, verilated, behind sim/verilator ----
# hw/rtl/cxl_layout.vh (the byte layout of the C structs the RTL reads and writes) is generated from
# hw/hls by sim/verilator/gen_layout and committed; target cxl_layout_vh rewrites it, test rtl_layout fails
# while it is stale. Neither needs Verilator.
add_executable(gen_layout ${CMAKE_SOURCE_DIR}/sim/verilator/gen_layout.c)
target_include_directories(gen_layout PRIVATE ${CMAKE_SOURCE_DIR}/hw/hls)
add_custom_target(cxl_layout_vh
  COMMAND gen_layout --write ${CMAKE_SOURCE_DIR}/hw/rtl/cxl_layout.vh
  COMMENT "Regenerating hw/rtl/cxl_layout.vh from hw/hls")
# The kernel top with every hw/rtl module verilates into cxlrtl (generated code and Verilator's runtime,
# built like the unit models: no warnings, no sanitizers, no debug information). Verilator's prints are
# routed into the harness (sim/verilator/vkernel_vl.h, force-included). The harness vkernel.cpp (our
# warning flags) and the C side (AXI4-Lite driver, AXI memory, the simulated card) build in cxlvdev,
# which cxlhost links for host/cxl/backend_verilator.c. -O2 on the generated code keeps the 2-core build short.
if(CXLSIM_VERILATOR_BACKEND)
  file(GLOB RTL_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hw/rtl/*.v)
  set(RTL_VL_INCLUDE -include ${CMAKE_SOURCE_DIR}/sim/verilator/vkernel_vl.h)
  set(RTL_GATES_ARG)
  if(CXLSIM_RTL_CLOCK_GATES)
    set(RTL_GATES_ARG -DCXL_CLOCK_GATES -DCXL_SIM_FLAT_RINGS -DCXL_SIM_INDEXED_SELECT)
  endif()
  # One verilated top per named build that CXLSIM_RTL_BUILDS selects (hw/rtl/builds.txt: cxl_kernel's
  # parameters per build), each with its own PREFIX in the one library cxlrtl; generated/rtl_builds.h
  # lists them, in builds.txt's order (smallest first), for the harness (sim/verilator/vkernel.cpp).
  # With CXLSIM_RTL_TRACE, each build also has a traced twin (PREFIX ..._tr, Verilator --trace-fst, the
  # generated code at -O1: it runs only for a waveform, so its compile time matters more than its speed),
  # which the harness runs when a trace is asked for: the untraced build pays nothing for tracing.
  set(RTL_BUILD_LIST)      # X(ident, "name", NH, ND, NCH, NB, NQ, SW) entries
  set(RTL_TRACE_LIST)      # X(ident, "name") entries: the builds with a traced twin
  set(RTL_TRACE_INCLUDES)
  set(RTL_BUILD_INCLUDES)
  set(RTL_BUILDS_MADE)
  foreach(row IN LISTS RTL_BUILD_ROWS)
    string(REGEX REPLACE "[ \t]+" ";" row "${row}")
    list(GET row 0 bname)
    list(FIND CXLSIM_RTL_BUILDS ${bname} wanted)
    if(wanted LESS 0)
      continue()
    endif()
    list(GET row 1 bnh)
    list(GET row 2 bnd)
    list(GET row 3 bnch)
    list(GET row 4 bnb)
    list(GET row 5 bnq)
    list(GET row 6 bsw)
    string(MAKE_C_IDENTIFIER ${bname} bid)
    set(vargs VERILATOR_ARGS -I${CMAKE_SOURCE_DIR}/hw/rtl -Wno-fatal -Wno-lint -Wno-style
                             --x-assign fast --x-initial fast ${RTL_GATES_ARG}
                             -GNH=${bnh} -GND=${bnd} -GNCH=${bnch} -GNB=${bnb} -GNQ=${bnq} -GSW=${bsw})
    set(bargs TOP_MODULE cxl_kernel SOURCES ${RTL_SOURCES} ${vargs} OPT_FAST -O3 OPT_SLOW -O1 OPT_GLOBAL -O1)
    if(NOT RTL_BUILDS_MADE)
      cxlsim_verilated(cxlrtl Vcxl_kernel_${bid} ${bargs} COMPILE_OPTIONS ${RTL_VL_INCLUDE})
    else()
      cxlsim_verilated_also(cxlrtl Vcxl_kernel_${bid} ${bargs})
    endif()
    if(CXLSIM_RTL_TRACE)
      cxlsim_verilated_also(cxlrtl Vcxl_kernel_${bid}_tr TOP_MODULE cxl_kernel TRACE_FST SOURCES ${RTL_SOURCES}
                            ${vargs} OPT_FAST -O1 OPT_SLOW -O1 OPT_GLOBAL -O1)
      string(APPEND RTL_TRACE_INCLUDES "#include \"Vcxl_kernel_${bid}_tr.h\"\n#include \"Vcxl_kernel_${bid}_tr___024root.h\"\n")
      string(APPEND RTL_TRACE_LIST " X(${bid}, \"${bname}\")")
    endif()
    list(APPEND RTL_BUILDS_MADE ${bname})
    string(APPEND RTL_BUILD_INCLUDES "#include \"Vcxl_kernel_${bid}.h\"\n#include \"Vcxl_kernel_${bid}___024root.h\"\n")
    string(APPEND RTL_BUILD_LIST " X(${bid}, \"${bname}\", ${bnh}, ${bnd}, ${bnch}, ${bnb}, ${bnq}, ${bsw})")
  endforeach()
  # Position-independent, so that libcxlsim's verilator module (cmake/library.cmake) links the same archive
  # as the cxlsim command: one compile of the kernel for both. -fno-semantic-interposition lets GCC inline
  # and call directly within the generated code as it does without -fPIC (nothing interposes: the module
  # hides every archive symbol, --exclude-libs), and the linker turns the runtime's thread-local accesses
  # back into the executable's form: bench_model asic --backend verilator runs the same instructions either
  # way (docs/library.md, "Backends").
  if(NOT CXLSIM_RTL_REUSE)
    set_target_properties(cxlrtl PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(cxlrtl PRIVATE -fno-semantic-interposition)
  endif()
  string(REPLACE ";" ", " RTL_BUILD_NAMES_TEXT "${RTL_BUILDS_MADE}")
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/rtl_builds.h CONTENT
"/* rtl_builds.h - generated by cmake/verilator.cmake from hw/rtl/builds.txt and CXLSIM_RTL_BUILDS: the verilated
 * builds of cxl_kernel compiled in, smallest first (sim/verilator/vkernel.cpp). */
${RTL_BUILD_INCLUDES}#define CXLSIM_RTL_BUILD_LIST(X)${RTL_BUILD_LIST}
#define CXLSIM_RTL_BUILD_NAMES \"${RTL_BUILD_NAMES_TEXT}\"
/* the builds with a traced twin (Vcxl_kernel_<ident>_tr), unless the harness is compiled without them */
#if !defined(CXLSIM_RTL_NO_TRACE)
${RTL_TRACE_INCLUDES}#define CXLSIM_RTL_TRACE_LIST(X)${RTL_TRACE_LIST}
#else
#define CXLSIM_RTL_TRACE_LIST(X)
#endif
" @ONLY)
  # cxlsim_vdev(TARGET RTL): the harness and the C side over the verilated library RTL
  function(cxlsim_vdev target rtl)
    add_library(${target} STATIC ${CMAKE_SOURCE_DIR}/sim/verilator/vkernel.cpp ${CMAKE_SOURCE_DIR}/sim/verilator/vdev.c
                ${CMAKE_SOURCE_DIR}/sim/verilator/axi_lite.c ${CMAKE_SOURCE_DIR}/sim/verilator/axi_mem.c)
    set_target_properties(${target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
                          POSITION_INDEPENDENT_CODE ON)   # as cxlrtl: the command's and the module's
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
    # the harness sees the model as the verilated sources do: same trace switch, same VL_PRINTF; the
    # profile-training harness (cxlvdev_pgo) links no traced twins
    target_compile_definitions(${target} PRIVATE VM_TRACE=$<BOOL:${CXLSIM_RTL_TRACE}>
                               VM_TRACE_FST=$<BOOL:${CXLSIM_RTL_TRACE}> ${ARGN})
    target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/sim/verilator
                               PRIVATE ${CMAKE_BINARY_DIR}/generated)   # rtl_builds.h
    target_link_libraries(${target} PUBLIC ${rtl})
  endfunction()
  set_source_files_properties(${CMAKE_SOURCE_DIR}/sim/verilator/vkernel.cpp PROPERTIES COMPILE_OPTIONS
                              "${RTL_VL_INCLUDE}")
  cxlsim_vdev(cxlvdev cxlrtl)
  target_link_libraries(cxlhost PUBLIC cxlvdev)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/cxl/backend.c APPEND PROPERTY COMPILE_DEFINITIONS CXLSIM_HAVE_VERILATOR)
  include(${CMAKE_SOURCE_DIR}/cmake/rtl_pgo_build.cmake)
  message(STATUS "cxlsim: verilator backend: kernel builds ${RTL_BUILD_NAMES_TEXT} (CXLSIM_RTL_BUILDS), "
                 "FST tracing ${CXLSIM_RTL_TRACE} (CXLSIM_RTL_TRACE), "
                 "gated clocks ${CXLSIM_RTL_CLOCK_GATES} (CXLSIM_RTL_CLOCK_GATES), "
                 "profile-guided ${RTL_PGO} (CXLSIM_RTL_PGO; GCC, not with CXLSIM_RTL_REUSE)")
endif()
