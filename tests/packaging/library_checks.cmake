# What an application loads as libtcjit.so must hold (issue 25, api/libtcjit.map):
#   - every defined dynamic symbol it exports (global, weak or unique) is the public API of
#     include/tcjit/: a C function tcjit_*, a member of tcjit::Error, tcjit::Operation or
#     tcjit::Runtime (not of their private Operation::State, Runtime::Impl), the typeinfo and vtable
#     of tcjit::Error, or one of the free functions of tcjit.hpp, op_spec.h, tools.hpp, db.hpp,
#     doctor.hpp and emu.hpp listed below; none is llvm::, std::, nlohmann:: or an internal layer's
#     (tcjit::engine::, tcjit::kernels_db::, ...), which would clash with another LLVM or tcjit
#     build in the same process;
#   - the symbols a client needs are there (tcjit_prepare, tcjit::Runtime::prepare, typeinfo for
#     tcjit::Error: catching tcjit::Error across the library boundary);
#   - it carries no debug info (that is split into a .debug file) and is at most 48 MB (half of
#     the 96 MB it was with its debug info).
# Used by packaging_library_symbols (the build tree's library) and consumer.cmake (the installed
# one). Run as a script: cmake -DLIBRARY=<libtcjit.so> -DNM=<nm> -DREADELF=<readelf> -P this file.

cmake_policy(VERSION 3.25)

set(tcjit_public_free_functions
  # tcjit.hpp and op_spec.h
  to_string dtype_bits is_float_type is_integer_type is_reserved_type resolve_math
  tf32_disabled_by_environment
  # tools.hpp
  escape_controls escape_controls_keep_lines entry_label parse_ops load_custom_activation
  canonical_text target_arch_names is_target_arch compile explain_op resolve_op tune_ops
  sparse_2_4_bytes sparse_2_4_metadata_offset prune_2_4_and_compress prune_2_4 decompress_2_4
  # db.hpp
  current_db_versions default_db_path db_time_text db_list db_show db_binary db_stats db_prune
  db_rebuild db_export db_import db_merge db_check db_vacuum db_calibrate db_calibrations
  db_calibration_side_file_note
  # doctor.hpp, emu.hpp
  doctor read_ptx_file emu_run)

# Whether the demangled `name` is part of the public API.
function(tcjit_is_public_symbol name out)
  list(JOIN tcjit_public_free_functions "|" free)
  set(public FALSE)
  if(name MATCHES "^tcjit_[a-z0-9_]+$"
     OR name MATCHES "^(typeinfo|typeinfo name|vtable) for tcjit::Error$"
     OR name MATCHES "^tcjit::Error::"
     OR (name MATCHES "^tcjit::Operation::" AND NOT name MATCHES "^tcjit::Operation::State")
     OR (name MATCHES "^tcjit::Runtime::" AND NOT name MATCHES "^tcjit::Runtime::Impl")
     OR name MATCHES "^tcjit::(${free})(\\[abi:cxx11\\])?\\(")
    set(public TRUE)
  endif()
  set(${out} ${public} PARENT_SCOPE)
endfunction()

# FATAL_ERROR unless `library` holds the properties above.
function(tcjit_check_library library nm readelf)
  execute_process(COMMAND ${nm} -D --defined-only -C ${library} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE listing ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${nm} -D ${library} failed: ${err}")
  endif()
  string(REPLACE ";" "\\;" listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  set(exported "")
  set(foreign "")
  foreach(line IN LISTS lines)
    # "ADDRESS TYPE NAME": upper-case types are global, w/v weak, u unique global; lower-case
    # others (d, r, t, b) are local.
    if(NOT line MATCHES "^[0-9a-f]+ ([A-Zuvw]) (.*)$")
      continue()
    endif()
    set(name "${CMAKE_MATCH_2}")
    list(APPEND exported "${name}")
    tcjit_is_public_symbol("${name}" public)
    if(NOT public)
      list(APPEND foreign "${name}")
    endif()
  endforeach()
  list(LENGTH exported n_exported)
  list(LENGTH foreign n_foreign)
  if(n_foreign GREATER 0)
    set(llvm ${foreign})
    list(FILTER llvm INCLUDE REGEX "llvm::")
    list(LENGTH llvm n_llvm)
    list(SUBLIST foreign 0 20 shown)
    list(JOIN shown "\n  " shown)
    message(FATAL_ERROR "${library} exports ${n_foreign} of its ${n_exported} symbols outside "
                        "tcjit's API (${n_llvm} of them llvm::), e.g.\n  ${shown}\n"
                        "how to fix: link it with api/libtcjit.map (a new function of "
                        "include/tcjit/ goes there and into this test's list)")
  endif()
  foreach(needed "tcjit_prepare" "tcjit_last_error_message" "typeinfo for tcjit::Error"
          "vtable for tcjit::Error")
    if(NOT needed IN_LIST exported)
      message(FATAL_ERROR "${library} does not export '${needed}' (${n_exported} symbols)")
    endif()
  endforeach()
  list(FILTER exported INCLUDE REGEX "^tcjit::Runtime::prepare\\(")
  if(NOT exported)
    message(FATAL_ERROR "${library} does not export tcjit::Runtime::prepare")
  endif()

  execute_process(COMMAND ${readelf} -S -W ${library} RESULT_VARIABLE rc OUTPUT_VARIABLE sections)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${readelf} -S ${library} failed")
  endif()
  if(sections MATCHES "\\.debug_info")
    message(FATAL_ERROR "${library} carries debug info (.debug_info); it belongs in its .debug "
                        "file (cmake/TcjitSplitDebug.cmake)")
  endif()
  file(SIZE ${library} bytes)
  if(bytes GREATER 50331648)
    message(FATAL_ERROR "${library} is ${bytes} bytes, more than 48 MB")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  file(REAL_PATH ${LIBRARY} library)
  tcjit_check_library(${library} ${NM} ${READELF})
  file(SIZE ${library} bytes)
  message("${library}: exports tcjit's API only, no debug info, ${bytes} bytes: ok")
endif()
