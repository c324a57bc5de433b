# `cpack -G DEB` in the build directory: one .deb holding what
# cmake/install.cmake installs, under /usr. Its Depends are the shared
# libraries the binaries and libcommitlog.so load, found by dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME commitlog)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "write-ahead commit log for key-value stores, in the style of Cassandra's")
set(CPACK_PACKAGE_CONTACT "commitlog developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # the binaries and libcommitlog.so; the archive keeps its symbols
include(CPack)
