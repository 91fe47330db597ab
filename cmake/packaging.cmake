# Install rules and the Debian package (CPack DEB). `make package` (top-level Makefile) or `cpack` in
# the build directory writes build/npuperf_<version>_<arch>.deb; tests/deploy/package_test.sh checks it.
#
# Installed: the three binaries (npuperf, npuperf-server, npuperf-agent), the systemd units, the
# sysusers file, the env examples and the docs. Not installed: msprof-sim. It is the test and demo
# stand-in for CANN's msprof; on a production host an agent pointed at it by mistake would store
# simulated numbers as evidence, so the package leaves it out (a host gets msprof from CANN).
include(GNUInstallDirs)
# cpack (and `make install`) must not rebuild the tree: they take the binaries as built.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS npuperf npuperf-server npuperf-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The units name /usr/bin/ in the source tree (what the package installs). Installed elsewhere
# (cmake --install --prefix /opt/npuperf), they are rewritten to that prefix at install time.
set(NPUPERF_UNITS ${PROJECT_SOURCE_DIR}/deploy/systemd/npuperf-server.service
                  ${PROJECT_SOURCE_DIR}/deploy/systemd/npuperf-agent.service)
install(CODE "
  foreach(unit ${NPUPERF_UNITS})
    file(READ \"\${unit}\" text)
    string(REPLACE \"/usr/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\" text \"\${text}\")
    get_filename_component(name \"\${unit}\" NAME)
    file(WRITE \"${PROJECT_BINARY_DIR}/units/\${name}\" \"\${text}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\"
         TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
         FILES \"${PROJECT_BINARY_DIR}/units/\${name}\")
  endforeach()")
install(FILES deploy/systemd/npuperf.sysusers DESTINATION lib/sysusers.d RENAME npuperf.conf)
install(FILES deploy/server.env.example deploy/agent.env.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME npuperf)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "npuperf maintainers <npuperf@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NPU operator profiling as a service (server, agent, CLI)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Depends comes from dpkg-shlibdeps (Debian package dpkg-dev) on the installed binaries; systemd
# for systemd-sysusers in postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "postgresql")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
                                       ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
                                       ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
