# Writes a header holding a text file as a C++ raw string, so a test binary carries the file with
# it (test_gpu runs from the relocatable bundle, where no build tree exists).
# Usage: cmake -DINPUT=<file> -DOUTPUT=<header> -DNAME=<identifier> -P embed_text.cmake
foreach(var INPUT OUTPUT NAME)
  if(NOT ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${INPUT}" text)
if(text MATCHES "\\)tcjit_embedded\"")
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} holds the raw string's delimiter")
endif()
get_filename_component(shown "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${shown} by tests/gpu/embed_text.cmake: do not edit.\n#pragma once\n\n"
     "inline constexpr const char *${NAME} = R\"tcjit_embedded(${text})tcjit_embedded\";\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
