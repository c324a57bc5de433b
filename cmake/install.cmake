# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` puts under the prefix, in three components, one per
# Debian package of cmake/package.sh:
#   runtime  lib/libcommitlog.so.0*          the shared library (SONAME libcommitlog.so.0)
#   dev      include/commitlog/*.h           the public headers, and no others
#            lib/libcommitlog.{a,so}         the archive, and the link to the shared library
#            lib/cmake/commitlog/            find_package(commitlog): commitlog::commitlog_shared,
#                                            and commitlog::commitlog (static) when its
#                                            dependencies are found
#            lib/pkgconfig/commitlog.pc      pkg-config commitlog (shared; --static for the archive)
#   tools    bin/commitlog, bin/commitlog-kv
#            share/commitlog/commitlog.yaml  every key with its default
#            share/bash-completion/completions/{commitlog,commitlog-kv}
# `lib` is the multiarch directory (lib/x86_64-linux-gnu) when the prefix is /usr.
include(CMakePackageConfigHelpers)

install(TARGETS commitlog_shared EXPORT commitlogSharedTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS commitlog EXPORT commitlogStaticTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/commitlog COMPONENT dev)
foreach(set Shared Static)
  install(EXPORT commitlog${set}Targets NAMESPACE commitlog::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog COMPONENT dev)
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/commitlogConfig.cmake.in
  ${PROJECT_BINARY_DIR}/commitlogConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/commitlogConfig.cmake ${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog COMPONENT dev)

# The .pc file finds the prefix from its own place, so the tree can be moved.
file(RELATIVE_PATH COMMITLOG_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" COMMITLOG_PC_TO_PREFIX "${COMMITLOG_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/commitlog.pc.in ${PROJECT_BINARY_DIR}/commitlog.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/commitlog.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

if(COMMITLOG_BUILD_TOOLS)
  install(TARGETS commitlog_cli commitlog-kv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
  install(FILES ${PROJECT_SOURCE_DIR}/conf/commitlog.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/commitlog
    COMPONENT tools)
  foreach(program commitlog commitlog-kv)
    install(FILES ${PROJECT_SOURCE_DIR}/tools/cli/completion.bash
      DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${program} COMPONENT tools)
  endforeach()
endif()
