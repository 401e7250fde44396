# host.cmake - the cycle-level model (cxlhw), the embedded presets, the host library by layer (host/README.md:
# cxlcore_obj, cxlhost_obj, cxlhost), the command line (cxlcli) and the cxlsim command.
# ---- the cycle-level model (HLS C, compiled with gcc) ---------------------------------------------
file(GLOB CXLHW_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hw/hls/*.c)
add_library(cxlhw STATIC ${CXLHW_SOURCES})
# HLS pragmas and loop labels are meant for Vitis HLS; gcc would warn about both.
target_compile_options(cxlhw PRIVATE -Wno-unknown-pragmas -Wno-unused-label)
target_include_directories(cxlhw PUBLIC ${CMAKE_SOURCE_DIR}/hw/hls)

# ---- embedded presets ----------------------------------------------------------------------------
# One generated presets_<folder>.inc per configs/<folder> (host/config/presets.c includes them all), so every
# preset works from any folder and the shipped YAML stays the single source.
set(PRESET_INCS)
foreach(pair IN ITEMS devices:device models:model gpus:gpu clusters:cluster experiments:experiment)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 folder)
  list(GET pair 1 kind)
  file(GLOB folder_presets CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/configs/${folder}/*.yaml)
  set(inc ${CMAKE_BINARY_DIR}/generated/presets_${folder}.inc)
  add_custom_command(
    OUTPUT ${inc}
    COMMAND ${CMAKE_COMMAND} -DIN_DIR=${CMAKE_SOURCE_DIR}/configs/${folder} -DOUT=${inc} -DKIND=${kind}
            -DREL=configs/${folder} -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${folder_presets} ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding configs/${folder} presets")
  list(APPEND PRESET_INCS ${inc})
endforeach()

# ---- host library and program --------------------------------------------------------------------
# host/<layer>/*.c (host/README.md), all but the command line (host/cli, below)
file(GLOB CXLHOST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/host/*/*.c)
list(FILTER CXLHOST_SOURCES EXCLUDE REGEX "/host/cli/")
if(NOT CXLSIM_VERILATOR_BACKEND)
  list(REMOVE_ITEM CXLHOST_SOURCES ${CMAKE_SOURCE_DIR}/host/cxl/backend_verilator.c)
endif()
if(NOT CXLSIM_XRT_BACKEND)
  list(REMOVE_ITEM CXLHOST_SOURCES ${CMAKE_SOURCE_DIR}/host/cxl/backend_xrt.c)
endif()
# The host code compiles once and is archived as cxlhost with the backends it links; the verilator
# backend's profile-guided build archives the same objects once more with an instrumented kernel
# (cxlhost_pgo, below). cxlcore_obj is everything but the backend registry and the optional backends,
# so that libcxlsim (cmake/library.cmake) shares its objects: they are position-independent, and their
# symbols hidden (only libcxlsim's API is exported from the shared library; static links see them all).
set(CXLCORE_SOURCES ${CXLHOST_SOURCES})
# (The sweep's worker pool and its MPI ranks, sweeprun.c and sweepmpi.c, and the search's ranks, searchmpi.c,
# are the command's, not the library's: libcxlsim does not link MPI.)
list(REMOVE_ITEM CXLCORE_SOURCES ${CMAKE_SOURCE_DIR}/host/cxl/backend.c ${CMAKE_SOURCE_DIR}/host/cxl/backend_verilator.c
     ${CMAKE_SOURCE_DIR}/host/cxl/backend_xrt.c ${CMAKE_SOURCE_DIR}/host/explore/sweeprun.c ${CMAKE_SOURCE_DIR}/host/explore/sweepmpi.c
     ${CMAKE_SOURCE_DIR}/host/explore/searchmpi.c)
list(FILTER CXLHOST_SOURCES INCLUDE REGEX "/host/(cxl/backend(_verilator|_xrt)?|explore/sweeprun|explore/sweepmpi|explore/searchmpi)\\.c$")
set_target_properties(cxlhw PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
add_library(cxlcore_obj OBJECT ${CXLCORE_SOURCES} ${PRESET_INCS})
set_target_properties(cxlcore_obj PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
target_include_directories(cxlcore_obj PUBLIC ${CMAKE_SOURCE_DIR}/host PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(cxlcore_obj PUBLIC cxlhw PkgConfig::YAML ZLIB::ZLIB Threads::Threads ${MATH_LIB})
add_library(cxlhost_obj OBJECT ${CXLHOST_SOURCES})
target_link_libraries(cxlhost_obj PUBLIC cxlcore_obj)
add_library(cxlhost STATIC)
target_link_libraries(cxlhost PUBLIC cxlhost_obj cxlcore_obj)
# What the build found, so that asking for a missing backend names the right remedy. These switches and
# CXLSIM_HAVE_* (the backends built in) are read by host/cxl/backend.c alone and set on it alone, so that turning
# a backend on or off (scripts/quickstart.sh: the C model first, the verilator backend after) recompiles
# that file and the backend's own, not the whole host library.
if(verilator_FOUND)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/cxl/backend.c APPEND PROPERTY COMPILE_DEFINITIONS CXLSIM_DEP_VERILATOR)
endif()
if(XRT_INCLUDE_DIR AND XRT_COREUTIL)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/cxl/backend.c APPEND PROPERTY COMPILE_DEFINITIONS CXLSIM_DEP_XRT)
endif()
# The xrt backend: host/cxl/backend_xrt.c is the only file that includes XRT's headers. Only xrt_coreutil is
# linked (toolchain.md); XRT loads its shim library (a card's, or the no-op one) itself at run time.
if(CXLSIM_XRT_BACKEND)
  add_library(cxlsim_xrt UNKNOWN IMPORTED)
  set_target_properties(cxlsim_xrt PROPERTIES IMPORTED_LOCATION ${XRT_COREUTIL})
  set_source_files_properties(${CMAKE_SOURCE_DIR}/host/cxl/backend_xrt.c PROPERTIES COMPILE_OPTIONS "-isystem;${XRT_INCLUDE_DIR}")
  target_link_libraries(cxlhost_obj PUBLIC cxlsim_xrt)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/cxl/backend.c APPEND PROPERTY COMPILE_DEFINITIONS CXLSIM_HAVE_XRT)
endif()

# The commit the binary was built from (`cxlsim version`, every JSON output): regenerated at each build.
add_custom_target(cxlsim_commit
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/generated/commit.h
          -P ${CMAKE_SOURCE_DIR}/cmake/commit.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/commit.h
  COMMENT "cxlsim: recording the git commit")
# The command line (host/cli/: commands, their option tables and reports) over the host library; its
# main.c alone includes commit.h, so a new commit recompiles one file.
file(GLOB CXLCLI_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/host/cli/*.c)
list(REMOVE_ITEM CXLCLI_SOURCES ${CMAKE_SOURCE_DIR}/host/cli/main.c)
add_library(cxlcli STATIC ${CXLCLI_SOURCES})
target_include_directories(cxlcli PUBLIC ${CMAKE_SOURCE_DIR}/host)
target_link_libraries(cxlcli PUBLIC cxlhost)
add_executable(cxlsim host/cli/main.c)
add_dependencies(cxlsim cxlsim_commit)
target_include_directories(cxlsim PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_compile_definitions(cxlsim PRIVATE CXLSIM_VERSION="${PROJECT_VERSION}")
target_link_libraries(cxlsim PRIVATE cxlcli)
