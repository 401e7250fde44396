# dependencies.cmake - the libraries the host code needs, and the optional ones that decide which backends are
# built: Verilator (and the named kernel builds of hw/rtl/builds.txt), XRT. Included first by CMakeLists.txt.
find_package(PkgConfig REQUIRED)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)      # libyaml-dev: configuration files
find_package(ZLIB REQUIRED)                                       # zlib1g-dev: .json.gz Chrome traces
find_package(Threads REQUIRED)                                    # the trace's compression thread
find_library(MATH_LIB m)

# Optional backends: detected, built only when present (the backends themselves arrive with their issues).
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)   # Verilator's CMake package and harness need C++
  if(CXLSIM_VERILATOR)
    find_package(verilator 5.0 QUIET)
  endif()
endif()
# The verilator backend needs the RTL model top (hw/rtl/cxl_model.v, with the req_space output that
# cxl_kernel.v reads) as well as Verilator.
set(RTL_MODEL_READY)
if(EXISTS ${CMAKE_SOURCE_DIR}/hw/rtl/cxl_model.v)
  file(STRINGS ${CMAKE_SOURCE_DIR}/hw/rtl/cxl_model.v RTL_MODEL_READY REGEX "output.*req_space")
endif()
# The named builds of the kernel top (hw/rtl/builds.txt) that the verilator backend compiles: each is a
# separate verilated model (minutes of compile on 2 cores); a configuration runs on the smallest compiled
# build that fits it and is refused (exit 7) where none does. `full` (4 host ports, 4 devices, 4 channels)
# is only needed by the pool-2x4 and pool-4xN presets.
set(CXLSIM_RTL_BUILDS "card-1x1;card-pool" CACHE STRING
    "verilator backend: the kernel builds to compile, a list of hw/rtl/builds.txt names (card-1x1, card-pool, full)")
file(STRINGS ${CMAKE_SOURCE_DIR}/hw/rtl/builds.txt RTL_BUILD_ROWS REGEX "^[a-z0-9]")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hw/rtl/builds.txt)
set(RTL_BUILD_NAMES)
foreach(row IN LISTS RTL_BUILD_ROWS)
  string(REGEX MATCH "^[^ \t]+" bname "${row}")
  list(APPEND RTL_BUILD_NAMES ${bname})
endforeach()
set_property(CACHE CXLSIM_RTL_BUILDS PROPERTY STRINGS ${RTL_BUILD_NAMES})
string(REPLACE ";" ", " valid_builds "${RTL_BUILD_NAMES}")
if(NOT CXLSIM_RTL_BUILDS)
  message(FATAL_ERROR "CXLSIM_RTL_BUILDS is empty: name at least one of ${valid_builds} (hw/rtl/builds.txt)")
endif()
foreach(bname IN LISTS CXLSIM_RTL_BUILDS)
  if(NOT bname IN_LIST RTL_BUILD_NAMES)
    message(FATAL_ERROR "CXLSIM_RTL_BUILDS: unknown build '${bname}'; valid: ${valid_builds} (hw/rtl/builds.txt)")
  endif()
endforeach()
if(verilator_FOUND AND RTL_MODEL_READY)
  set(CXLSIM_VERILATOR_BACKEND ON)
  message(STATUS "cxlsim: Verilator ${verilator_VERSION} found: verilator backend built (hw/rtl/cxl_kernel.v)")
elseif(verilator_FOUND)
  set(CXLSIM_VERILATOR_BACKEND OFF)
  message(STATUS "cxlsim: Verilator ${verilator_VERSION} found, but hw/rtl/cxl_model.v (with output req_space) "
                 "is not in the tree yet: verilator backend not built")
elseif(NOT CXLSIM_VERILATOR)
  set(CXLSIM_VERILATOR_BACKEND OFF)
  message(STATUS "cxlsim: CXLSIM_VERILATOR is OFF: verilator backend and RTL tests not built")
else()
  set(CXLSIM_VERILATOR_BACKEND OFF)
  message(STATUS "cxlsim: Verilator not found: verilator backend not built (apt-get install verilator)")
endif()
# Debian's xrt.pc is broken (docs/references.md "Toolchain facts"): find the header and xrt_coreutil
# directly.
find_path(XRT_INCLUDE_DIR xrt/xrt_device.h PATH_SUFFIXES xrt)
find_library(XRT_COREUTIL xrt_coreutil)
if(XRT_INCLUDE_DIR AND XRT_COREUTIL)
  set(CXLSIM_XRT_BACKEND ON)
  message(STATUS "cxlsim: XRT found (${XRT_COREUTIL}): xrt backend built")
else()
  set(CXLSIM_XRT_BACKEND OFF)
  message(STATUS "cxlsim: XRT not found: xrt backend not built (apt-get install libxrt-dev)")
endif()
