# The fingerprint of tcjit's code generator: part of the compiler version that keys every cached
# kernel (engine/kernel_records.cpp), so that a binary is never served by a code generator that
# would not have produced it. It covers every file that can change generated code: a glob over
# folders, not a list of files, so that a file added or moved there is covered by itself.
#
# Included by engine/CMakeLists.txt; also a script, for the test that shows an edit changes it:
#   cmake -DTCJIT_FINGERPRINT_ROOT=<repository root> -P cmake/TcjitFingerprint.cmake
# prints the fingerprint of that tree.

# The globs, relative to the repository root: the hardware facts, the specs' validation and
# normalisation, the code generator (both backends), and the public OpSpec.
set(TCJIT_FINGERPRINT_PATTERNS
  compiler/target/*.h compiler/target/*.cpp
  compiler/spec/*.h compiler/spec/*.cpp
  compiler/codegen/*.h compiler/codegen/*.cpp
  include/tcjit/op_spec.h)

# tcjit_fingerprint_files(<out> <root>): the files, sorted.
function(tcjit_fingerprint_files out root)
  set(globs "")
  foreach(pattern IN LISTS TCJIT_FINGERPRINT_PATTERNS)
    list(APPEND globs ${root}/${pattern})
  endforeach()
  file(GLOB_RECURSE files ${globs})
  list(SORT files)
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# tcjit_code_fingerprint(<out> <root>): 12 hex digits of the SHA-256 of every file's path and text.
function(tcjit_code_fingerprint out root)
  tcjit_fingerprint_files(files ${root})
  set(text "")
  foreach(f IN LISTS files)
    file(RELATIVE_PATH rel ${root} ${f})
    file(READ ${f} content)
    string(APPEND text "${rel}\n${content}")
  endforeach()
  string(SHA256 hash "${text}")
  string(SUBSTRING ${hash} 0 12 hash)
  set(${out} ${hash} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED TCJIT_FINGERPRINT_ROOT)
  tcjit_code_fingerprint(hash ${TCJIT_FINGERPRINT_ROOT})
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${hash}")
endif()
