# Fails when a test of the build tree has no ctest label (`ctest -L <area>` would miss it), naming
# each. Run as the test tests_labelled:
#   cmake -DCTEST=<ctest> -DBUILD=<build dir> -DWORK=<scratch dir> -P tests/check_labels.cmake
# Reads `ctest --show-only=json-v1` (CMake's string(JSON); no python on the CI machines): all
# tests, and those `-LE .` keeps, i.e. without a non-empty label (what no `ctest -L <area>`
# selects). Reading each test's properties from the full list instead re-parses the whole list
# per test (30 s for ~1000 tests on a loaded machine). These ctest runs are made in WORK, whose
# CTestTestfile.cmake takes in BUILD's tests: ctest writes Testing/Temporary/LastTest.log in the
# folder it runs in, and BUILD's belongs to the ctest running this test.
if(NOT CTEST OR NOT BUILD OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DCTEST=<ctest> -DBUILD=<build dir> -DWORK=<scratch dir> "
                      "-P check_labels.cmake")
endif()
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/CTestTestfile.cmake" "subdirs(\"${BUILD}\")\n")

# `out`: the JSON array of the tests ctest lists in WORK, given the extra arguments.
function(list_tests out)
  execute_process(COMMAND "${CTEST}" --test-dir "${WORK}" --show-only=json-v1 ${ARGN}
                  OUTPUT_VARIABLE json ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ctest --show-only=json-v1 ${ARGN} failed (${rc}): ${err}")
  endif()
  string(JSON tests ERROR_VARIABLE json_error GET "${json}" tests)
  if(json_error)
    message(FATAL_ERROR "ctest --show-only=json-v1 ${ARGN} gave no test list: ${json_error}")
  endif()
  set(${out} "${tests}" PARENT_SCOPE)
endfunction()

list_tests(all)
string(JSON count LENGTH "${all}")
if(count EQUAL 0)
  message(FATAL_ERROR "no tests in ${BUILD}: nothing was checked")
endif()
list_tests(unlabelled_tests -LE .)
string(JSON n_unlabelled LENGTH "${unlabelled_tests}")
if(n_unlabelled GREATER 0)
  set(names "")
  math(EXPR last "${n_unlabelled} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${unlabelled_tests}" ${i} name)
    string(APPEND names "\n  ${name}")
  endforeach()
  message(FATAL_ERROR "${n_unlabelled} of ${count} tests have no label (give each its area's "
                      "label, the name of its folder under tests/, where it is registered):"
                      "${names}")
endif()
message(STATUS "all ${count} tests have a label")
