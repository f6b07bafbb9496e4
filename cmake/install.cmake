# Install layout (cmake --install, and the .deb that CPack builds from it). With the `package`
# preset (prefix /usr) GNUInstallDirs puts the configuration under /etc; with the default prefix
# (/usr/local) under /usr/local/etc.
#
#   bin/mqnamesrv, bin/nsadmin          the server and the admin tool
#   bin/mqcontroller                    `mqnamesrv --controller "$@"`: the controller alone, as
#                                       Java's bin/mqcontroller (docs/controller.md)
#   etc/mqnamesrv/namesrv.conf          the -c file the unit uses (every key, commented out)
#   etc/logrotate.d/mqnamesrv           weekly rotation, SIGHUP to reopen the log
#   lib/systemd/system/mqnamesrv.service  Type=notify unit
#   lib/sysusers.d/mqnamesrv.conf       the mqnamesrv account
#   lib/tmpfiles.d/mqnamesrv.conf       /var/lib/mqnamesrv and the config directory's modes
#   share/mqnamesrv/conf -> etc/mqnamesrv  ROCKETMQ_HOME of the unit (conf/ = the config dir)
#   share/man/man8/mqnamesrv.8, share/man/man1/nsadmin.1, share/doc/mqnamesrv/
#   share/doc/mqnamesrv/examples/plain_acl.yml.example  the ACL account file format (copy it to
#                                       etc/mqnamesrv/plain_acl.yml for aclEnable=true)
set(NS_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING "systemd unit directory (relative to the prefix)")
set(NS_CONF_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/mqnamesrv")

install(TARGETS mqnamesrv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET nsadmin)
  install(TARGETS nsadmin RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
set(NS_MQNAMESRV_PATH "${CMAKE_INSTALL_FULL_BINDIR}/mqnamesrv")
set(NS_CONTROLLER_DOC "${CMAKE_INSTALL_FULL_DOCDIR}/controller.md")
configure_file(packaging/mqcontroller.in ${CMAKE_BINARY_DIR}/mqcontroller @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/mqcontroller DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES conf/namesrv.conf DESTINATION ${NS_CONF_DIR})
install(FILES packaging/mqnamesrv.logrotate DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/logrotate.d
        RENAME mqnamesrv)
install(FILES packaging/mqnamesrv.service DESTINATION ${NS_SYSTEMD_UNIT_DIR})
install(FILES packaging/mqnamesrv.sysusers DESTINATION lib/sysusers.d RENAME mqnamesrv.conf)
install(FILES packaging/mqnamesrv.tmpfiles DESTINATION lib/tmpfiles.d RENAME mqnamesrv.conf)
install(FILES man/mqnamesrv.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
if(EXISTS ${CMAKE_SOURCE_DIR}/man/nsadmin.1)
  install(FILES man/nsadmin.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
file(GLOB NS_DOC_PAGES ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${NS_DOC_PAGES} DESTINATION ${CMAKE_INSTALL_DOCDIR})
# An example, not a conffile: with aclEnable=true the server reads conf/plain_acl.yml, which the
# administrator writes (operations.md, Security).
install(FILES conf/plain_acl.yml.example DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The Grafana dashboard and the Prometheus alert rules (operations.md, Monitoring).
install(DIRECTORY contrib/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/contrib)
# ROCKETMQ_HOME for the unit: its conf/ is the configuration directory (plain_acl.yml and
# friends live there, as under a Java RocketMQ home).
install(CODE "
  set(home \"\$ENV{DESTDIR}${CMAKE_INSTALL_FULL_DATADIR}/mqnamesrv\")
  file(MAKE_DIRECTORY \"\${home}\")
  file(CREATE_LINK \"${NS_CONF_DIR}\" \"\${home}/conf\" SYMBOLIC)
  message(STATUS \"Installing: \${home}/conf -> ${NS_CONF_DIR}\")
")

# ---- Debian package ------------------------------------------------------------------------
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "mqnamesrv")
set(CPACK_PACKAGE_VENDOR "mqnamesrv")
set(CPACK_PACKAGE_CONTACT "mqnamesrv maintainers <mqnamesrv@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "RocketMQ NameServer in C, a drop-in for the Java NameServer")
set(CPACK_PACKAGE_DESCRIPTION "A drop-in reimplementation of the Apache RocketMQ NameServer as a small C daemon: same port, wire protocol, config keys and kvConfig.json as the Java NameServer, for RocketMQ 4.9.x and 5.x brokers, clients and mqadmin.")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://rocketmq.apache.org")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "logrotate")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "systemd")
configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/conffiles.in ${CMAKE_BINARY_DIR}/debian/conffiles @ONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/debian/conffiles
    ${CMAKE_SOURCE_DIR}/packaging/debian/postinst
    ${CMAKE_SOURCE_DIR}/packaging/debian/prerm
    ${CMAKE_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
