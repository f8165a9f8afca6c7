# Installing and packaging: `cmake --install BUILD` puts the tileprof binary
# in <prefix>/bin and the README and design notes in
# <prefix>/share/doc/tileprof; `cpack -G DEB` (run in BUILD) makes
# tileprof_<version>_<arch>.deb from the same rules, for
# `apt install ./tileprof_*.deb`. Packages are made from the default static
# build: with TILEPROF_SHARED_LIBS the layers' .so files are not installed.
# The repository has no licence file yet, so the package has no
# /usr/share/doc/tileprof/copyright (Debian policy wants one): install it
# beside the README once the project has chosen a licence.

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB TILEPROF_DOCS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${TILEPROF_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

set(CPACK_PACKAGE_NAME tileprof)
set(CPACK_PACKAGE_VENDOR "tileprof maintainers")
set(CPACK_PACKAGE_CONTACT "tileprof maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "profiler for ML graphs on tile-based accelerators (IPU-like): compile, simulate, report")
set(CPACK_PACKAGE_DESCRIPTION
    "tileprof compiles XLA HLO modules onto the tiles of a simulated IPU-like device, runs them on
its tile simulator and writes memory and execution reports (text, JSON, CBOR, SQLite); it
reads TensorFlow/Poplar logs, trace events and per-tile ELF archives, and prints what GNU
size prints for them.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the line tables are for developers; the package is ~10x smaller
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tileprof_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Depends: from dpkg-shlibdeps on the installed binary (libc6, libcbor,
# libsqlite3; libstdc++ and fmt are linked statically).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
