# Whether to build the Python package (python/): when nanobind is found through a Python that has
# it. The Python is Python_EXECUTABLE when given (scikit-build-core gives its own), else the venv
# of scripts/setup (build/venv, or $TCJIT_VENV) when there is one, else none: without nanobind the
# package is not built and its tests are reported as skipped (tests/python).
#   TCJIT_BUILD_PYTHON  AUTO (the default: when found), ON (required), OFF
# Sets TCJIT_PYTHON_FOUND.
set(TCJIT_BUILD_PYTHON AUTO CACHE STRING "Build the Python package: AUTO, ON or OFF")
set(TCJIT_PYTHON_FOUND OFF)
set(TCJIT_PYTHON_SKIP_REASON "")
if(TCJIT_BUILD_PYTHON STREQUAL "OFF")
  set(TCJIT_PYTHON_SKIP_REASON "configured with -DTCJIT_BUILD_PYTHON=OFF")
  return()
endif()
# An instrumented module cannot be loaded into an uninstrumented Python (the sanitizers' runtime
# must come first): the sanitizer and fuzz builds leave the package out.
if(TCJIT_SANITIZE OR TCJIT_BUILD_FUZZERS)
  set(TCJIT_PYTHON_SKIP_REASON "a sanitizer build: its module could not load into Python")
  return()
endif()

if(NOT Python_EXECUTABLE)
  foreach(venv "$ENV{TCJIT_VENV}" "${PROJECT_BINARY_DIR}/venv" "${PROJECT_SOURCE_DIR}/build/venv")
    if(venv AND EXISTS "${venv}/bin/python")
      set(Python_EXECUTABLE "${venv}/bin/python" CACHE FILEPATH "The Python of the package")
      break()
    endif()
  endforeach()
endif()
if(Python_EXECUTABLE)
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module QUIET)
endif()
if(Python_FOUND)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE nanobind_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE nanobind_status ERROR_QUIET)
  if(nanobind_status EQUAL 0)
    set(nanobind_DIR "${nanobind_cmake_dir}" CACHE PATH "nanobind's CMake package")
    find_package(nanobind CONFIG QUIET)
  endif()
endif()

if(Python_FOUND AND nanobind_FOUND)
  set(TCJIT_PYTHON_FOUND ON)
  message(STATUS "tcjit: the Python package is built (${Python_EXECUTABLE}, nanobind "
                 "${nanobind_VERSION})")
  return()
endif()
if(NOT Python_EXECUTABLE)
  set(TCJIT_PYTHON_SKIP_REASON "no Python with nanobind: run scripts/setup (build/venv), or "
                               "configure with -DPython_EXECUTABLE=<a python with nanobind>")
elseif(NOT Python_FOUND)
  set(TCJIT_PYTHON_SKIP_REASON "${Python_EXECUTABLE} has no development headers (python3-dev)")
else()
  set(TCJIT_PYTHON_SKIP_REASON "${Python_EXECUTABLE} has no nanobind: run scripts/setup")
endif()
if(TCJIT_BUILD_PYTHON STREQUAL "ON")
  message(FATAL_ERROR "tcjit: the Python package cannot be built: ${TCJIT_PYTHON_SKIP_REASON}")
endif()
message(STATUS "tcjit: the Python package is not built: ${TCJIT_PYTHON_SKIP_REASON}")
