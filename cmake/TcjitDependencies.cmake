# Finds every third-party dependency, and says which Debian package to install when one is
# missing (scripts/setup installs them all).

function(tcjit_missing what package)
  message(FATAL_ERROR
    "tcjit: ${what} not found. Install the Debian package '${package}' "
    "(or run scripts/setup, which installs every dependency), then configure again.")
endfunction()

find_package(Threads REQUIRED)

# LLVM 19 with the NVPTX backend (llvm-19-dev).
# LLVM's version file accepts only an exact major.minor, so look for any LLVM and check the major.
find_package(LLVM CONFIG QUIET HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_FOUND)
  find_package(LLVM CONFIG QUIET)
endif()
if(NOT LLVM_FOUND OR NOT LLVM_VERSION_MAJOR EQUAL 19)
  tcjit_missing("LLVM 19 (CMake package 'LLVM' 19.x)" "llvm-19-dev")
endif()
if(NOT "NVPTX" IN_LIST LLVM_TARGETS_TO_BUILD)
  message(FATAL_ERROR "tcjit: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR} was built without the NVPTX backend.")
endif()
message(STATUS "tcjit: LLVM ${LLVM_PACKAGE_VERSION} (${LLVM_DIR})")

find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  tcjit_missing("SQLite 3" "libsqlite3-dev")
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  tcjit_missing("CLI11 (command-line parser)" "libcli11-dev")
endif()

find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  tcjit_missing("nlohmann/json" "nlohmann-json3-dev")
endif()

if(TCJIT_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    tcjit_missing("GoogleTest" "libgtest-dev (and libgmock-dev)")
  endif()
  # JSON Schema validation of the --json outputs against docs/schemas/ (header-only)
  find_package(valijson CONFIG QUIET)
  if(NOT valijson_FOUND)
    tcjit_missing("valijson" "libvalijson-dev")
  endif()
endif()
if(TCJIT_BUILD_BENCH)
  find_package(benchmark CONFIG QUIET)
  if(NOT benchmark_FOUND)
    tcjit_missing("Google Benchmark" "libbenchmark-dev")
  endif()
endif()

# CUDA toolkit >= 12: headers, NVRTC, nvJitLink. libcuda is never linked: the runtime opens it
# with dlopen, so every binary starts on a machine without a driver.
if(NOT DEFINED CUDAToolkit_ROOT)
  if(DEFINED ENV{CUDAToolkit_ROOT})
    set(CUDAToolkit_ROOT "$ENV{CUDAToolkit_ROOT}")
  elseif(DEFINED ENV{CUDA_HOME})
    set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}")
  else()
    set(CUDAToolkit_ROOT "/usr/local/cuda")
  endif()
endif()
find_package(CUDAToolkit 12 QUIET)
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR
    "tcjit: the CUDA toolkit >= 12 was not found under '${CUDAToolkit_ROOT}'. Install it from "
    "NVIDIA (https://developer.nvidia.com/cuda-downloads) and set CUDA_HOME or CUDAToolkit_ROOT "
    "to its folder (default /usr/local/cuda).")
endif()
find_program(TCJIT_PTXAS ptxas HINTS "${CUDAToolkit_BIN_DIR}" NO_DEFAULT_PATH)
if(NOT TCJIT_PTXAS)
  message(FATAL_ERROR "tcjit: ptxas not found in ${CUDAToolkit_BIN_DIR}; the CUDA toolkit is incomplete.")
endif()
message(STATUS "tcjit: CUDA toolkit ${CUDAToolkit_VERSION} (${CUDAToolkit_BIN_DIR}), ptxas ${TCJIT_PTXAS}")
