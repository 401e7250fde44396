# rtl_pgo.cmake - the training step of the verilated kernel's profile-guided build (cmake/rtl_pgo_build.cmake,
# CXLSIM_RTL_PGO; docs/rtl.md "Profile-guided build").
#
#   cmake -DTRAIN=<rtl_pgo_train> -DFROM=<CMakeFiles/cxlrtl_pgo.dir> -DTO=<CMakeFiles/cxlrtl.dir>
#         -DSTAMP=<file> -DBUILDS=<build>[,<build>...] -P rtl_pgo.cmake
#
# TRAIN is bench_model linked with the instrumented kernel (cxlrtl_pgo). BUILDS names the kernel builds
# compiled in (hw/rtl/builds.txt, CXLSIM_RTL_BUILDS). For each, TRAIN runs short saturating workloads on
# presets that run on that build (the smallest compiled build that fits a preset is the one it runs on,
# so only the builds compiled in are trained, each on its own presets), which between them use every
# kind of unit (the switch, reads and writes, random and sequential addresses); GCC writes the
# counts beside each instrumented object (FROM/<object>.gcda); the old ones are removed before the
# runs, as the instrumented program adds to the files it finds. They are copied to the same place under
# TO (whose old counts go first), where GCC's -fprofile-use finds them when it compiles cxlrtl's object
# from the same source. The runs are deterministic: their counts, and so the compiled kernel, are the
# same in every build (but for the order in which functions first ran, which the build does not use:
# -fno-profile-reorder-functions in cmake/rtl_pgo_build.cmake). A run that fails leaves no profile (a warning;
# the kernel is compiled without one): the model's tests, not the build, report what is wrong.
foreach(var IN ITEMS TRAIN FROM TO STAMP BUILDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "rtl_pgo.cmake: -D${var} is required (usage: the top of this file)")
  endif()
endforeach()

# remove_counts(DIR): every .gcda file under DIR
function(remove_counts dir)
  file(GLOB_RECURSE files "${dir}/*.gcda")
  if(files)
    file(REMOVE ${files})
  endif()
endfunction()

remove_counts("${FROM}")

# per build: device preset, then bench_model's options (each preset fits its build and no smaller one:
# hw/rtl/builds.txt's preset column)
set(runs_card-1x1
  "asic --cycles 20000"                                  # the saturating read workload
  "local-ddr5 --mix 1:1 --pattern seq --cycles 20000"    # writes, row hits, the local path
  "cz120 --cycles 10000")                                # four DRAM channels
set(runs_card-pool
  "asic-switch --mix 2:1 --cycles 10000"                 # the switch
  "pool-2x2 --mix 2:1 --cycles 10000")                   # two hosts, two devices
set(runs_full
  "pool-4x4 --mix 2:1 --cycles 10000")                   # four hosts, four devices
string(REPLACE "," ";" builds "${BUILDS}")
set(runs)
foreach(b IN LISTS builds)
  if(NOT DEFINED runs_${b})
    message(FATAL_ERROR "rtl_pgo.cmake: no training runs for kernel build '${b}' (add runs_${b})")
  endif()
  list(APPEND runs ${runs_${b}})
endforeach()
foreach(run IN LISTS runs)
  separate_arguments(args UNIX_COMMAND "${run}")
  execute_process(COMMAND "${TRAIN}" ${args} --backend verilator --no-csim
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    set(failed "training run '${run}' failed (exit ${rc}):\n${out}")
    break()
  endif()
endforeach()

remove_counts("${TO}")
file(GLOB_RECURSE counts RELATIVE "${FROM}" "${FROM}/*.gcda")
# only the generated model's own files (verilate()'s <prefix>.dir folders): Verilator's runtime
# (verilated.cpp, its thread pool) is not on the hot path, and its counts need not repeat
list(FILTER counts INCLUDE REGEX "\\.dir/V[^/]+\\.dir/[^/]+\\.gcda$")
if(NOT failed AND NOT counts)
  set(failed "the training runs left no counts under ${FROM}")
endif()
if(failed)
  # a model that fails here fails its tests too, which say more: build it without a profile
  message(WARNING "rtl_pgo.cmake: ${failed}\nThe verilated kernel is compiled without a profile.")
  file(TOUCH "${STAMP}")
  return()
endif()
list(LENGTH counts n)
foreach(f IN LISTS counts)
  get_filename_component(dir "${TO}/${f}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  file(COPY_FILE "${FROM}/${f}" "${TO}/${f}")
endforeach()
message(STATUS "rtl_pgo.cmake: ${n} profiles from ${FROM} -> ${TO}")
file(TOUCH "${STAMP}")
