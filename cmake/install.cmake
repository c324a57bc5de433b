# find_package(commitlog) after `cmake --install`, and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS commitlog commitlog_policies commitlog_segment
  EXPORT commitlogTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir commitlog policies segment)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/commitlog/${dir} FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT commitlogTargets NAMESPACE commitlog::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/commitlogConfig.cmake.in
  ${PROJECT_BINARY_DIR}/commitlogConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/commitlogConfig.cmake ${PROJECT_BINARY_DIR}/commitlogConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/commitlog)
configure_file(${PROJECT_SOURCE_DIR}/cmake/commitlog.pc.in ${PROJECT_BINARY_DIR}/commitlog.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/commitlog.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(COMMITLOG_BUILD_TOOLS)
  install(TARGETS commitlog_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
