# library.cmake - libcxlsim (include/cxlsim/cxlsim.h), the NCCL delay plugin, and what `cmake --install`
# installs (docs/library.md). Included from CMakeLists.txt after the host library is defined; its tests are
# tests/CMakeLists.txt's (tests/lib, cli_install, python_bindings).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The library's own code: the public API (lib/cxlsim.c) and the backend registry with the C model and the
# analytical backend only (lib/backend_lib.c). The host modules come from cxlcore_obj and the cycle model
# from cxlhw, both compiled position-independent with hidden symbols; only CXLSIM_API functions export.
add_library(cxlsim_api_obj OBJECT ${CMAKE_SOURCE_DIR}/lib/cxlsim.c ${CMAKE_SOURCE_DIR}/lib/backend_lib.c
            ${CMAKE_SOURCE_DIR}/lib/backend_module.c)
set_target_properties(cxlsim_api_obj PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
target_compile_definitions(cxlsim_api_obj PRIVATE CXLSIM_BUILDING_LIBRARY CXLSIM_VERSION="${PROJECT_VERSION}"
                           CXLSIM_BACKEND_MODULES)
target_include_directories(cxlsim_api_obj PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>)
target_link_libraries(cxlsim_api_obj PRIVATE cxlcore_obj)
set(CXLSIM_LIB_OBJECTS $<TARGET_OBJECTS:cxlsim_api_obj> $<TARGET_OBJECTS:cxlcore_obj> $<TARGET_OBJECTS:cxlhw>)

add_library(cxlsim_shared SHARED ${CXLSIM_LIB_OBJECTS})
add_library(cxlsim_static STATIC ${CXLSIM_LIB_OBJECTS})
foreach(t IN ITEMS cxlsim_shared cxlsim_static)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME cxlsim LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                        ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  target_include_directories(${t} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(cxlsim_shared PROPERTIES VERSION 2.0.0 SOVERSION 2 EXPORT_NAME cxlsim)
# -z defs: every symbol the library uses is resolved at its own link (no undefined references left to
# the program that loads it); not under the sanitizers, whose runtime the program brings
if(NOT CXLSIM_SANITIZE)
  target_link_options(cxlsim_shared PRIVATE LINKER:-z,defs)
endif()
target_link_libraries(cxlsim_shared PRIVATE PkgConfig::YAML ZLIB::ZLIB Threads::Threads ${MATH_LIB} ${CMAKE_DL_LIBS})
target_link_libraries(cxlsim_static INTERFACE $<BUILD_INTERFACE:PkgConfig::YAML> $<BUILD_INTERFACE:ZLIB::ZLIB>
                      $<BUILD_INTERFACE:Threads::Threads> ${MATH_LIB} ${CMAKE_DL_LIBS})

# Optional backends as modules the library loads when asked for them (lib/backend_module.h):
# <libdir>/cxlsim/backend_<name>.so, each one C source over the backend's own (lib/module_<name>.c) that
# takes the host modules it needs from the static library. The module, not the library, links what the
# backend needs (a C++ runtime, XRT), so a program links libcxlsim with a C linker alone. --exclude-libs:
# of everything the module takes from static archives (the host modules, the verilated kernel and
# Verilator's runtime) it exports nothing, so a program's own copies never stand in for them; only the
# entry point is visible.
# cxlsim_backend_module(NAME LIBRARIES...): the module backend_NAME.so from lib/module_NAME.c
function(cxlsim_backend_module name)
  set(t cxlsim_backend_${name})
  add_library(${t} MODULE ${CMAKE_SOURCE_DIR}/lib/module_${name}.c)
  set_target_properties(${t} PROPERTIES PREFIX "" OUTPUT_NAME backend_${name} C_VISIBILITY_PRESET hidden
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/cxlsim)
  target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/host)
  target_link_libraries(${t} PRIVATE cxlsim_static ${ARGN})
  target_link_options(${t} PRIVATE LINKER:--exclude-libs,ALL)
  if(NOT CXLSIM_SANITIZE)
    target_link_options(${t} PRIVATE LINKER:-z,defs)
  endif()
  add_dependencies(cxlsim_shared ${t})   # a library built is a library with its modules
  install(TARGETS ${t} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cxlsim)
endfunction()
# the xrt backend where XRT was found: linked with XRT's xrt_coreutil
if(CXLSIM_XRT_BACKEND)
  cxlsim_backend_module(xrt cxlsim_xrt)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/lib/module_xrt.c PROPERTIES COMPILE_OPTIONS "-isystem;${XRT_INCLUDE_DIR}")
endif()
# the verilator backend where Verilator was found: the kernel builds the command has (cxlvdev over cxlrtl,
# cmake/verilator.cmake, compiled position-independent for this), linked with the C++ runtime
if(CXLSIM_VERILATOR_BACKEND)
  cxlsim_backend_module(verilator cxlvdev)
endif()

# The NCCL delay plugin (include/cxlsim/cxlsim_nccl.h): a small shared object over the public API, and
# the replay harness for recorded collectives.
add_library(cxlsim_nccl SHARED ${CMAKE_SOURCE_DIR}/lib/cxlsim_nccl.c)
set_target_properties(cxlsim_nccl PROPERTIES C_VISIBILITY_PRESET hidden VERSION 2.0.0 SOVERSION 2
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib EXPORT_NAME nccl)
target_compile_definitions(cxlsim_nccl PRIVATE CXLSIM_BUILDING_LIBRARY)
if(NOT CXLSIM_SANITIZE)
  target_link_options(cxlsim_nccl PRIVATE LINKER:-z,defs)
endif()
target_link_libraries(cxlsim_nccl PUBLIC cxlsim_shared)
add_executable(cxlsim-nccl-replay ${CMAKE_SOURCE_DIR}/lib/cxlsim_nccl_replay.c)
target_link_libraries(cxlsim-nccl-replay PRIVATE cxlsim_nccl)

# ---- install ----
install(TARGETS cxlsim cxlsim-nccl-replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS cxlsim_shared cxlsim_nccl EXPORT cxlsimTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS cxlsim_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/cxlsim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cxlsimTargets NAMESPACE cxlsim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cxlsim)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cxlsimConfig.cmake.in
  ${CMAKE_BINARY_DIR}/generated/cxlsimConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cxlsim)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/cxlsimConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/cxlsimConfig.cmake ${CMAKE_BINARY_DIR}/generated/cxlsimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cxlsim)
# relocatable: the prefix is found from the .pc file's own folder, so `cmake --install --prefix P` works
file(RELATIVE_PATH CXLSIM_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/cxlsim.pc.in ${CMAKE_BINARY_DIR}/generated/cxlsim.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/cxlsim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# the shipped configurations (the command embeds them too; files are for reading and `extends: FILE`)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cxlsim/configs)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/cxlsim DESTINATION ${CMAKE_INSTALL_DATADIR}/cxlsim/python
        PATTERN __pycache__ EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/scripts/cxlsim-completion.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME cxlsim)
# man page: generated from `cxlsim help` and `cxlsim version` where help2man is installed
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man ${CMAKE_BINARY_DIR}/man/cxlsim.1)
  add_custom_command(OUTPUT ${man}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --help-option=help --version-option=version
            --name "simulator of distributed LLM training on clusters with CXL-attached memory"
            --output ${man} $<TARGET_FILE:cxlsim>
    DEPENDS cxlsim
    COMMENT "help2man: cxlsim.1")
  add_custom_target(cxlsim_man ALL DEPENDS ${man})
  install(FILES ${man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "cxlsim: help2man not found: no man page installed (apt-get install help2man)")
endif()
