# cmake -DCHECKER=... -DSOURCE=<repo> -DWORK=<dir> -P planted_include_test.cmake
# Copies the layered folders of SOURCE to WORK, plants an upward include in a compiler source, and
# expects check_layers to fail naming that file, line, header and rule; then plants a folder cycle
# (compiler/dsl <-> compiler/spec) and a header cycle, and expects each named too.
file(REMOVE_RECURSE ${WORK})
foreach(dir IN ITEMS support compiler runtime kernels_db engine tuner api cli include)
  file(COPY ${SOURCE}/${dir} DESTINATION ${WORK})
endforeach()

execute_process(COMMAND ${CHECKER} ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_layers fails on the unplanted copy (exit ${rc}):\n${out}")
endif()

file(READ ${WORK}/compiler/spec/shape.cpp text)
file(WRITE ${WORK}/compiler/spec/shape.cpp "#include \"tuner/tune.h\"\n${text}")
execute_process(COMMAND ${CHECKER} ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "check_layers exit ${rc} on a planted upward include (expected 1):\n${out}")
endif()
set(expected "compiler/spec/shape.cpp:1: #include \"tuner/tune.h\": compiler (layer 1) may not include tuner (layer 4)")
string(FIND "${out}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "check_layers did not name the planted include; expected\n  ${expected}\ngot:\n${out}")
endif()
file(WRITE ${WORK}/compiler/spec/shape.cpp "${text}")

file(READ ${WORK}/compiler/spec/shape.h text)
file(WRITE ${WORK}/compiler/spec/shape.h "#include \"compiler/dsl/lexer.h\"\n${text}")
execute_process(COMMAND ${CHECKER} ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(FIND "${out}" "compiler/spec/shape.h:1: #include \"compiler/dsl/lexer.h\": compiler/spec/ may not include compiler/dsl/" at)
if(NOT rc EQUAL 1 OR at EQUAL -1)
  message(FATAL_ERROR "check_layers did not refuse spec/ -> dsl/ (exit ${rc}):\n${out}")
endif()
string(FIND "${out}" "folder cycle: compiler/dsl/, compiler/spec/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "check_layers did not name the folder cycle:\n${out}")
endif()
file(WRITE ${WORK}/compiler/spec/shape.h "${text}")

# A header cycle inside one folder: diagnostic.h includes parser.h, which includes diagnostic.h.
file(READ ${WORK}/compiler/dsl/diagnostic.h text)
file(WRITE ${WORK}/compiler/dsl/diagnostic.h "#include \"compiler/dsl/parser.h\"\n${text}")
execute_process(COMMAND ${CHECKER} ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(FIND "${out}" "header cycle: compiler/dsl/diagnostic.h, compiler/dsl/parser.h" at)
if(NOT rc EQUAL 1 OR at EQUAL -1)
  message(FATAL_ERROR "check_layers did not name the header cycle (exit ${rc}):\n${out}")
endif()
message(STATUS "check_layers refused every plant")
