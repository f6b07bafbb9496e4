/* sd_notify for Type=notify units (see ns_sd_notify.h). The socket protocol is documented in
 * sd_notify(3): datagrams on an AF_UNIX socket, path or abstract name in $NOTIFY_SOCKET. */
#include "ns_sd_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ns_log.h"

#ifdef NS_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

int ns_sd_notify_socket(const char *path, const char *state)
{
    struct sockaddr_un sun;
    size_t plen = path != NULL ? strlen(path) : 0;
    if (plen == 0 || plen >= sizeof(sun.sun_path) || (path[0] != '/' && path[0] != '@'))
        return -EINVAL;
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, path, plen);
    if (path[0] == '@')
        sun.sun_path[0] = '\0'; /* abstract namespace: no terminating NUL counts */
    socklen_t alen =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + (path[0] == '@' ? 0 : 1));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sun, alen) < 0)
        rc = -errno;
    close(fd);
    return rc;
}

void ns_sd_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0')
        return;
#ifdef NS_HAVE_LIBSYSTEMD
    int rc = sd_notify(0, state);
    if (rc < 0)
        NS_LOG_D("sd_notify: %s", strerror(-rc));
#else
    int rc = ns_sd_notify_socket(path, state);
    if (rc < 0)
        NS_LOG_D("sd_notify to %s: %s", path, strerror(-rc));
#endif
}
