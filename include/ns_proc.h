/* Request processing: the table of request codes and the dispatcher. Handlers read a decoded
 * request and fill a response; they never touch sockets, so every code is tested without a
 * loop. Called on the I/O loops (the codes whose row is marked LOOP, unless their connection
 * has a request at the worker: they then queue behind it) and on the worker thread (every other
 * request): handlers share state only through the route table (its rwlock and writer mutex),
 * the KV store (its two mutexes) and the config (atomic RUNTIME fields, its mutex). */
#ifndef NS_PROC_H
#define NS_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "ns_acl.h"
#include "ns_cmd.h"
#include "ns_config.h"
#include "ns_kv.h"
#include "ns_route.h"

/* RocketMQ RequestCode values served by the NameServer. */
enum {
    NS_REQ_PUT_KV_CONFIG = 100,
    NS_REQ_GET_KV_CONFIG = 101,
    NS_REQ_DELETE_KV_CONFIG = 102,
    NS_REQ_REGISTER_BROKER = 103,
    NS_REQ_UNREGISTER_BROKER = 104,
    NS_REQ_GET_ROUTEINFO_BY_TOPIC = 105,
    NS_REQ_GET_BROKER_CLUSTER_INFO = 106,
    NS_REQ_WIPE_WRITE_PERM_OF_BROKER = 205,
    NS_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    NS_REQ_DELETE_TOPIC_IN_NAMESRV = 216,
    NS_REQ_REGISTER_TOPIC_IN_NAMESRV = 217,
    NS_REQ_GET_KVLIST_BY_NAMESPACE = 219,
    NS_REQ_GET_TOPICS_BY_CLUSTER = 224,
    NS_REQ_GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
    NS_REQ_GET_UNIT_TOPIC_LIST = 311,
    NS_REQ_GET_HAS_UNIT_SUB_TOPIC_LIST = 312,
    NS_REQ_GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313,
    NS_REQ_UPDATE_NAMESRV_CONFIG = 318,
    NS_REQ_GET_NAMESRV_CONFIG = 319,
    NS_REQ_QUERY_DATA_VERSION = 322,
    NS_REQ_ADD_WRITE_PERM_OF_BROKER = 327,
    NS_REQ_GET_BROKER_MEMBER_GROUP = 901,
    NS_REQ_BROKER_HEARTBEAT = 904,
    NS_REQ_NOTIFY_MIN_BROKER_ID_CHANGE = 905, /* sent by us to brokers (notifier.c) */
};

/* RequestCode values of the controller (RocketMQ 5.5.0, RIP-44), served on the controller port
 * (ns_service_t) by the embedded controller (ns_ctl.h). */
enum {
    NS_CTL_REQ_BROKER_HEARTBEAT = 904,            /* oneway from every broker, any node */
    NS_CTL_REQ_ALTER_SYNC_STATE_SET = 1001,       /* the master broker */
    NS_CTL_REQ_ELECT_MASTER = 1002,               /* a broker, mqadmin electMaster */
    NS_CTL_REQ_REGISTER_BROKER = 1003,            /* a broker */
    NS_CTL_REQ_GET_REPLICA_INFO = 1004,           /* a broker, every 5 s */
    NS_CTL_REQ_GET_METADATA_INFO = 1005,          /* brokers and mqadmin, any node */
    NS_CTL_REQ_GET_SYNC_STATE_DATA = 1006,        /* mqadmin getSyncStateSet */
    NS_CTL_REQ_NOTIFY_BROKER_ROLE_CHANGED = 1008, /* sent by us to brokers, oneway */
    NS_CTL_REQ_UPDATE_CONTROLLER_CONFIG = 1009,   /* mqadmin, any node */
    NS_CTL_REQ_GET_CONTROLLER_CONFIG = 1010,      /* mqadmin, any node */
    NS_CTL_REQ_CLEAN_BROKER_DATA = 1011,          /* mqadmin cleanBrokerMetadata */
    NS_CTL_REQ_GET_NEXT_BROKER_ID = 1012,         /* a broker registering */
    NS_CTL_REQ_APPLY_BROKER_ID = 1013,            /* a broker registering */
};

/* RocketMQ ResponseCode values the NameServer answers with. */
enum {
    NS_RES_SUCCESS = 0,
    NS_RES_SYSTEM_ERROR = 1,
    NS_RES_SYSTEM_BUSY = 2,
    NS_RES_REQUEST_CODE_NOT_SUPPORTED = 3,
    NS_RES_NO_PERMISSION = 16,
    NS_RES_TOPIC_NOT_EXIST = 17,
    NS_RES_QUERY_NOT_FOUND = 22,
    NS_RES_GO_AWAY = 1500, /* graceful shutdown: "please go away" (clients after 5.3.1) */
};

/* An answer that comes later. The requests whose changes are acknowledged only once they are
 * on disk (PUT_KV_CONFIG, DELETE_KV_CONFIG, UPDATE_NAMESRV_CONFIG) would otherwise hold the
 * thread that runs them for a file write and its fsync; the worker offers each request one of
 * these instead (ns_ctx_t.later). A handler that takes it (ns_proc_answer_later) returns at
 * once; whatever finishes its work (the persister's thread) fills the response and calls
 * ns_proc_later_done, which logs and counts the request as the dispatcher would and hands the
 * answer to the runner. Without one (the I/O loops, tests) handlers wait for the disk.
 *
 * Two holds keep the request alive: the runner's, released with ns_proc_later_release once it
 * is done with the request, and the handler's, released by ns_proc_later_done; the last one
 * calls `answered`, on whichever thread that is. */
typedef struct ns_proc_later ns_proc_later_t;
typedef void ns_proc_answered_fn(ns_proc_later_t *later, bool send);
struct ns_proc_later {
    /* set by the runner */
    ns_proc_answered_fn *answered; /* the answer is in resp (send: not oneway); any thread */
    ns_cmd_t *resp;                /* the response the handler fills */
    /* set by the dispatcher before the handler runs */
    int holds;                     /* atomic: 1 (the runner's), 2 once a handler took it */
    const char *name;              /* the request's name, for the log line */
    const char *peer;              /* the requester (the runner keeps it alive) */
    unsigned slot;                 /* the request's metrics slot */
    int32_t code, opaque, version; /* of the request */
    bool oneway;                   /* no reply is sent */
    bool binary;                   /* ROCKETMQ header (for the log line) */
    uint64_t t0;                   /* timing start (ns_metrics_request) */
};

/* What a handler may use. Built by the server per request (or by a test). */
typedef struct ns_ctx {
    ns_route_t *route;   /* the route table */
    ns_kv_t *kv;         /* the KV store */
    ns_config_t *config; /* the live configuration */
    uint64_t conn_id;    /* the connection the request came in on (0 in tests: none) */
    const char *peer;    /* "ip:port" of the requester, for logs */
    uint64_t now_ms;     /* monotonic clock at dispatch */
    uint64_t start_ms;   /* monotonic clock when the server started (needWaitForService) */
    ns_buf_t *scratch;   /* a buffer handlers may reuse across requests (owned by the loop that
                            dispatches, one thread at a time), NULL = none */
    bool going_away;     /* graceful shutdown (enableShutdownGracefully) is under way */
    ns_acl_t *acl;       /* aclEnable: the access check the dispatcher runs; NULL = off */
    uint64_t t0;         /* ns_metrics_clock() when the request was queued for the worker;
                               0 = from ns_metrics_request_start() (the I/O loops' batches) */
    struct ns_route_cache *route_cache; /* the dispatching loop's answer cache (owned by that
                                           thread, ns_route_cache.h); NULL = none */
    ns_proc_later_t *later; /* the runner can take a later answer (above); NULL = it cannot */
    bool deferred;          /* set by ns_proc_answer_later: the answer comes later */
} ns_ctx_t;

/* For a handler whose work ends on another thread: returns the request's later answer (and
 * marks the request deferred: the dispatcher returns without an answer), or NULL when the
 * runner cannot wait (the handler then does its work before returning). */
ns_proc_later_t *ns_proc_answer_later(ns_ctx_t *ctx);

/* The handler's work has ended and later->resp holds the answer (any thread): logs and counts
 * the request, and hands the answer to the runner once the runner let go too. */
void ns_proc_later_done(ns_proc_later_t *later);

/* The runner is done with a deferred request (its thread): the answer goes out once the
 * handler's work has ended too (maybe right here). */
void ns_proc_later_release(ns_proc_later_t *later);

/* Requests above this version (MQVersion V5_3_1) understand GO_AWAY and are sent elsewhere
 * during a graceful shutdown; older ones are still served, as Java does. */
#define NS_VERSION_V5_3_1 475

/* A handler: reads req, fills resp->code, remark, ext fields and body. Returns 0, or a
 * negative NS_E* for an internal failure (the dispatcher then answers SYSTEM_ERROR). */
typedef int ns_proc_fn(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp);

/* What the server must know of a request code besides where it runs: the flags of its row.
 * Any request may wait at the worker when its connection closes (once a connection has a
 * request there, its later ones queue behind it), so every row says what happens to it then:
 * exactly one of NS_PROC_OUTLIVES_CONN and NS_PROC_ENDS_WITH_CONN (unit.proc checks). */
enum {
    /* A write whose effect outlives its connection (the KV store, topics, write permissions,
     * the config, an unregistration): it still runs when its connection closed while it
     * waited, unless the server is shutting down. */
    NS_PROC_OUTLIVES_CONN = 1u << 0,
    /* Nothing of it outlives its connection: a read (its reply is all it does), a heartbeat
     * (the next one repeats it), a registration (the close unregisters what it registered). It
     * comes back unrun when its connection closed while it waited. */
    NS_PROC_ENDS_WITH_CONN = 1u << 1,
    /* Proves the broker named by its clusterName and brokerAddr alive: while it waits at the
     * worker, the inactive-broker scan spares that broker. */
    NS_PROC_PROVES_ALIVE = 1u << 2,
    /* Registers brokers on its connection (a worker row, never LOOP): the connection's close
     * unregisters them, as Java's onChannelDestroy does; and its answer decides whether the
     * connection is a known broker's (SUCCESS) or a stranger's (any other code): the worker lane
     * of its later requests and the budgets' reserve. */
    NS_PROC_REGISTERS = 1u << 3,
    /* A row of the controller's service (ns_service_t): the code is served on the controller
     * port, by the embedded controller (ns_ctl.h) on its own thread, not by a handler here
     * (its fn is NULL). The controller answers every request it is handed, so the close
     * decision above is what the request does, not what the worker would do with it. */
    NS_PROC_CONTROLLER = 1u << 4,
    /* The row's access class is the admin's for a request whose designateElect is true (1002
     * from mqadmin electMaster, which chooses the master); a broker's own election request
     * keeps the row's class. */
    NS_PROC_ADMIN_WHEN_DESIGNATED = 1u << 5,
    /* Its handler may answer later (ns_proc_answer_later): a write whose answer waits for the
     * disk. On the worker every request is offered a later answer; a LOOP row with this flag
     * is run on its I/O loop with one of its own (conn.c), outside the worker's queue, so that
     * a busy worker never holds it, and its connection reads nothing more until the answer is
     * back, so that its answers keep their order. */
    NS_PROC_ANSWERS_LATER = 1u << 6,
};

/* What a listener serves; its connections inherit it (docs/controller.md). A code whose row is
 * not of the connection's service answers 3 " request type N not supported", as Java's two
 * remoting servers (the NameServer's, the controller's) answer what they have no processor
 * for. */
typedef enum ns_service {
    NS_SERVICE_NAMESRV = 0,    /* listenPort: the NameServer's codes */
    NS_SERVICE_CONTROLLER = 1, /* the controller port (controllerDLegerPeers): its codes and
                                  the Raft peers' connections */
} ns_service_t;

typedef struct ns_proc_entry {
    int32_t code;       /* NS_REQ_*, NS_CTL_REQ_* */
    const char *name;   /* RequestCode name, for logs and stats */
    ns_proc_fn *fn;     /* handler; NULL for the controller's rows */
    bool on_loop;       /* cheap and bounded (no body to decode, no write lock, no disk): the
                           server runs it on the I/O loop that read it; else on its worker */
    ns_acl_class_t acl; /* who may send it when ACL is on (ns_acl.h) */
    unsigned flags;     /* NS_PROC_* above */
} ns_proc_entry_t;

/* Returns the NameServer's row for a code, or NULL when the code is not served. */
const ns_proc_entry_t *ns_proc_lookup(int32_t code);

/* Returns the row of `code` in the service's part of the table, or NULL when that service does
 * not serve it (904 is a row of both: the NameServer's and the controller's heartbeat). */
const ns_proc_entry_t *ns_proc_lookup_service(ns_service_t service, int32_t code);

/* The i-th row of the NameServer's table (in code order; the request metrics' slots), NULL
 * past its end. */
const ns_proc_entry_t *ns_proc_entry_at(size_t i);

/* The i-th row of the controller's (in code order), NULL past its end. */
const ns_proc_entry_t *ns_proc_controller_entry_at(size_t i);

/* Who may send `req` (a request of `entry`'s row) when ACL is on: the row's class, or the
 * admin's (NS_PROC_ADMIN_WHEN_DESIGNATED). */
ns_acl_class_t ns_proc_acl_class(const ns_proc_entry_t *entry, const ns_cmd_t *req);

/* The gate every request passes before it runs, on either service: a code not served (entry
 * NULL) answers 3, ACL refusals 16 (below), and during a graceful shutdown the NameServer's
 * answer GO_AWAY (ctx->going_away; the server leaves it false on controller connections).
 * Returns true when the request may run; false with *resp (initialised here, as
 * ns_proc_reply_init) the answer. Counts nothing: the caller does. */
bool ns_proc_admit(ns_ctx_t *ctx, const ns_proc_entry_t *entry, const ns_cmd_t *req,
                   ns_cmd_t *resp);

/* Fills *resp (initialised here) as the reply frame of req: opaque copied, flag = response,
 * language JAVA, version NS_SERVER_VERSION, serialize type mirrored from the request. */
void ns_proc_reply_init(const ns_cmd_t *req, ns_cmd_t *resp);

/* Whether the server may run the request of `entry` (from ns_proc_lookup) on an I/O loop: its
 * on_loop, or true for a code that is not served (NULL: the answer is a fixed error). */
bool ns_proc_runs_on_loop(const ns_proc_entry_t *entry);

/* The NS_PROC_* flags of `entry` (from ns_proc_lookup); a code that is not served (NULL) has
 * NS_PROC_ENDS_WITH_CONN only: its error reply is all it does. */
unsigned ns_proc_flags(const ns_proc_entry_t *entry);

/* Runs `req` through the table and fills `resp` (initialised by the callee): opaque copied,
 * flag = response, language JAVA, version NS_SERVER_VERSION, serialize type mirrored from the
 * request. While ctx->going_away, any code (known or not) from a peer newer than V5_3_1 answers
 * 1500 "please go away" without running; else an unknown code answers 3 " request type N not
 * supported"; with ctx->acl, a request its class does not admit answers 16 NO_PERMISSION with
 * the reason and does not run.
 * Logs one DEBUG line per request and counts it (ns_metrics_request). Returns true when a
 * response must be sent, false for oneway requests (resp is then freed already). */
bool ns_proc_dispatch(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp);
/* With ctx->later, a handler may defer its answer: ctx->deferred is then set and the dispatcher
 * returns false without logging or counting; the caller must not touch resp, and releases the
 * request with ns_proc_later_release once it is done with req. */

/* ns_proc_dispatch for a caller that has looked the code up already (the server, once per
 * frame): `entry` must be ns_proc_lookup(req->code), a NameServer row. */
bool ns_proc_dispatch_entry(ns_ctx_t *ctx, const ns_proc_entry_t *entry, const ns_cmd_t *req,
                            ns_cmd_t *resp);

#endif
