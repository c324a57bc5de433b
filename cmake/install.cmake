# What `cmake --install` puts under the prefix, and `cpack -G DEB` into a .deb:
#   include/commitlog/*.h          the public headers, and no others
#   lib/libcommitlog.{a,so*}       static and shared (SONAME libcommitlog.so.MAJOR.MINOR)
#   lib/cmake/commitlog/           find_package(commitlog): commitlog::commitlog (static),
#                                  commitlog::commitlog_shared
#   lib/pkgconfig/commitlog.pc     pkg-config commitlog (shared; --static for the archive)
#   bin/commitlog, bin/commitlog-kv
#   share/commitlog/commitlog.yaml every key with its default
include(CMakePackageConfigHelpers)

install(TARGETS commitlog commitlog_shared
  EXPORT commitlogTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/commitlog)
install(EXPORT commitlogTargets NAMESPACE commitlog::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/commitlogConfig.cmake.in
  ${PROJECT_BINARY_DIR}/commitlogConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/commitlogConfig.cmake ${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)

# The .pc file finds the prefix from its own place, so the tree can be moved.
file(RELATIVE_PATH COMMITLOG_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" COMMITLOG_PC_TO_PREFIX "${COMMITLOG_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/commitlog.pc.in ${PROJECT_BINARY_DIR}/commitlog.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/commitlog.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/conf/commitlog.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/commitlog)
if(COMMITLOG_BUILD_TOOLS)
  install(TARGETS commitlog_cli commitlog-kv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
