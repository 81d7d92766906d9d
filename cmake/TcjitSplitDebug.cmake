# tcjit_split_debug_info(TARGET): after each link, TARGET's debug info moves to a file of its own
# beside it (<file>.debug, linked by .gnu_debuglink, so gdb and perf find it in the build tree),
# and the binary keeps none: libtcjit.so and the `tcjit` CLI are installed without debug info,
# whatever the build type (RelWithDebInfo is the default). `cmake --install build --component
# debug` installs the .debug files to <libdir>/.debug and <bindir>/.debug, where gdb looks.
# Without an objcopy (CMAKE_OBJCOPY) the binaries keep their debug info.
include(GNUInstallDirs)

function(tcjit_split_debug_info target)
  if(NOT CMAKE_OBJCOPY OR TCJIT_SANITIZE OR TCJIT_BUILD_FUZZERS)
    return()
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:${target}>
            $<TARGET_FILE:${target}>.debug
    COMMAND ${CMAKE_OBJCOPY} --strip-debug --add-gnu-debuglink=$<TARGET_FILE:${target}>.debug $<TARGET_FILE:${target}>
    COMMENT "Splitting the debug info of ${target} into $<TARGET_FILE_NAME:${target}>.debug"
    VERBATIM)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    set(destination ${CMAKE_INSTALL_BINDIR}/.debug)
  else()
    set(destination ${CMAKE_INSTALL_LIBDIR}/.debug)
  endif()
  install(FILES $<TARGET_FILE:${target}>.debug DESTINATION ${destination} COMPONENT debug
          EXCLUDE_FROM_ALL)
endfunction()
