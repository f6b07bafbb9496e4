/* The embedded controller (RocketMQ 5.x RIP-44, the DLedger flavour): automatic master
 * failover for brokers in controller mode, replicated by Raft among the controller peers
 * (controllerDLegerPeers). docs/controller.md describes it.
 *
 * The controller runs on its own thread and libuv loop (Raft I/O, timers). The server that
 * embeds it hands it decoded requests (ns_ctl_submit) and gets the replies back on its own
 * loop through a port (ns_port.h); it tells it which connections closed (brokers' liveness)
 * and hands it the Raft peers' connections accepted on the controller port
 * (ns_ctl_accept_raft). The controller hands back what it sends on its own initiative (1008
 * NOTIFY_BROKER_ROLE_CHANGED, connections to close) through hooks. The process must ignore
 * SIGPIPE (mqnamesrv's main does): Raft writes to peers that may have gone. */
#ifndef NS_CTL_H
#define NS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_config.h"
#include "ns_port.h"
#include "ns_proc.h"

/* The controller's request codes (NS_CTL_REQ_*) are in ns_proc.h, with its rows of the request
 * table. */

/* ResponseCode values of the controller. */
enum {
    NS_CTL_RES_FENCED_MASTER_EPOCH = 2000,
    NS_CTL_RES_FENCED_SYNC_STATE_SET_EPOCH = 2001,
    NS_CTL_RES_INVALID_MASTER = 2002,
    NS_CTL_RES_INVALID_REPLICAS = 2003,
    NS_CTL_RES_MASTER_NOT_AVAILABLE = 2004,
    NS_CTL_RES_INVALID_REQUEST = 2005,
    NS_CTL_RES_BROKER_NOT_ALIVE = 2006,
    NS_CTL_RES_NOT_LEADER = 2007,
    NS_CTL_RES_BROKER_METADATA_NOT_EXIST = 2008,
    NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA = 2009,
    NS_CTL_RES_BROKER_NEED_TO_BE_REGISTERED = 2010,
    NS_CTL_RES_MASTER_STILL_EXIST = 2011,
    NS_CTL_RES_ELECT_MASTER_FAILED = 2012,
    NS_CTL_RES_ALTER_SYNC_STATE_SET_FAILED = 2013,
    NS_CTL_RES_BROKER_ID_INVALID = 2014,
};

/* ---- peers ------------------------------------------------------------------------------- */

/* Peers, as many as a Raft group has room for. */
#define NS_CTL_MAX_PEERS 9
/* The longest peer id (DLedger ids are short: n0, n1 ...). */
#define NS_CTL_PEER_ID_MAX 63

typedef struct ns_ctl_peer {
    char id[NS_CTL_PEER_ID_MAX + 1]; /* DLedger's id: "n0" */
    char addr[64];                   /* "ip:port", the controller port of that peer */
} ns_ctl_peer_t;

/* Parses controllerDLegerPeers ("n0-127.0.0.1:9878;n1-127.0.0.1:9868", Java's format: items
 * split at ';', each "id-ip:port" split at its first '-'; blanks around items ignored). Each
 * address must be an IPv4 literal and a port (1..65535); ids unique, addresses unique. Returns
 * the count (>= 1) with peers[] filled, or 0 with a reason in err. */
size_t ns_ctl_parse_peers(const char *text, ns_ctl_peer_t *peers, size_t max, char *err,
                          size_t errlen);

/* ---- the controller ------------------------------------------------------------------------ */

typedef struct ns_ctl ns_ctl_t;

/* What the embedding server does for the controller. Each hook runs on the controller's
 * thread and must not block. */
typedef struct ns_ctl_hooks {
    /* Send cmd (a oneway request) to the broker at addr ("ip:port"); takes ownership of cmd
     * (free with ns_cmd_free). NULL: the controller drops it (logged). */
    void (*notify)(void *arg, const char *addr, ns_cmd_t *cmd);
    /* Close connection conn: a broker whose first heartbeat came on it expired (Java closes
     * the channel). NULL: nothing is closed. */
    void (*close_conn)(void *arg, uint64_t conn);
    void *arg;
} ns_ctl_hooks_t;

/* Where the Raft peers' connections come from. */
typedef enum ns_ctl_listen {
    NS_CTL_LISTEN_SELF = 0,  /* the controller listens on its peer address itself and takes
                                Raft connections only (tests, a controller without a server) */
    NS_CTL_LISTEN_HANDED = 1 /* the embedding server's listener hands them over
                                (ns_ctl_accept_raft) */
} ns_ctl_listen_t;

/* Checks, before anything listens, what ns_ctl_start would refuse (controllerType,
 * controllerDLegerPeers, controllerDLegerSelfId, a store path with Java DLedger or jRaft data);
 * makes the store directory. Returns 0, or NS_ECONFIG / -errno with the reason in err. */
int ns_ctl_check_config(const ns_config_t *cfg, char *err, size_t errlen);

/* Starts the controller of cfg (its ControllerConfig keys: controllerDLegerPeers, SelfId,
 * Group, controllerStorePath, the intervals): checks the store directory (Java DLedger or jRaft
 * data there refuses the start), opens the Raft store, starts the thread. Returns 0 with *out
 * set, or a negative NS_E* with a reason in err (nothing left running). cfg must outlive the
 * controller; only its RUNTIME fields are read after the start. */
int ns_ctl_start(const ns_config_t *cfg, ns_ctl_listen_t listen, const ns_ctl_hooks_t *hooks,
                 ns_ctl_t **out, char *err, size_t errlen);

/* Stops the thread (pending jobs come back answered SYSTEM_ERROR, their done callbacks run on
 * their ports' loops as usual), closes Raft and frees everything. NULL is a no-op. */
void ns_ctl_stop(ns_ctl_t *ctl);

/* A request for the controller. The submitter fills req (the job owns it), conn_id, peer,
 * port and the item's done callback; the controller fills resp and send (false: no reply, a
 * oneway request) and posts the item to its port. */
typedef struct ns_ctl_job {
    ns_port_item_t item; /* first member: the port's item (done gets it back) */
    ns_cmd_t req;        /* the decoded request; freed by the controller once read */
    ns_cmd_t resp;       /* the reply (opaque, flag, version set) when send */
    bool send;           /* a reply must be sent */
    uint64_t conn_id;    /* the connection it came on (0: none) */
    char peer[64];       /* "ip:port" of the sender, for logs */
    ns_port_t *port;     /* where done runs */
    void *data;          /* the submitter's */
    /* the controller's (not for the submitter) */
    struct ns_ctl_job *next; /* its queue */
    struct ns_ctl *ctl;      /* the controller it was submitted to */
    int32_t code;            /* req's code (req is moved out once read) */
    uint64_t submitted_us;   /* when it was submitted (the request_latency metric) */
} ns_ctl_job_t;

/* Queues a job; from the port's loop thread (it holds the port: ns_port_hold). Any thread may
 * submit; jobs of one submitter are answered in order. */
void ns_ctl_submit(ns_ctl_t *ctl, ns_ctl_job_t *job);

/* A connection closed (any thread): a broker whose heartbeats came on it is no longer alive
 * (Java's channel close), which may elect a new master at once. */
void ns_ctl_conn_closed(ns_ctl_t *ctl, uint64_t conn_id);

/* Whether the first bytes of a connection, first[0..len) with len <= 8, are (len 8) or may
 * still become (len < 8) a Raft peer's handshake: canonical/raft's little-endian u64 protocol
 * version 1, which no RocketMQ frame, TLS record or PROXY header can start with. */
bool ns_ctl_is_raft_handshake(const uint8_t *first, size_t len);

/* Takes an accepted connection whose first bytes are a Raft handshake (with
 * NS_CTL_LISTEN_HANDED; any thread): the controller owns fd from now on, and closes it at
 * once, logged, when peer_ip is not the address of a configured peer. */
void ns_ctl_accept_raft(ns_ctl_t *ctl, int fd, const char *peer_ip);

/* This peer's address in controllerDLegerPeers ("ip:port"): its port is the controller port. */
const char *ns_ctl_self_addr(const ns_ctl_t *ctl);

/* What the controller knows about itself, for /readyz and the metrics (any thread). */
typedef struct ns_ctl_status {
    int role;     /* Java's MemberState.Role in its metrics' numbers: 0 unknown, 1 candidate,
                     2 follower, 3 leader */
    bool leader;  /* Raft leader (Java's isLeader of 1005) */
    bool serving; /* leader and caught up (its barrier applied): writes are served */
    char leader_id[NS_CTL_PEER_ID_MAX + 1]; /* "" when no leader is known */
    uint64_t term;                          /* the Raft term */
    uint64_t applied;                       /* the last applied index */
} ns_ctl_status_t;
void ns_ctl_get_status(ns_ctl_t *ctl, ns_ctl_status_t *out);

/* Appends the controller's series to a Prometheus text page (any thread), under Java 5.5.0's
 * names (role, active_broker_num, request_total, request_latency_microseconds,
 * election_total, dledger_op_total, dledger_disk_usage_bytes: docs/controller.md, "Metrics"). */
void ns_ctl_metrics_write(ns_ctl_t *ctl, ns_buf_t *out);

#endif
