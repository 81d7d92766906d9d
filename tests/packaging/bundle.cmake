# The relocatable bundle (scripts/bundle), checked as a user on another machine would meet it:
#   - scripts/bundle writes tcjit-<VERSION>-linux-x86_64.tar.xz of at most 48 MiB;
#   - unpacked elsewhere, every ELF file of its bin/ and lib/ has an $ORIGIN-relative RUNPATH (no
#     path of this machine), and each library it needs (ldd, LD_LIBRARY_PATH unset) resolves inside
#     the bundle or is part of glibc; none is missing, none is the CUDA driver or toolkit;
#   - the unpacked tcjit runs from another directory with a clean environment: --version, explain,
#     and one GEMM on the emulator (run --device emu), verified;
#   - the bundle's bin/test_gpu (when the build tree has it) runs there too: on a machine without
#     a GPU every test is skipped with the reason, on one with a GPU every test passes;
#   - it carries bench/gpu with its modules and workloads (and bin/tcjit_gpu_bench when the build
#     tree has it), and with PYTHON given, the unpacked bench/gpu on this GPU-less machine prints
#     its one "no GPU here" line, exits 0 and writes nothing.
# Usage: cmake -DSOURCE=<repo> -DBUILD=<build tree> -DWORK=<scratch dir> -DVERSION=<x.y.z>
#              -DREADELF=<readelf> [-DPYTHON=<python3>] -P bundle.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE BUILD WORK VERSION READELF)
  if(NOT ${var})
    message(FATAL_ERROR "bundle.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/out" "${WORK}/unpacked" "${WORK}/home" "${WORK}/elsewhere")

execute_process(COMMAND "${SOURCE}/scripts/bundle" --no-build --build "${BUILD}" --out "${WORK}/out"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scripts/bundle failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${out}")

set(name "tcjit-${VERSION}-linux-x86_64")
set(archive "${WORK}/out/${name}.tar.xz")
if(NOT EXISTS "${archive}")
  file(GLOB made "${WORK}/out/*")
  message(FATAL_ERROR "scripts/bundle did not write ${name}.tar.xz (it wrote: ${made})")
endif()
file(SIZE "${archive}" size)
math(EXPR limit "48 * 1024 * 1024")
if(size GREATER limit)
  message(FATAL_ERROR "${name}.tar.xz weighs ${size} bytes, over the 48 MiB (${limit} bytes) limit")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E tar xf "${archive}" WORKING_DIRECTORY "${WORK}/unpacked"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not unpack ${archive}")
endif()
set(bundle "${WORK}/unpacked/${name}")
foreach(part bin/tcjit README.md bench/README.md bench/gpu bench/gpu_report.py
             bench/gpu_bench/report.py bench/workloads/device_matrix.tcjit include/tcjit
             examples/workloads/resnet50.tcjit)
  if(NOT EXISTS "${bundle}/${part}")
    message(FATAL_ERROR "the bundle has no ${part}")
  endif()
endforeach()

if(EXISTS "${BUILD}/bench/gpu_tool/tcjit_gpu_bench" AND NOT EXISTS "${bundle}/bin/tcjit_gpu_bench")
  message(FATAL_ERROR "the build tree has tcjit_gpu_bench but the bundle has no "
                      "bin/tcjit_gpu_bench (bench/gpu could not race)")
endif()
file(GLOB_RECURSE caches "${bundle}/bench/*.pyc")
if(caches)
  message(FATAL_ERROR "the bundle carries Python caches: ${caches}")
endif()

# glibc's own libraries: the system's, never bundled.
set(glibc_regex
    "^(linux-vdso\\.so|ld-linux[^ ]*\\.so|libc\\.so|libm\\.so|libdl\\.so|libpthread\\.so|librt\\.so|libresolv\\.so|libutil\\.so|libmvec\\.so)")
file(GLOB candidates "${bundle}/bin/*" "${bundle}/lib/*")
set(problems "")
set(checked 0)
foreach(file IN LISTS candidates)
  if(IS_SYMLINK "${file}" OR IS_DIRECTORY "${file}")
    continue()
  endif()
  file(READ "${file}" magic LIMIT 4 HEX)
  if(NOT magic STREQUAL "7f454c46")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(RELATIVE_PATH shown "${bundle}" "${file}")

  execute_process(COMMAND ${READELF} -d "${file}" OUTPUT_VARIABLE dynamic)
  if(NOT dynamic MATCHES "\\(RUNPATH\\)[^\n]*\\[(\\$ORIGIN[^]\n]*)\\]")
    string(APPEND problems "  ${shown}: no $ORIGIN-relative RUNPATH\n")
  elseif(CMAKE_MATCH_1 MATCHES ":")
    string(APPEND problems "  ${shown}: RUNPATH '${CMAKE_MATCH_1}' names more than $ORIGIN\n")
  endif()

  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ldd "${file}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE ldd ERROR_VARIABLE ldd_err)
  if(NOT rc EQUAL 0)
    string(APPEND problems "  ${shown}: ldd failed: ${ldd_err}\n")
    continue()
  endif()
  string(REPLACE "\n" ";" lines "${ldd}")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    string(REGEX MATCH "^([^ ]+)" soname "${line}")
    get_filename_component(soname "${soname}" NAME) # the loader's line names its path
    if(line STREQUAL "statically linked") # a library of data only (libicudata)
      continue()
    elseif(line MATCHES "not found")
      string(APPEND problems "  ${shown}: ${soname} not found\n")
    elseif(soname MATCHES "^(libcuda|libnvrtc|libnvJitLink|libcudart|libcublas|libcudnn)")
      string(APPEND problems "  ${shown}: links the CUDA library ${soname}\n")
    elseif(soname MATCHES "${glibc_regex}")
      continue()
    elseif(line MATCHES "=> ([^ ]+) ")
      get_filename_component(resolved "${CMAKE_MATCH_1}" REALPATH)
      string(FIND "${resolved}" "${bundle}/lib/" at)
      if(NOT at EQUAL 0)
        string(APPEND problems "  ${shown}: ${soname} resolves outside the bundle, to ${resolved}\n")
      endif()
    else()
      string(APPEND problems "  ${shown}: unexpected ldd line '${line}'\n")
    endif()
  endforeach()
endforeach()
if(checked LESS 3)
  message(FATAL_ERROR "only ${checked} ELF files in the bundle's bin/ and lib/: expected tcjit, "
                      "libtcjit.so and the libraries they need")
endif()
if(problems)
  message(FATAL_ERROR "the bundle is not self-contained:\n${problems}")
endif()

# The unpacked command, from another directory, with a clean environment (no LD_LIBRARY_PATH).
set(clean_env ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=TCJIT_DB --unset=XDG_CACHE_HOME
              "HOME=${WORK}/home" "TCJIT_DB=${WORK}/home/kernels.db")
function(run_bundled expect)
  execute_process(COMMAND ${clean_env} "${bundle}/bin/tcjit" ${ARGN}
                  WORKING_DIRECTORY "${WORK}/elsewhere"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expect}")
    message(FATAL_ERROR "the bundled tcjit ${ARGN}: exit ${rc}, expected output matching "
                        "'${expect}':\n${out}\n${err}")
  endif()
endfunction()
run_bundled("^tcjit ${VERSION}" --version)
run_bundled("tensor core: yes" explain "gemm m=64 n=64 k=64 a=f16 b=f16:col")
run_bundled("result: +ok" run "gemm m=64 n=64 k=64 a=f16 b=f16:col" --device emu)

# The tests that need a GPU, run from the bundle as on a GPU node (bench/README.md, "GPU tests").
if(EXISTS "${BUILD}/tests/gpu/test_gpu")
  if(NOT EXISTS "${bundle}/bin/test_gpu")
    message(FATAL_ERROR "the bundle has no bin/test_gpu, though ${BUILD} has tests/gpu/test_gpu")
  endif()
  execute_process(COMMAND ${clean_env} "${bundle}/bin/test_gpu" WORKING_DIRECTORY "${WORK}/elsewhere"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\\[  PASSED  \\]")
    message(FATAL_ERROR "the bundled test_gpu: exit ${rc}:\n${out}\n${err}")
  endif()
  if(out MATCHES "no CUDA device: ")
    message(STATUS "the bundled test_gpu ran; no GPU here: its tests were skipped")
  endif()
endif()

# bench/gpu from the unpacked bundle (it finds bin/tcjit, bin/tcjit_gpu_bench): no GPU here.
if(PYTHON)
  execute_process(COMMAND ${clean_env} "${PYTHON}" -B "${bundle}/bench/gpu"
                          --out "${WORK}/gpu-results"
                  WORKING_DIRECTORY "${WORK}/elsewhere"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^bench/gpu: no GPU here \\([^\n]+\\); nothing measured\n$"
     OR NOT err STREQUAL "" OR EXISTS "${WORK}/gpu-results")
    message(FATAL_ERROR "the bundled bench/gpu without a GPU: exit ${rc}, expected one line "
                        "'bench/gpu: no GPU here (...); nothing measured' and no --out folder:\n"
                        "${out}\n${err}")
  endif()
endif()
