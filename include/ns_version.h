/* Version of this build, for --version, the boot line and the -p header. Static strings. */
#ifndef NS_VERSION_H
#define NS_VERSION_H

/* The release, "x.y.z" (CMake's project version). */
const char *ns_version(void);
/* The git revision the binary was built from ("0123456789ab", with "-dirty" when the tree had
 * uncommitted changes; "unknown" outside a git checkout). */
const char *ns_git_revision(void);
/* "mqnamesrv x.y.z (git REV)". */
const char *ns_version_line(void);

#endif
