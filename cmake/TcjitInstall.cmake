# `cmake --install build --prefix P` puts what an application needs under P:
#   bin/tcjit                          the CLI
#   lib/libtcjit.so*                   the library (tcjit::tcjit, tcjit::c)
#   include/tcjit/                     the public headers, and only those
#   lib/cmake/tcjit/                   tcjitConfig.cmake, its version file, the exported targets
#   lib/pkgconfig/tcjit.pc             for `pkg-config --cflags --libs tcjit`
# tests/packaging/ builds examples/ against such a prefix with find_package and pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tcjit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tcjit_shared tcjit_c EXPORT tcjitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tcjit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

set(TCJIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcjit)
install(EXPORT tcjitTargets NAMESPACE tcjit:: DESTINATION ${TCJIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tcjitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tcjitConfig.cmake
                              INSTALL_DESTINATION ${TCJIT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tcjitConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tcjitConfig.cmake ${PROJECT_BINARY_DIR}/tcjitConfigVersion.cmake
        DESTINATION ${TCJIT_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/tcjit.pc.in ${PROJECT_BINARY_DIR}/tcjit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tcjit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
