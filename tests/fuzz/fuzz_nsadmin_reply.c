/* Fuzzes nsadmin's client reading a reply (tools/nsadmin/client.c): the input is what the
 * peer sends back on the connection before closing it, so every kind of bad peer is one
 * input: an HTTP server, a frame cut short, a length past the limit, frames that are not the
 * reply, a header that does not decode. A call either gets the response to its own request or
 * fails with a reason; nothing else. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    int big = 1 << 20;
    (void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    (void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
    size_t sent = 0;
    while (sent < size) {
        ssize_t n = write(sv[1], data + sent, size - sent);
        if (n <= 0)
            break;
        sent += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR); /* the peer ends its reply (and still takes our request) */

    nsa_client_cfg_t cfg;
    nsa_client_cfg_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.max_reply = 1 << 16;
    char err[NSA_ERR_MAX];
    nsa_conn_t *c = nsa_conn_adopt(&cfg, sv[0], "peer:1", "peer", err, sizeof(err));
    FUZZ_CHECK(c != NULL);
    ns_cmd_t req;
    nsa_request_init(&req, 105);
    ns_cmd_ext_set(&req, "topic", "T");
    nsa_reply_t reply;
    err[0] = '\0';
    int rc = nsa_call(c, &req, &reply, err, sizeof(err));
    if (rc == 0) {
        FUZZ_CHECK(reply.cmd.flag & NS_FLAG_RESPONSE);
        FUZZ_CHECK(reply.cmd.opaque == req.opaque);
        FUZZ_CHECK(reply.cmd.body_len == 0 ||
                   (reply.cmd.body >= reply.frame.data &&
                    reply.cmd.body + reply.cmd.body_len <= reply.frame.data + reply.frame.len));
        nsa_reply_free(&reply);
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
    ns_cmd_free(&req);
    nsa_close(c);
    close(sv[1]);
    return 0;
}
