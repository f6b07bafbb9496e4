/* The version of this build: the CMake project version and the git revision it was built from
 * (cmake/version.cmake writes ns_version_gen.h at every build). */
#include "ns_version.h"

#include "ns_version_gen.h"

const char *ns_version(void)
{
    return NS_VERSION;
}

const char *ns_git_revision(void)
{
    return NS_GIT_REVISION;
}

const char *ns_version_line(void)
{
    return "mqnamesrv " NS_VERSION " (git " NS_GIT_REVISION ")";
}
