/* Fuzzes nsadmin's client reading a reply (tools/nsadmin/client.c): the input is what the
 * peer sends back on the connection before closing it, so every kind of bad peer is one
 * input: an HTTP server, a frame cut short, a length past the limit, frames that are not the
 * reply, a header that does not decode. A call either gets the response to its own request or
 * fails with a reason; nothing else. The same bytes then answer the controller requests of
 * nsadmin (1005, 1002, 1006): their header fields and bodies decode or fail with a reason. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "client.h"
#include "fuzz.h"

/* A connection whose peer has sent data and ended its side (NULL when no socket pair). */
static nsa_conn_t *peer_said(const uint8_t *data, size_t size, const nsa_client_cfg_t *cfg,
                             int *peer)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return NULL;
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
    char err[NSA_ERR_MAX];
    nsa_conn_t *c = nsa_conn_adopt(cfg, sv[0], "peer:1", "peer", err, sizeof(err));
    FUZZ_CHECK(c != NULL);
    *peer = sv[1];
    return c;
}

/* An outcome is one of three, with what it promises. */
static void check_result(nsa_outcome_t o, const nsa_result_t *res)
{
    FUZZ_CHECK(o == res->outcome);
    if (o == NSA_FAILED)
        FUZZ_CHECK(res->reason[0] != '\0');
    else if (o == NSA_ANSWERED)
        FUZZ_CHECK(res->code != 0);
    else
        FUZZ_CHECK(o == NSA_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nsa_client_cfg_t cfg;
    nsa_client_cfg_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.max_reply = 1 << 16;
    int peer;
    nsa_conn_t *c = peer_said(data, size, &cfg, &peer);
    if (c == NULL)
        return 0;
    ns_cmd_t req;
    nsa_request_init(&req, 105);
    ns_cmd_ext_set(&req, "topic", "T");
    nsa_reply_t reply;
    char err[NSA_ERR_MAX] = "";
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
    close(peer);

    /* The same bytes as the answer of each controller request (the first request of a
     * connection has opaque 1 whatever its code): header fields and bodies decoded as
     * nsadmin's controller commands read them. */
    nsa_result_t res;
    if ((c = peer_said(data, size, &cfg, &peer)) != NULL) {
        nsa_ctl_meta_t m;
        nsa_outcome_t o = nsa_ctl_get_metadata(c, &m, &res);
        check_result(o, &res);
        if (o == NSA_OK)
            nsa_ctl_meta_free(&m);
        nsa_close(c);
        close(peer);
    }
    if ((c = peer_said(data, size, &cfg, &peer)) != NULL) {
        nsa_elect_t e;
        nsa_outcome_t o = nsa_ctl_elect_master(c, "C", "b", 2, &e, &res);
        check_result(o, &res);
        if (o == NSA_OK)
            nsa_elect_free(&e);
        nsa_close(c);
        close(peer);
    }
    if ((c = peer_said(data, size, &cfg, &peer)) != NULL) {
        nsa_strlist_t names = {0};
        nsa_strlist_push(&names, "b");
        nsa_sync_state_data_t d;
        nsa_outcome_t o = nsa_ctl_get_sync_state_data(c, &names, &d, &res);
        check_result(o, &res);
        if (o == NSA_OK)
            nsa_sync_state_data_free(&d);
        nsa_strlist_free(&names);
        nsa_close(c);
        close(peer);
    }
    return 0;
}
