# rtl_pgo_build.cmake - CXLSIM_RTL_PGO: the profile-guided build of the verilated kernel. Included by
# verilator.cmake inside its verilator-backend block (cxlrtl and cxlsim_vdev exist); the profiling run
# itself is the script cmake/rtl_pgo.cmake.
# Profile-guided optimisation of the verilated kernel (docs/rtl.md "Profile-guided build"; about 1.25x
# on the saturating workload): the same generated sources are compiled once more, instrumented
# (cxlrtl_pgo), into a copy of bench_model (rtl_pgo_train) that runs a few short saturating workloads
# (cmake/rtl_pgo.cmake); cxlrtl is then compiled with the counts they leave. It costs a second compile
# of the kernel (about 2 minutes on 2 cores). GCC only; not with CXLSIM_RTL_REUSE (the reused
# libraries were built by a build that did it or not). The profile changes the generated code's
# speed only: the model's results are the same with or without it (test_compare, test_verilator).
set(RTL_PGO OFF)
if(CXLSIM_RTL_PGO AND NOT CXLSIM_RTL_REUSE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(RTL_PGO ON)
  get_target_property(pgo_sources cxlrtl SOURCES)
  list(FILTER pgo_sources EXCLUDE REGEX "_tr\\.dir/")     # the traced twins are not trained
  add_library(cxlrtl_pgo STATIC ${pgo_sources})
  foreach(prop IN ITEMS INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS LINK_LIBRARIES POSITION_INDEPENDENT_CODE
                        INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES INTERFACE_LINK_LIBRARIES
                        VERILATOR_TRACE VERILATOR_TRACE_VCD VERILATOR_TRACE_FST VERILATOR_COVERAGE VERILATOR_SYSTEMC)
    get_target_property(value cxlrtl ${prop})
    if(value)
      set_property(TARGET cxlrtl_pgo PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  # -fno-profile-reorder-functions: the one count that differs from run to run (the order in which
  # functions first run) is not used, so the kernel compiles to the same code in every build
  target_compile_options(cxlrtl_pgo PRIVATE -fprofile-generate -fprofile-update=single -fno-profile-reorder-functions)
  target_link_options(cxlrtl_pgo INTERFACE -fprofile-generate)
  cxlsim_vdev(cxlvdev_pgo cxlrtl_pgo CXLSIM_RTL_NO_TRACE)
  add_library(cxlhost_pgo STATIC)
  target_link_libraries(cxlhost_pgo PUBLIC cxlhost_obj cxlcore_obj cxlvdev_pgo)
  add_executable(rtl_pgo_train ${CMAKE_SOURCE_DIR}/bench/bench_model.c)
  target_link_libraries(rtl_pgo_train PRIVATE cxlhost_pgo)
  set(pgo_stamp ${CMAKE_BINARY_DIR}/cxlrtl_profile.stamp)
  string(REPLACE ";" "," RTL_BUILDS_CSV "${RTL_BUILDS_MADE}")   # the builds to train (rtl_pgo.cmake)
  add_custom_command(OUTPUT ${pgo_stamp}
    COMMAND ${CMAKE_COMMAND} -DTRAIN=$<TARGET_FILE:rtl_pgo_train>
            -DFROM=${CMAKE_BINARY_DIR}/CMakeFiles/cxlrtl_pgo.dir -DTO=${CMAKE_BINARY_DIR}/CMakeFiles/cxlrtl.dir
            -DSTAMP=${pgo_stamp} -DBUILDS=${RTL_BUILDS_CSV} -P ${CMAKE_SOURCE_DIR}/cmake/rtl_pgo.cmake
    DEPENDS rtl_pgo_train ${CMAKE_SOURCE_DIR}/cmake/rtl_pgo.cmake
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
    COMMENT "Profiling the verilated kernel for cxlrtl's profile-guided build")
  add_custom_target(cxlrtl_profile DEPENDS ${pgo_stamp})
  add_dependencies(cxlrtl cxlrtl_profile)
  # -w: GCC warns, under no option, of "missing counts" for each of Verilator's inline helpers that
  # the training did not call in a file; the generated code is otherwise warning-free and is linted
  # as Verilog (cli_rtl_lint)
  target_compile_options(cxlrtl PRIVATE -fprofile-use -fprofile-partial-training
                         -fno-profile-reorder-functions -Wno-missing-profile -w)
endif()
