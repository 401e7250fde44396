# bench.cmake - one program per bench/*.c, each printing figures (never a test).
file(GLOB BENCH_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bench/*.c)
foreach(src IN LISTS BENCH_SOURCES)
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE cxlhost)
  target_compile_definitions(${name} PRIVATE CXLSIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
endforeach()
