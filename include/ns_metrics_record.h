/* The metrics series and the per-thread shards they are counted in: the lists of every series,
 * their ids, and the out-of-line half of recording (metrics_record.c). Code that counts includes
 * ns_metrics.h, whose inline fast paths call into this; only metrics_record.c includes this
 * header alone, so that the inline code and what it calls do not include each other.
 *
 * Every series is one row of the lists below. Adding one is that row plus one
 * NS_METRIC_INC(ID) / NS_METRIC_ADD(ID, n) where the event happens. Rows of one family (same
 * name) are adjacent; the first row of a family carries its HELP text, the others "".
 * Labels are constant text (`reason="idle"`): no label value ever comes from a peer, so the
 * number of series is fixed at compile time.
 *
 * Threads: every thread counts into its own shard (allocated on its first event, one cache-line
 * aligned block, never freed before ns_metrics_free_all), so the I/O loops never write a shared
 * cache line. A shard's owner updates it with a relaxed atomic store of (value + 1): a plain
 * load, add and store, no locked instruction. Readers sum every shard with relaxed loads; a sum
 * may miss an event in flight but never goes backwards. Any thread may count, without init. */
#ifndef NS_METRICS_RECORD_H
#define NS_METRICS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ID, family name, labels, help). Counters: `_total` names. */
#define NS_METRIC_COUNTERS(X)                                                                      \
    X(CONN_ACCEPTED, "mqnamesrv_connections_accepted_total", "",                                   \
      "Connections accepted on the remoting port.")                                                \
    X(CONN_CLOSED, "mqnamesrv_connections_closed_total", "",                                       \
      "Remoting connections closed, for any reason.")                                              \
    X(BYTES_IN, "mqnamesrv_received_bytes_total", "", "Bytes read from remoting connections.")     \
    X(BYTES_OUT, "mqnamesrv_sent_bytes_total", "",                                                 \
      "Reply bytes handed to remoting connections for sending.")                                   \
    X(FRAME_BAD_LENGTH, "mqnamesrv_frames_refused_total", "reason=\"bad_length\"",                 \
      "Frames refused (the connection is closed), by reason.")                                     \
    X(FRAME_BAD_TYPE, "mqnamesrv_frames_refused_total", "reason=\"bad_serialize_type\"", "")       \
    X(FRAME_BAD_HEADER_LEN, "mqnamesrv_frames_refused_total", "reason=\"bad_header_length\"", "")  \
    X(FRAME_BAD_HEADER, "mqnamesrv_frames_refused_total", "reason=\"undecodable_header\"", "")     \
    X(FRAME_TLS, "mqnamesrv_frames_refused_total", "reason=\"tls_handshake\"", "")                 \
    X(FRAME_PLAINTEXT, "mqnamesrv_frames_refused_total", "reason=\"plaintext_enforcing\"", "")     \
    X(FRAME_PROXY, "mqnamesrv_frames_refused_total", "reason=\"bad_proxy_header\"", "")            \
    X(FRAME_PROXY_UNTRUSTED, "mqnamesrv_frames_refused_total", "reason=\"untrusted_proxy\"", "")   \
    X(CUT_OUTPUT_LIMIT, "mqnamesrv_connections_cut_total", "reason=\"output_limit\"",              \
      "Remoting connections the server closed on its own, by reason.")                             \
    X(CUT_IDLE, "mqnamesrv_connections_cut_total", "reason=\"idle\"", "")                          \
    X(CUT_BROKER_EXPIRED, "mqnamesrv_connections_cut_total", "reason=\"broker_expired\"", "")      \
    X(CUT_SHUTDOWN_UNREAD, "mqnamesrv_connections_cut_total", "reason=\"shutdown_unread\"", "")    \
    X(CUT_PARTIAL_BUDGET, "mqnamesrv_connections_cut_total", "reason=\"partial_frame_budget\"",    \
      "")                                                                                          \
    X(CUT_FRAME_TOO_SLOW, "mqnamesrv_connections_cut_total", "reason=\"frame_too_slow\"", "")      \
    X(CUT_OUTPUT_BUDGET, "mqnamesrv_connections_cut_total", "reason=\"output_budget\"", "")        \
    X(CUT_HANDSHAKE_TIMEOUT, "mqnamesrv_connections_cut_total", "reason=\"handshake_timeout\"",    \
      "")                                                                                          \
    X(REPLY_BYTES_DROPPED, "mqnamesrv_reply_bytes_dropped_total", "",                              \
      "Reply bytes dropped when a peer that did not read its replies was cut off.")                \
    X(REGISTRATIONS, "mqnamesrv_broker_registrations_total", "",                                   \
      "REGISTER_BROKER requests applied to the route table.")                                      \
    X(REGISTRATIONS_REPEATED, "mqnamesrv_broker_registrations_repeated_total", "",                 \
      "REGISTER_BROKER requests that repeated the broker's last one exactly: liveness refreshed, " \
      "the body neither decoded nor applied.")                                                     \
    X(UNREG_REQUEST, "mqnamesrv_broker_unregistrations_total", "reason=\"request\"",               \
      "Brokers removed from the live broker table, by reason.")                                    \
    X(UNREG_CONN_CLOSE, "mqnamesrv_broker_unregistrations_total", "reason=\"connection_close\"",   \
      "")                                                                                          \
    X(UNREG_EXPIRY, "mqnamesrv_broker_unregistrations_total", "reason=\"expiry\"", "")             \
    X(UNREG_FENCED, "mqnamesrv_broker_unregistrations_fenced_total", "",                           \
      "UNREGISTER_BROKER requests not applied: the broker had registered again on a newer "        \
      "connection (route.md, Fencing).")                                                           \
    X(WORKER_SUBMITTED, "mqnamesrv_worker_jobs_submitted_total", "",                               \
      "Jobs queued for the worker thread (requests, connection closes, scans).")                   \
    X(WORKER_STARTED, "mqnamesrv_worker_jobs_started_total", "",                                   \
      "Jobs the worker thread has taken from its queue.")                                          \
    X(WORKER_DROPPED, "mqnamesrv_worker_jobs_dropped_total", "",                                   \
      "Queued requests of connections that had closed, taken out of the worker queue unrun.")      \
    X(PERSIST_FAIL_KV, "mqnamesrv_persist_failures_total", "store=\"kv\"",                         \
      "Failed writes of a persisted file, by store.")                                              \
    X(PERSIST_FAIL_CONFIG, "mqnamesrv_persist_failures_total", "store=\"config\"", "")             \
    X(PERSIST_FAIL_SNAPSHOT, "mqnamesrv_persist_failures_total", "store=\"route_snapshot\"", "")   \
    X(PERSIST_WRITES_KV, "mqnamesrv_persist_writes_total", "store=\"kv\"",                         \
      "Files written by the persister thread, by store (changes made during a write go together "  \
      "into the next one, so a burst of changes costs few writes).")                               \
    X(PERSIST_WRITES_CONFIG, "mqnamesrv_persist_writes_total", "store=\"config\"", "")             \
    X(ACCEPT_PAUSES, "mqnamesrv_accept_pauses_total", "",                                          \
      "Times the listener paused for want of a file descriptor (EMFILE, ENFILE); new connections " \
      "wait in the kernel's backlog meanwhile.")                                                   \
    X(STALL_SCAN, "mqnamesrv_stalls_detected_total", "timer=\"broker_scan\"",                      \
      "Periodic jobs that found the server had not run for much longer than their interval "       \
      "(SIGSTOP, a frozen VM): that time is not counted against brokers and connections.")         \
    X(STALL_IDLE, "mqnamesrv_stalls_detected_total", "timer=\"idle_check\"", "")                   \
    X(BROKERS_SPARED_STALL, "mqnamesrv_brokers_spared_after_stall_total", "",                      \
      "Brokers silent past their timeout that were not expired because the server itself had "     \
      "stalled: each gets a registration period to prove itself (route.md, Stalls).")              \
    X(CLOCK_JUMPS, "mqnamesrv_wall_clock_jumps_total", "",                                         \
      "Steps of the wall clock against the monotonic one (expiry runs on the monotonic clock and " \
      "ignores them; log times jump).")                                                            \
    X(SNAPSHOT_WRITES, "mqnamesrv_route_snapshot_writes_total", "",                                \
      "Route snapshots written (route.md, Snapshot).")                                             \
    X(TLS_HANDSHAKES_SERVER, "mqnamesrv_tls_handshakes_total", "side=\"server\"",                  \
      "TLS handshakes completed, by side (server: accepted connections; client: the notifier's).") \
    X(TLS_HANDSHAKES_CLIENT, "mqnamesrv_tls_handshakes_total", "side=\"client\"", "")              \
    X(TLS_RESUMED, "mqnamesrv_tls_resumed_handshakes_total", "",                                   \
      "TLS handshakes of accepted connections that resumed an earlier session (a ticket or a "     \
      "session id) instead of a full one; also counted in mqnamesrv_tls_handshakes_total.")        \
    X(TLS_FAILURES_SERVER, "mqnamesrv_tls_handshake_failures_total", "side=\"server\"",            \
      "TLS sessions that failed, timed out or ended before their handshake completed, by side.")   \
    X(TLS_FAILURES_CLIENT, "mqnamesrv_tls_handshake_failures_total", "side=\"client\"", "")        \
    X(TLS_RELOAD_OK, "mqnamesrv_tls_context_loads_total", "result=\"ok\"",                         \
      "TLS contexts built from the certificate files (start, file change, SIGHUP), by result.")    \
    X(TLS_RELOAD_ERROR, "mqnamesrv_tls_context_loads_total", "result=\"error\"", "")               \
    X(PROXY_HEADERS, "mqnamesrv_proxy_headers_total", "",                                          \
      "PROXY protocol headers taken (the connection's peer is the client they name).")             \
    X(ACL_FILE_LOAD_OK, "mqnamesrv_acl_file_loads_total", "result=\"ok\"",                         \
      "Loads of the ACL account file (start, change, SIGHUP), by result; an error keeps the "      \
      "accounts in force.")                                                                        \
    X(ACL_FILE_LOAD_ERROR, "mqnamesrv_acl_file_loads_total", "result=\"error\"", "")               \
    NS__METRIC_ACL_ROWS(X, ADMIN, "admin",                                                         \
                        "Requests refused by access control (aclEnable), by the request's class "  \
                        "and the reason.")                                                         \
    NS__METRIC_ACL_ROWS(X, BROKER, "broker", "")                                                   \
    NS__METRIC_ACL_ROWS(X, READ, "read", "")

/* The refusal reasons of ns_acl_check, one row each per request class (ns_acl_class_t), in the
 * order of ns_acl_refusal_t (ns_acl.h): the id of (class, reason) is the class's first row plus
 * the reason. */
#define NS__METRIC_ACL_ROWS(X, CLS, cls, help)                                                     \
    X(ACL_##CLS##_NO_ACCOUNTS, "mqnamesrv_acl_refusals_total",                                     \
      "class=\"" cls "\",reason=\"no_account_file\"", help)                                        \
    X(ACL_##CLS##_NO_ACCESS_KEY, "mqnamesrv_acl_refusals_total",                                   \
      "class=\"" cls "\",reason=\"missing_access_key\"", "")                                       \
    X(ACL_##CLS##_UNKNOWN_ACCESS_KEY, "mqnamesrv_acl_refusals_total",                              \
      "class=\"" cls "\",reason=\"unknown_access_key\"", "")                                       \
    X(ACL_##CLS##_NO_SIGNATURE, "mqnamesrv_acl_refusals_total",                                    \
      "class=\"" cls "\",reason=\"missing_signature\"", "")                                        \
    X(ACL_##CLS##_SIGN_ERROR, "mqnamesrv_acl_refusals_total",                                      \
      "class=\"" cls "\",reason=\"signature_error\"", "")                                          \
    X(ACL_##CLS##_BAD_SIGNATURE, "mqnamesrv_acl_refusals_total",                                   \
      "class=\"" cls "\",reason=\"bad_signature\"", "")                                            \
    X(ACL_##CLS##_NOT_ADMIN, "mqnamesrv_acl_refusals_total",                                       \
      "class=\"" cls "\",reason=\"not_admin\"", "")

/* X(ID, family name, labels, help). Histograms of durations, in seconds on the wire. */
#define NS_METRIC_HISTOGRAMS(X)                                                                    \
    X(LAT_ROUTE_READ, "mqnamesrv_request_duration_seconds", "class=\"route_read\"",                \
      "Time requests took in the server, by class: on an I/O loop from the end of the previous "   \
      "request of the same read, or the read, to the reply being ready; on the worker from "       \
      "their queueing (so the queue wait is included).")                                           \
    X(LAT_REGISTRATION, "mqnamesrv_request_duration_seconds", "class=\"registration\"", "")        \
    X(LAT_ADMIN, "mqnamesrv_request_duration_seconds", "class=\"admin\"", "")                      \
    X(LAT_OTHER, "mqnamesrv_request_duration_seconds", "class=\"other\"", "")                      \
    X(WORKER_WAIT, "mqnamesrv_worker_queue_wait_seconds", "",                                      \
      "Time jobs waited in the worker queue before the worker took them.")                         \
    X(PERSIST_KV, "mqnamesrv_persist_write_duration_seconds", "store=\"kv\"",                      \
      "Time one file write took (temporary file, fsync, rename, directory fsync), by store.")      \
    X(PERSIST_CONFIG, "mqnamesrv_persist_write_duration_seconds", "store=\"config\"", "")          \
    X(PERSIST_SNAPSHOT, "mqnamesrv_persist_write_duration_seconds", "store=\"route_snapshot\"", "")

#define NS__METRIC_ENUM(id, name, labels, help) NS_M_##id,
typedef enum ns_metric_id { NS_METRIC_COUNTERS(NS__METRIC_ENUM) NS_M_COUNT } ns_metric_id_t;
#define NS__HIST_ENUM(id, name, labels, help) NS_H_##id,
typedef enum ns_hist_id { NS_METRIC_HISTOGRAMS(NS__HIST_ENUM) NS_H_COUNT } ns_hist_id_t;

/* Histogram bucket upper bounds in microseconds (10 us .. 10 s), then +Inf. */
#define NS_METRICS_BUCKETS 19
extern const uint32_t ns_metrics_bucket_us[NS_METRICS_BUCKETS];

/* Requests are counted per (request slot, response slot). Request slot 0 is every code the
 * request table does not serve; slot i >= 1 is the table entry ns_proc_entry_at(i - 1). */
#define NS_METRICS_REQ_SLOTS 48
/* Response slots: the response codes the server answers with, then "other". */
#define NS_METRICS_RESP_SLOTS 9
extern const int32_t ns_metrics_resp_codes[NS_METRICS_RESP_SLOTS - 1];
/* The unknown request codes remembered per thread for the traffic line (their actual numbers;
 * Prometheus shows them all as one series). Codes past this many are still counted in slot 0. */
#define NS_METRICS_UNKNOWN_CODES 16
#define NS_METRICS_UNKNOWN_MERGED 64

typedef struct ns_metrics_shard {
    uint64_t counters[NS_M_COUNT];
    uint64_t requests[NS_METRICS_REQ_SLOTS][NS_METRICS_RESP_SLOTS];
    uint64_t replies[NS_METRICS_RESP_SLOTS]; /* responses actually sent (not oneway) */
    uint64_t hist[NS_H_COUNT][NS_METRICS_BUCKETS + 1];
    uint64_t hist_sum_ns[NS_H_COUNT];
    uint64_t chain_at; /* owner only: when the previous request of this thread finished */
    int32_t unknown_code[NS_METRICS_UNKNOWN_CODES]; /* valid where unknown_count > 0 */
    uint64_t unknown_count[NS_METRICS_UNKNOWN_CODES];
    struct ns_metrics_shard *next; /* list of every shard (immutable once linked) */
} __attribute__((aligned(64))) ns_metrics_shard_t;

extern __thread ns_metrics_shard_t *ns__metrics_tls __attribute__((tls_model("initial-exec")));
/* Allocates and links the calling thread's shard. */
ns_metrics_shard_t *ns__metrics_shard_new(void);
/* The head of the list of every shard, newest first (acquire load; the list only grows until
 * ns_metrics_free_all). For readers that sum the shards. */
ns_metrics_shard_t *ns__metrics_shards(void);

/* ---- switches (set once at startup, before other threads run) ---------------------------- */

/* counting: requests are counted per code (metrics or the traffic line want them);
 * timing: requests and worker jobs are timed (metrics want the histograms). Both off by
 * default: then a request costs one predictable branch in ns_metrics.h. */
void ns_metrics_configure(bool counting, bool timing);
extern bool ns__metrics_counting, ns__metrics_timing, ns__metrics_tsc;
/* CLOCK_MONOTONIC in nanoseconds: ns_metrics_clock() where the TSC is not used. */
uint64_t ns__metrics_clock_slow(void);
/* The out-of-line halves of ns_metrics_batch_begin() and ns_metrics_request() (ns_metrics.h). */
void ns__metrics_batch_begin(void);
void ns__metrics_request(unsigned slot, int32_t code, int32_t resp_code, bool replied, uint64_t t0);

/* Observes now - t0 in histogram h (t0 from ns_metrics_clock(); 0 = nothing). */
void ns_metrics_observe_since(ns_hist_id_t h, uint64_t t0);
/* Observes a duration in nanoseconds (any thread; tests). */
void ns_metrics_observe_ns(ns_hist_id_t h, uint64_t ns);

/* The latency class of a request code (NS_H_LAT_*). */
ns_hist_id_t ns_metrics_request_class(int32_t code);

/* Maps an ns_frame_status_t error to its NS_M_FRAME_* counter. */
ns_metric_id_t ns_metrics_frame_refusal(int frame_status);

/* Frees every shard (at exit, after every counting thread has stopped). Counting again later
 * starts from zero. */
void ns_metrics_free_all(void);

#endif
