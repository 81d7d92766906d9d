# The installed tcjit as an application developer uses it (run by ctest: test_packaging_consumer):
#   1. cmake --install BUILD --prefix WORK/prefix
#   2. the install holds bin/tcjit, lib/libtcjit.so, include/tcjit/ with the public headers only,
#      lib/cmake/tcjit/ and lib/pkgconfig/tcjit.pc
#      (library_checks.cmake: it exports tcjit's API only and has no debug info); bin/tcjit links
#      lib/libtcjit.so and runs from the prefix
#   3. examples/ built out of tree with find_package(tcjit REQUIRED), both programs run on the
#      emulator (their ctest: compiled, then found in the database)
#   4. examples/embed_c/main.c compiled with `pkg-config --cflags --libs tcjit` and run
# Arguments: -DBUILD=<tcjit build dir> -DSOURCE=<tcjit source dir> -DWORK=<scratch dir>
#            -DC_COMPILER=<cc> -DGENERATOR=<cmake generator> -DNM=<nm> -DREADELF=<readelf>
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGV " " cmd)
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})

foreach(path bin/tcjit include/tcjit/tcjit.hpp include/tcjit/tools.hpp include/tcjit/tcjit.h
        include/tcjit/op_spec.h
        lib/cmake/tcjit/tcjitConfig.cmake lib/cmake/tcjit/tcjitConfigVersion.cmake
        lib/cmake/tcjit/tcjitTargets.cmake lib/pkgconfig/tcjit.pc)
  if(NOT EXISTS ${prefix}/${path})
    message(FATAL_ERROR "the install has no ${path}")
  endif()
endforeach()
file(GLOB libs ${prefix}/lib/libtcjit.so*)
if(NOT libs)
  message(FATAL_ERROR "the install has no lib/libtcjit.so")
endif()
# The installed library exports tcjit's API only and carries no debug info (library_checks.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/library_checks.cmake)
file(REAL_PATH ${prefix}/lib/libtcjit.so installed_library)
tcjit_check_library(${installed_library} ${NM} ${READELF})
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/*)
list(SORT headers)
if(NOT headers STREQUAL
   "tcjit/db.hpp;tcjit/doctor.hpp;tcjit/emu.hpp;tcjit/op_spec.h;tcjit/tcjit.h;tcjit/tcjit.hpp;tcjit/tools.hpp")
  message(FATAL_ERROR "the install's headers are not the public API only: ${headers}")
endif()
# The CLI is a client of the installed library (its RUNPATH finds it), not a second copy of it.
execute_process(COMMAND ${READELF} -d ${prefix}/bin/tcjit OUTPUT_VARIABLE dynamic)
if(NOT dynamic MATCHES "NEEDED[^\n]*libtcjit\\.so")
  message(FATAL_ERROR "the installed bin/tcjit does not link libtcjit.so:\n${dynamic}")
endif()
run(${prefix}/bin/tcjit --version)

# 3. find_package(tcjit) from an out-of-tree project
run(${CMAKE_COMMAND} -S ${SOURCE}/examples -B ${WORK}/examples -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/examples)
run(${CMAKE_COMMAND} -E env ctest --test-dir ${WORK}/examples --output-on-failure)
string(FIND "${last_output}" "100% tests passed" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the out-of-tree examples did not all pass:\n${last_output}")
endif()

# 4. pkg-config, from a C program
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs tcjit RESULT_VARIABLE rc
                OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs tcjit failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 -o ${WORK}/embed_c ${SOURCE}/examples/embed_c/main.c ${flags} -lm)
set(ENV{TCJIT_DB} ${WORK}/pkgconfig.db)
set(ENV{TCJIT_EXAMPLE_DEVICE} emu)
run(${WORK}/embed_c)
string(FIND "${last_output}" "result: ok" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the pkg-config-built C program did not print 'result: ok':\n${last_output}")
endif()
message("install, find_package and pkg-config consumers: ok")
file(REMOVE_RECURSE ${WORK})
