# cmake -DSOURCE=<repo> -DWORK=<dir> -DFINGERPRINT=<cmake/TcjitFingerprint.cmake> -P ...
# The code generator's fingerprint (the compiler version that keys cached kernels) changes when a
# file under compiler/codegen, compiler/target or compiler/spec is edited, added or moved, and not
# when a file outside them (the CPU reference) changes.
file(REMOVE_RECURSE ${WORK})
file(COPY ${SOURCE}/compiler DESTINATION ${WORK})
file(COPY ${SOURCE}/include DESTINATION ${WORK})

function(fingerprint out)
  execute_process(COMMAND ${CMAKE_COMMAND} -DTCJIT_FINGERPRINT_ROOT=${WORK} -P ${FINGERPRINT}
                  OUTPUT_VARIABLE h OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT h MATCHES "^[0-9a-f]+$")
    message(FATAL_ERROR "TcjitFingerprint.cmake failed (exit ${rc}): '${h}'")
  endif()
  set(${out} ${h} PARENT_SCOPE)
endfunction()

fingerprint(base)
fingerprint(again)
if(NOT base STREQUAL again)
  message(FATAL_ERROR "the fingerprint is not deterministic: ${base} then ${again}")
endif()

# An edit in a backend's file.
file(GLOB llvm_files ${WORK}/compiler/codegen/llvm/*.cpp)
list(GET llvm_files 0 edited)
file(APPEND ${edited} "\n// an edit\n")
fingerprint(after_edit)
if(after_edit STREQUAL base)
  message(FATAL_ERROR "editing ${edited} left the fingerprint at ${base}")
endif()

# A new file in a new folder of codegen.
file(WRITE ${WORK}/compiler/codegen/new_folder/new_pass.h "// a new pass\n")
fingerprint(after_add)
if(after_add STREQUAL after_edit)
  message(FATAL_ERROR "adding compiler/codegen/new_folder/new_pass.h left the fingerprint unchanged")
endif()

# A file moved between folders, its text unchanged.
file(RENAME ${WORK}/compiler/codegen/new_folder/new_pass.h ${WORK}/compiler/codegen/new_pass.h)
fingerprint(after_move)
if(after_move STREQUAL after_add)
  message(FATAL_ERROR "moving new_pass.h left the fingerprint unchanged")
endif()

# The hardware facts.
file(GLOB target_files ${WORK}/compiler/target/*.cpp)
list(GET target_files 0 fact)
file(APPEND ${fact} "\n// a new fact\n")
fingerprint(after_fact)
if(after_fact STREQUAL after_move)
  message(FATAL_ERROR "editing ${fact} left the fingerprint unchanged")
endif()

# The CPU reference generates no code.
file(GLOB reference_files ${WORK}/compiler/reference/*.cpp)
list(GET reference_files 0 ref)
file(APPEND ${ref} "\n// not code generation\n")
fingerprint(after_reference)
if(NOT after_reference STREQUAL after_fact)
  message(FATAL_ERROR "editing ${ref} changed the fingerprint")
endif()
message(STATUS "fingerprint ${base} -> ${after_edit} -> ${after_add} -> ${after_move} -> ${after_fact}")
