# mpi.cmake - CXLSIM_MPI: `cxlsim sweep` and `cxlsim search` under mpirun/srun (docs/scale-out.md). Included after
# host.cmake.
# MPI (docs/scale-out.md): host/explore/sweepmpi.c alone includes mpi.h and alone is compiled with CXLSIM_HAVE_MPI
# (the search's ranks, searchmpi.c, call its functions), so switching it recompiles that file only; without MPI the
# local worker pools still work.
if(NOT CXLSIM_MPI MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "CXLSIM_MPI is '${CXLSIM_MPI}'; valid: AUTO, ON, OFF")
endif()
set(CXLSIM_MPI_FOUND OFF)
if(NOT CXLSIM_MPI STREQUAL "OFF")
  if(CXLSIM_MPI STREQUAL "ON")
    find_package(MPI COMPONENTS C REQUIRED)
  else()
    find_package(MPI COMPONENTS C QUIET)
  endif()
  if(MPI_C_FOUND)
    set(CXLSIM_MPI_FOUND ON)
    message(STATUS "cxlsim: MPI ${MPI_C_VERSION} found: sweeps and searches spread over MPI ranks under mpirun or srun")
  else()
    message(STATUS "cxlsim: MPI not found: sweeps and searches run on one machine (apt-get install libopenmpi-dev openmpi-bin)")
  endif()
else()
  message(STATUS "cxlsim: CXLSIM_MPI is OFF: sweeps and searches run on one machine")
endif()

# the sweep's MPI ranks (host/explore/sweepmpi.c) in the command's part of the host library
if(CXLSIM_MPI_FOUND)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/explore/sweepmpi.c APPEND PROPERTY COMPILE_DEFINITIONS CXLSIM_HAVE_MPI)
  target_link_libraries(cxlhost_obj PUBLIC MPI::MPI_C)
endif()
