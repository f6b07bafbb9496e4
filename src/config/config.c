/* Configuration: one table of every property drives defaults, the -c loader, --set, -p, 319 and
 * 318. Field lists, defaults and declaration order are those of RocketMQ 5.5.0 (NamesrvConfig,
 * NettyServerConfig, NettyClientConfig; checked against the released jars and git HEAD). */
#include "ns_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_int.h"
#include "ns_atomic_file.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_persist.h"
#include "ns_proxy.h"
#include "ns_sniff.h"
#include "ns_strmap.h"
#include "ns_tls.h"
#include "ns_utf8.h"
#include "ns_version.h"

/* The writes of configStorePath (318). The changes and the requests waiting for them are under
 * cfg->lock; write_lock serialises the writes (the persister's, or the updating threads'
 * without one). A failed write keeps the change in force (as Java does) and answers its
 * requests with the error; the file is written again, after a growing pause, until the disk
 * takes it. */
typedef struct config_waiter {
    uint64_t seq;
    ns_persist_done_fn *done;
    void *arg;
} config_waiter_t;

struct ns_config_saving {
    pthread_mutex_t write_lock;
    uint64_t changes;         /* updates applied (cfg->lock) */
    uint64_t durable;         /* updates known on disk (cfg->lock) */
    config_waiter_t *waiters; /* oldest first (cfg->lock) */
    size_t waiter_count, waiter_cap;
    ns_persister_t *persister; /* NULL: the updating thread writes */
    int slot;
    unsigned failures; /* failed writes in a row (write_lock): one ERROR per streak */
    uint64_t retry_ms; /* the pause before the next try after a failure (write_lock) */
};

typedef enum opt_type { T_STR, T_BOOL, T_INT, T_LONG } opt_type_t;

typedef enum opt_group {
    G_NAMESRV, /* NamesrvConfig: -p, 319, 318 */
    G_SERVER,  /* NettyServerConfig: -p, 319, 318 */
    G_CLIENT,  /* NettyClientConfig: -p and -c only */
    G_CTL,     /* ControllerConfig: -c, -p (enableControllerInNamesrv), 1009, 1010; never 318 */
    G_JRAFT,   /* JraftConfig: as ControllerConfig (-p prints it in its jraftConfig place) */
    G_EXT,     /* mqnamesrv extensions */
} opt_group_t;

typedef enum opt_default {
    D_TEXT, /* def is the default text (NULL: a NULL string) */
    D_HOME, /* def is appended to the home directory */
    D_ENV,  /* def names an environment variable (unset: NULL) */
    D_NCPU, /* the number of usable CPUs */
} opt_default_t;

/* What UPDATE_NAMESRV_CONFIG (318, unauthenticated by default) may do with a key: the one
 * place that decides it (docs/config.md lists the classes). */
typedef enum opt_remote {
    R_NEXT_START = 0, /* 318 stores and persists it; it takes effect at the next start */
    R_RUNTIME,        /* 318 changes behaviour at once (readers use NS_CFG_GET) */
    R_NEVER,          /* names a file or directory, or switches a protection: 318 refuses the
                         whole update (16); only the -c file and --set may set it */
} opt_remote_t;

typedef struct opt {
    const char *key;   /* property name (Java's setter name) */
    const char *field; /* Java field name for -p and 319 when it differs, else NULL */
    opt_type_t type;
    opt_group_t group;
    opt_remote_t remote; /* what 318 may do with it */
    opt_default_t dkind; /* how def is read */
    const char *def;     /* default, as text */
    size_t off;          /* offset of the field in ns_config_t */
    int64_t min, max;    /* numbers: accepted range when strict (Java checks nothing) */
    int64_t rmin, rmax;  /* numbers: the part of it 318 may set (a safe range for limits) */
    const char *help;    /* what it does: the key reference (ns_config_key_at) is made of it */
} opt_t;

/* A password: printed as SECRET_MASK by -p, the boot log and 319 (318 still persists it). */
#define F_SECRET 1u
/* Java also reads it from tls.config.file (TlsHelper.extractTlsConfigFromFile). */
#define F_TLS_FILE 2u
/* 1009 UPDATE_CONTROLLER_CONFIG applies it at once (the controller reads it per use). */
#define F_CTL_RUNTIME 4u
#define SECRET_MASK "******"

static bool check_tls_mode(const char *v, char *err, size_t errlen)
{
    ns_tls_mode_t m;
    if (ns_tls_mode_parse(v, &m))
        return true;
    ns_set_err(err, errlen, "tls.server.mode: '%s' is not disabled, permissive or enforcing", v);
    return false;
}

static bool check_client_auth(const char *v, char *err, size_t errlen)
{
    ns_tls_client_auth_t a;
    if (ns_tls_client_auth_parse(v, &a))
        return true;
    ns_set_err(err, errlen, "tls.server.need.client.auth: '%s' is not none, optional or require",
               v);
    return false;
}

static bool check_proxy_acl(const char *v, char *err, size_t errlen)
{
    ns_proxy_acl_t acl;
    char why[200];
    if (ns_proxy_acl_parse(v, &acl, why, sizeof(why)))
        return true;
    ns_set_err(err, errlen, "proxyProtocolTrustedProxies: %s", why);
    return false;
}

#define OFF(f) offsetof(ns_config_t, f)
/* Number ranges: the -c file's, then 318's (the same unless REMOTE narrows it). */
#define RANGE(lo, hi) lo, hi, lo, hi
#define REMOTE(lo, hi, rlo, rhi) lo, hi, rlo, rhi
#define I32 RANGE(INT32_MIN, INT32_MAX)
#define I64 RANGE(INT64_MIN, INT64_MAX)
#define NOR RANGE(0, 0)

/* In Java declaration order within each group: that is the `-p` order. */
static const opt_t opts[] = {
    /* NamesrvConfig */
    {"rocketmqHome", NULL, T_STR, G_NAMESRV, R_NEVER, D_ENV, "ROCKETMQ_HOME", OFF(rocketmq_home),
     NOR,
     "RocketMQ installation directory; startup refuses to run when it is unset "
     "(exit status 254)."},
    {"kvConfigPath", NULL, T_STR, G_NAMESRV, R_NEVER, D_HOME, "/namesrv/kvConfig.json",
     OFF(kv_config_path), NOR, "KV config store file (PUT_KV_CONFIG and friends)."},
    {"configStorePath", NULL, T_STR, G_NAMESRV, R_NEVER, D_HOME, "/namesrv/namesrv.properties",
     OFF(config_store_path), NOR,
     "Where UPDATE_NAMESRV_CONFIG saves the settings; replaced by the -c path "
     "when -c is given."},
    {"productEnvName", NULL, T_STR, G_NAMESRV, 0, D_TEXT, "center", OFF(product_env_name), NOR,
     "Product environment name (clusterTest mode only; not supported by "
     "mqnamesrv)."},
    {"clusterTest", NULL, T_BOOL, G_NAMESRV, 0, D_TEXT, "false", OFF(cluster_test), NOR,
     "Cluster test mode: every request is a route query (not supported by "
     "mqnamesrv)."},
    {"orderMessageEnable", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "false",
     OFF(order_message_enable), NOR,
     "Add orderTopicConf from the ORDER_TOPIC_CONFIG KV namespace to topic "
     "routes."},
    {"returnOrderTopicConfigToBroker", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "true",
     OFF(return_order_topic_config_to_broker), NOR,
     "Answer REGISTER_BROKER with the ORDER_TOPIC_CONFIG namespace."},
    {"clientRequestThreadPoolNums", NULL, T_INT, G_NAMESRV, 0, D_TEXT, "8",
     OFF(client_request_thread_pool_nums), I32,
     "Java's route-query pool size: accepted and shown, not used (mqnamesrv "
     "runs event loops)."},
    {"defaultThreadPoolNums", NULL, T_INT, G_NAMESRV, 0, D_TEXT, "16",
     OFF(default_thread_pool_nums), I32, "Java's default pool size: accepted and shown, not used."},
    {"clientRequestThreadPoolQueueCapacity", NULL, T_INT, G_NAMESRV, 0, D_TEXT, "50000",
     OFF(client_request_thread_pool_queue_capacity), I32,
     "Java's route-query queue capacity: accepted and shown, not used."},
    {"defaultThreadPoolQueueCapacity", NULL, T_INT, G_NAMESRV, 0, D_TEXT, "10000",
     OFF(default_thread_pool_queue_capacity), I32,
     "Java's default queue capacity: accepted and shown, not used."},
    {"scanNotActiveBrokerInterval", NULL, T_LONG, G_NAMESRV, 0, D_TEXT, "5000",
     OFF(scan_not_active_broker_interval), REMOTE(1, INT64_MAX, 100, 60000),
     "Inactive-broker scan period, ms."},
    {"unRegisterBrokerQueueCapacity", NULL, T_INT, G_NAMESRV, 0, D_TEXT, "3000",
     OFF(unregister_broker_queue_capacity), I32, "Pending unregistrations before refusing more."},
    {"supportActingMaster", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "false",
     OFF(support_acting_master), NOR,
     "Let a slave act as master in routes when its master is gone."},
    {"enableAllTopicList", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "true",
     OFF(enable_all_topic_list), NOR, "Serve GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)."},
    {"enableTopicList", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "true", OFF(enable_topic_list),
     NOR, "Serve the topic list queries 224 and 311 to 313."},
    {"notifyMinBrokerIdChanged", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "false",
     OFF(notify_min_broker_id_changed), NOR,
     "Send NOTIFY_MIN_BROKER_ID_CHANGE (905) to the brokers of a group when "
     "its smallest broker id changes: a master registering tells its slaves; "
     "an acting-master group losing its smallest id tells the rest. The "
     "outgoing connections use the NettyClientConfig keys connectTimeoutMillis "
     "and clientChannelMaxIdleTimeSeconds."},
    {"enableControllerInNamesrv", NULL, T_BOOL, G_NAMESRV, R_NEVER, D_TEXT, "false",
     OFF(enable_controller_in_namesrv), NOR,
     "Start the embedded controller (RIP-44 automatic master failover) with the "
     "ControllerConfig keys of the same file (docs/controller.md); -p then prints them too. "
     "It serves the controller port of controllerDLegerSelfId's address next to listenPort."},
    {"needWaitForService", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "false",
     OFF(need_wait_for_service), NOR,
     "Refuse route queries during the first waitSecondsForService seconds "
     "(skipped after a warm start)."},
    /* with needWaitForService, route queries are refused this long after the start: 318 may not
     * make that years */
    {"waitSecondsForService", NULL, T_INT, G_NAMESRV, R_RUNTIME, D_TEXT, "45",
     OFF(wait_seconds_for_service), REMOTE(INT32_MIN, INT32_MAX, 0, 600),
     "Seconds after start before routes are served when needWaitForService is "
     "true."},
    {"deleteTopicWithBrokerRegistration", NULL, T_BOOL, G_NAMESRV, R_RUNTIME, D_TEXT, "false",
     OFF(delete_topic_with_broker_registration), NOR,
     "Drop the topics a broker no longer lists when it registers."},
    {"configBlackList", NULL, T_STR, G_NAMESRV, R_NEVER, D_TEXT,
     "configBlackList;configStorePath;kvConfigPath", OFF(config_black_list), NOR,
     "Keys UPDATE_NAMESRV_CONFIG may not change, ';'-separated (in addition to "
     "rocketmqHome, kvConfigPath, configStorePath and configBlackList)."},

    /* NettyServerConfig (listenPort: class default 0, NamesrvStartup sets 9876) */
    {"bindAddress", NULL, T_STR, G_SERVER, 0, D_TEXT, "0.0.0.0", OFF(bind_address), NOR,
     "Listen address."},
    {"listenPort", NULL, T_INT, G_SERVER, 0, D_TEXT, "9876", OFF(listen_port),
     REMOTE(0, 65535, 1, 65535), "Listen port (0: any free port, see portFile)."},
    {"serverWorkerThreads", NULL, T_INT, G_SERVER, 0, D_TEXT, "8", OFF(server_worker_threads), I32,
     "Java's Netty worker threads: accepted and shown, not used (see "
     "ioThreads)."},
    {"serverCallbackExecutorThreads", NULL, T_INT, G_SERVER, 0, D_TEXT, "0",
     OFF(server_callback_executor_threads), I32,
     "Java's callback threads: accepted and shown, not used."},
    {"serverSelectorThreads", NULL, T_INT, G_SERVER, 0, D_TEXT, "3", OFF(server_selector_threads),
     I32, "Java's selector threads: accepted and shown, not used (see ioThreads)."},
    {"serverOnewaySemaphoreValue", NULL, T_INT, G_SERVER, 0, D_TEXT, "256",
     OFF(server_oneway_semaphore_value), I32,
     "Java's oneway permits: accepted and shown, not used."},
    {"serverAsyncSemaphoreValue", NULL, T_INT, G_SERVER, 0, D_TEXT, "64",
     OFF(server_async_semaphore_value), I32, "Java's async permits: accepted and shown, not used."},
    {"serverChannelMaxIdleTimeSeconds", NULL, T_INT, G_SERVER, 0, D_TEXT, "120",
     OFF(server_channel_max_idle_time_seconds), REMOTE(INT32_MIN, INT32_MAX, 60, 86400),
     "Close a connection idle (no read, no write) this many seconds (0: "
     "never)."},
    {"serverSocketSndBufSize", NULL, T_INT, G_SERVER, 0, D_TEXT, "0",
     OFF(server_socket_snd_buf_size), REMOTE(INT32_MIN, INT32_MAX, 0, 64 << 20),
     "SO_SNDBUF of accepted connections, bytes (0: the operating system's "
     "default)."},
    {"serverSocketRcvBufSize", NULL, T_INT, G_SERVER, 0, D_TEXT, "0",
     OFF(server_socket_rcv_buf_size), REMOTE(INT32_MIN, INT32_MAX, 0, 64 << 20),
     "SO_RCVBUF of accepted connections, bytes (0: the operating system's "
     "default)."},
    {"writeBufferHighWaterMark", NULL, T_INT, G_SERVER, 0, D_TEXT, "0",
     OFF(write_buffer_high_water_mark), I32,
     "Netty's write-buffer high water mark: accepted and shown, not used (see "
     "connectionMaxPendingWriteBytes)."},
    {"writeBufferLowWaterMark", NULL, T_INT, G_SERVER, 0, D_TEXT, "0",
     OFF(write_buffer_low_water_mark), I32,
     "Netty's write-buffer low water mark: accepted and shown, not used."},
    {"serverSocketBacklog", NULL, T_INT, G_SERVER, 0, D_TEXT, "1024", OFF(server_socket_backlog),
     REMOTE(INT32_MIN, INT32_MAX, 1, 65535), "Listen backlog."},
    {"serverNettyWorkerGroupEnable", NULL, T_BOOL, G_SERVER, 0, D_TEXT, "true",
     OFF(server_netty_worker_group_enable), NOR,
     "Netty worker group: accepted and shown, not used."},
    {"serverPooledByteBufAllocatorEnable", NULL, T_BOOL, G_SERVER, 0, D_TEXT, "true",
     OFF(server_pooled_byte_buf_allocator_enable), NOR,
     "Netty pooled buffers: accepted and shown, not used."},
    {"enableShutdownGracefully", NULL, T_BOOL, G_SERVER, 0, D_TEXT, "false",
     OFF(enable_shutdown_gracefully), NOR,
     "Graceful shutdown: on SIGTERM or SIGINT keep serving for "
     "shutdownWaitTimeSeconds, answering GO_AWAY (1500) to clients newer than "
     "5.3.1 so that they move to another NameServer, then stop; a second "
     "signal stops at once."},
    {"shutdownWaitTimeSeconds", NULL, T_INT, G_SERVER, 0, D_TEXT, "30",
     OFF(shutdown_wait_time_seconds), REMOTE(INT32_MIN, INT32_MAX, 0, 300),
     "How long a graceful shutdown (enableShutdownGracefully) keeps serving, "
     "seconds."},
    {"useEpollNativeSelector", NULL, T_BOOL, G_SERVER, 0, D_TEXT, "false",
     OFF(use_epoll_native_selector), NOR,
     "Netty's epoll switch: accepted and shown, not used (libuv uses epoll)."},

    /* NettyClientConfig: printed by -p, accepted by -c, otherwise unused */
    {"clientWorkerThreads", NULL, T_INT, G_CLIENT, 0, D_TEXT, "4",
     OFF(client.client_worker_threads), I32, NULL},
    {"clientCallbackExecutorThreads", NULL, T_INT, G_CLIENT, 0, D_NCPU, NULL,
     OFF(client.client_callback_executor_threads), I32, NULL},
    {"clientOnewaySemaphoreValue", NULL, T_INT, G_CLIENT, 0, D_TEXT, "65535",
     OFF(client.client_oneway_semaphore_value), I32, NULL},
    {"clientAsyncSemaphoreValue", NULL, T_INT, G_CLIENT, 0, D_TEXT, "65535",
     OFF(client.client_async_semaphore_value), I32, NULL},
    {"connectTimeoutMillis", NULL, T_INT, G_CLIENT, 0, D_TEXT, "3000",
     OFF(client.connect_timeout_millis), I32, NULL},
    {"channelNotActiveInterval", NULL, T_LONG, G_CLIENT, 0, D_TEXT, "60000",
     OFF(client.channel_not_active_interval), I64, NULL},
    {"scanAvailableNameSrv", "isScanAvailableNameSrv", T_BOOL, G_CLIENT, 0, D_TEXT, "true",
     OFF(client.is_scan_available_name_srv), NOR, NULL},
    {"clientChannelMaxIdleTimeSeconds", NULL, T_INT, G_CLIENT, 0, D_TEXT, "120",
     OFF(client.client_channel_max_idle_time_seconds), I32, NULL},
    {"clientSocketSndBufSize", NULL, T_INT, G_CLIENT, 0, D_TEXT, "0",
     OFF(client.client_socket_snd_buf_size), I32, NULL},
    {"clientSocketRcvBufSize", NULL, T_INT, G_CLIENT, 0, D_TEXT, "0",
     OFF(client.client_socket_rcv_buf_size), I32, NULL},
    {"clientPooledByteBufAllocatorEnable", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "false",
     OFF(client.client_pooled_byte_buf_allocator_enable), NOR, NULL},
    {"clientCloseSocketIfTimeout", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "true",
     OFF(client.client_close_socket_if_timeout), NOR, NULL},
    {"useTLS", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "false", OFF(client.use_tls), NOR, NULL},
    {"socksProxyConfig", NULL, T_STR, G_CLIENT, 0, D_TEXT, "{}", OFF(client.socks_proxy_config),
     NOR, NULL},
    {"writeBufferHighWaterMark", NULL, T_INT, G_CLIENT, 0, D_TEXT, "0",
     OFF(client.write_buffer_high_water_mark), I32, NULL},
    {"writeBufferLowWaterMark", NULL, T_INT, G_CLIENT, 0, D_TEXT, "0",
     OFF(client.write_buffer_low_water_mark), I32, NULL},
    {"disableCallbackExecutor", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "false",
     OFF(client.disable_callback_executor), NOR, NULL},
    {"disableNettyWorkerGroup", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "false",
     OFF(client.disable_netty_worker_group), NOR, NULL},
    {"maxReconnectIntervalTimeSeconds", NULL, T_LONG, G_CLIENT, 0, D_TEXT, "60",
     OFF(client.max_reconnect_interval_time_seconds), I64, NULL},
    {"enableReconnectForGoAway", NULL, T_BOOL, G_CLIENT, 0, D_TEXT, "true",
     OFF(client.enable_reconnect_for_go_away), NOR, NULL},

    /* ControllerConfig (enableControllerInNamesrv=true; Java's field order). A key that is also
     * NamesrvConfig's sets both, each with its own default. 318 never changes any of them (it
     * may not touch the controller); 1009 changes the ones marked F_CTL_RUNTIME. */
    {"rocketmqHome", NULL, T_STR, G_CTL, R_NEVER, D_ENV, "ROCKETMQ_HOME", OFF(ctl.rocketmq_home),
     NOR, "The controller's copy of rocketmqHome."},
    {"configStorePath", NULL, T_STR, G_CTL, R_NEVER, D_HOME, "/controller/controller.properties",
     OFF(ctl.config_store_path), NOR,
     "Java's controller persists 1009 updates here; mqnamesrv does not persist them (shown "
     "only)."},
    {"controllerType", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "DLedger", OFF(ctl.controller_type),
     NOR,
     "DLedger: the controllerDLeger* keys (Raft on the peers' controller ports). jRaft is "
     "refused at start."},
    {"scanNotActiveBrokerInterval", NULL, T_LONG, G_CTL, R_NEVER, D_TEXT, "5000",
     OFF(ctl.scan_not_active_broker_interval), RANGE(1, INT64_MAX),
     "How often every controller drops the brokers whose heartbeats stopped (each broker's "
     "own heartbeatTimeoutMills, 10 s by default), ms."},
    {"controllerThreadPoolNums", NULL, T_INT, G_CTL, R_NEVER, D_TEXT, "16",
     OFF(ctl.controller_thread_pool_nums), I32,
     "Java's controller request threads: accepted and shown, not used (one controller thread)."},
    {"controllerRequestThreadPoolQueueCapacity", NULL, T_INT, G_CTL, R_NEVER, D_TEXT, "50000",
     OFF(ctl.controller_request_thread_pool_queue_capacity), I32,
     "Java's controller request queue: accepted and shown, not used."},
    {"controllerDLegerGroup", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, NULL,
     OFF(ctl.controller_dleger_group), NOR,
     "The controller group's name, answered as group by 1005."},
    {"controllerDLegerPeers", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, NULL,
     OFF(ctl.controller_dleger_peers), NOR,
     "The controllers, id-ip:port;...: each peer's controller port, which brokers and the other "
     "controllers (Raft) connect to. Required."},
    {"controllerDLegerSelfId", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, NULL,
     OFF(ctl.controller_dleger_self_id), NOR,
     "This controller's id among controllerDLegerPeers. Required."},
    {"mappedFileSize", NULL, T_INT, G_CTL, R_NEVER, D_TEXT, "1073741824", OFF(ctl.mapped_file_size),
     I32, "DLedger's data file size: accepted and shown, not used (the Raft log has its own)."},
    {"controllerStorePath", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "", OFF(ctl.controller_store_path),
     NOR,
     "The controller's Raft store (raft-<selfId> inside); empty: $HOME/DLedgerController. A "
     "directory with Java DLedger or jRaft data stops the start."},
    {"electMasterMaxRetryCount", NULL, T_INT, G_CTL, R_NEVER, D_TEXT, "3",
     OFF(ctl.elect_master_max_retry_count), I32,
     "Tries of the controller's own election after a master is gone (each failed try that "
     "finds nobody still moves the master epoch, as in Java). 1009 changes it at once."},
    {"enableElectUncleanMaster", NULL, T_BOOL, G_CTL, R_NEVER, D_TEXT, "false",
     OFF(ctl.enable_elect_unclean_master), NOR,
     "Elect a master outside the SyncStateSet when no member of it is alive (messages may be "
     "lost). 1009 changes it at once."},
    {"processReadEvent", "isProcessReadEvent", T_BOOL, G_CTL, R_NEVER, D_TEXT, "false",
     OFF(ctl.is_process_read_event), NOR,
     "Java logs an empty entry for every read; accepted and shown, not used (reads are served "
     "after the previous write is applied)."},
    {"notifyBrokerRoleChanged", NULL, T_BOOL, G_CTL, R_NEVER, D_TEXT, "true",
     OFF(ctl.notify_broker_role_changed), NOR,
     "Tell a broker set's live brokers of a new master (1008). 1009 changes it at once."},
    {"scanInactiveMasterInterval", NULL, T_LONG, G_CTL, R_NEVER, D_TEXT, "5000",
     OFF(ctl.scan_inactive_master_interval), RANGE(1, INT64_MAX),
     "How often the leader looks for sets whose master is dead while a member lives, ms."},
    {"metricsExporterType", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "DISABLE",
     OFF(ctl.metrics_exporter_type), NOR,
     "The controller's copy of metricsExporterType (the NameServer's exporter serves both)."},
    {"metricsGrpcExporterTarget", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "",
     OFF(ctl.metrics_grpc_exporter_target), NOR, "Java's OTLP target: accepted, not used."},
    {"metricsGrpcExporterHeader", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "",
     OFF(ctl.metrics_grpc_exporter_header), NOR, "Java's OTLP header: accepted, not used."},
    {"metricGrpcExporterTimeOutInMills", NULL, T_LONG, G_CTL, R_NEVER, D_TEXT, "3000",
     OFF(ctl.metric_grpc_exporter_time_out_in_mills), I64, "Java's OTLP timeout: not used."},
    {"metricGrpcExporterIntervalInMills", NULL, T_LONG, G_CTL, R_NEVER, D_TEXT, "60000",
     OFF(ctl.metric_grpc_exporter_interval_in_mills), I64, "Java's OTLP interval: not used."},
    {"metricLoggingExporterIntervalInMills", NULL, T_LONG, G_CTL, R_NEVER, D_TEXT, "10000",
     OFF(ctl.metric_logging_exporter_interval_in_mills), I64,
     "Java's log exporter interval: not used."},
    {"metricsPromExporterPort", NULL, T_INT, G_CTL, R_NEVER, D_TEXT, "5557",
     OFF(ctl.metrics_prom_exporter_port), I32,
     "The controller's copy of metricsPromExporterPort (the NameServer's exporter serves both)."},
    {"metricsPromExporterHost", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "",
     OFF(ctl.metrics_prom_exporter_host), NOR, "The controller's copy of metricsPromExporterHost."},
    {"metricsLabel", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "", OFF(ctl.metrics_label), NOR,
     "Java's extra metric labels: accepted, not used."},
    {"metricsInDelta", NULL, T_BOOL, G_CTL, R_NEVER, D_TEXT, "false", OFF(ctl.metrics_in_delta),
     NOR, "Java's delta temporality: accepted, not used."},
    {"configBlackList", NULL, T_STR, G_CTL, R_NEVER, D_TEXT, "configBlackList;configStorePath",
     OFF(ctl.config_black_list), NOR,
     "Keys 1009 may not change, ';'-separated (besides configBlackList, configStorePath and "
     "rocketmqHome)."},
    /* JraftConfig: Java's jRaft flavour, which mqnamesrv does not run (controllerType=jRaft is
     * refused at start): read, shown, not used. */
    {"jRaftElectionTimeoutMs", NULL, T_INT, G_JRAFT, R_NEVER, D_TEXT, "1000",
     OFF(ctl.jraft_election_timeout_ms), I32, "jRaft's election timeout, ms (not used)."},
    {"jRaftScanWaitTimeoutMs", NULL, T_INT, G_JRAFT, R_NEVER, D_TEXT, "1000",
     OFF(ctl.jraft_scan_wait_timeout_ms), I32, "jRaft's scan wait, ms (not used)."},
    {"jRaftSnapshotIntervalSecs", NULL, T_INT, G_JRAFT, R_NEVER, D_TEXT, "3600",
     OFF(ctl.jraft_snapshot_interval_secs), I32, "jRaft's snapshot interval, s (not used)."},
    {"jRaftGroupId", NULL, T_STR, G_JRAFT, R_NEVER, D_TEXT, "jRaft-Controller",
     OFF(ctl.jraft_group_id), NOR, "jRaft's group (not used)."},
    {"jRaftServerId", NULL, T_STR, G_JRAFT, R_NEVER, D_TEXT, "localhost:9880",
     OFF(ctl.jraft_server_id), NOR, "jRaft's own Raft address (not used)."},
    {"jRaftInitConf", NULL, T_STR, G_JRAFT, R_NEVER, D_TEXT,
     "localhost:9880,localhost:9881,localhost:9882", OFF(ctl.jraft_init_conf), NOR,
     "jRaft's Raft addresses (not used)."},
    {"jRaftControllerRPCAddr", NULL, T_STR, G_JRAFT, R_NEVER, D_TEXT,
     "localhost:9770,localhost:9771,localhost:9772", OFF(ctl.jraft_controller_rpc_addr), NOR,
     "jRaft's broker-facing addresses, in jRaftInitConf's order (not used)."},

    /* mqnamesrv extensions. frameMaxLength: Java's -Dcom.rocketmq.remoting.frameMaxLength
     * (16 MiB); the floor keeps room for any header we must read. connectionMaxPendingWriteBytes:
     * 64 MiB holds several full route replies for a slow reader, bounded so that a peer that
     * never reads cannot make us buffer without end. ioThreads: 256 is far above any useful
     * count of event loops. */
    {"frameMaxLength", NULL, T_LONG, G_EXT, 0, D_TEXT, "16777216", OFF(frame_max_length),
     REMOTE(1024, INT32_MAX, 1 << 20, 256 << 20),
     "Largest frame accepted from a peer, bytes; a longer one closes the "
     "connection. Java: -Dcom.rocketmq.remoting.frameMaxLength."},
    {"connectionMaxPendingWriteBytes", NULL, T_LONG, G_EXT, 0, D_TEXT, "67108864",
     OFF(max_conn_output_bytes), REMOTE(0, INT64_MAX, 1 << 20, 1 << 30),
     "Reply bytes queued to a peer that does not read before its connection is "
     "cut (0: no limit)."},
    {"logPath", NULL, T_STR, G_EXT, R_NEVER, D_HOME, "/logs/rocketmqlogs/namesrv.log",
     OFF(log_path), NOR, "Log file (empty: log to stdout only)."},
    {"logLevel", NULL, T_STR, G_EXT, R_RUNTIME, D_TEXT, "INFO", OFF(log_level), NOR,
     "Log level: ERROR, WARN, INFO or DEBUG."},
    {"portFile", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "", OFF(port_file), NOR,
     "Write the bound port number to this file once listening (empty: do not)."},
    {"ioThreads", NULL, T_INT, G_EXT, 0, D_TEXT, "0", OFF(io_threads), RANGE(0, 256),
     "I/O event-loop threads (0: one per CPU, right for a machine of its own); one more "
     "thread, the worker, runs registrations and every other write. On a small machine shared "
     "with other busy work, 1 gives more route reads per CPU-second (docs/performance.md, I/O "
     "loops)."},
    {"workerThreadNice", NULL, T_INT, G_EXT, R_NEVER, D_TEXT, "10", OFF(worker_thread_nice),
     RANGE(0, 19),
     "Nice value of the worker thread (registrations and every other write; the I/O loops keep "
     "the process's own). At 10 route reads get the CPU first when the CPUs are saturated. It "
     "weighs against every process of the host: where other busy work shares the machine, 0 "
     "gives registrations their full share (docs/architecture.md, The worker)."},

    /* Budgets (issue 13; docs/operations.md lists what each one does when it is hit). Every
     * one is process-wide or per peer, has a default that protects, and 318 may only tune it
     * within a range that still does; 0 ("none") only from the -c file. */
    {"serverMaxPartialFrameBytes", NULL, T_LONG, G_EXT, 0, D_TEXT, "268435456",
     OFF(max_partial_frame_bytes), REMOTE(0, INT64_MAX, 16 << 20, 16LL << 30),
     "Bytes of frames being received, all peers together; a large frame (over "
     "64 KiB) that does not fit is refused and its connection closed (0: no "
     "limit)."},
    {"frameReceiveTimeoutMillis", NULL, T_LONG, G_EXT, 0, D_TEXT, "30000",
     OFF(frame_receive_timeout_ms), REMOTE(0, INT64_MAX, 1000, 600000),
     "Time a frame has to arrive once its first bytes did, ms, counted while "
     "the server reads the connection; a slower one closes the connection (0: "
     "no limit)."},
    {"serverMaxWorkerQueueBytes", NULL, T_LONG, G_EXT, 0, D_TEXT, "67108864",
     OFF(max_worker_queue_bytes), REMOTE(0, INT64_MAX, 16 << 20, 4LL << 30),
     "Bytes of requests queued for the worker (registrations, writes, lists), "
     "all peers together; a request that does not fit waits for its "
     "connection's earlier ones, or is answered SYSTEM_BUSY (0: no limit)."},
    {"connectionMaxWorkerRequests", NULL, T_INT, G_EXT, 0, D_TEXT, "16",
     OFF(conn_max_worker_requests), REMOTE(1, 65536, 1, 1024),
     "Requests one connection may have queued for the worker; at the bound it "
     "is not read until half are back (its first request always goes)."},
    {"connectionMaxWorkerBytes", NULL, T_LONG, G_EXT, 0, D_TEXT, "4194304",
     OFF(conn_max_worker_bytes), REMOTE(0, INT64_MAX, 1 << 20, 1 << 30),
     "Bytes of requests one connection may have queued for the worker; at the "
     "bound it is not read until half are back (0: no limit)."},
    {"serverMaxPendingWriteBytes", NULL, T_LONG, G_EXT, 0, D_TEXT, "268435456",
     OFF(max_pending_write_bytes), REMOTE(0, INT64_MAX, 16 << 20, 16LL << 30),
     "Reply bytes queued for peers that do not read, all together; when a "
     "reply would not fit, the peer holding the most on its I/O loop is cut "
     "(0: no limit). See connectionMaxPendingWriteBytes for one peer."},
    {"registerBodyMaxInflatedBytes", NULL, T_LONG, G_EXT, R_RUNTIME, D_TEXT, "268435456",
     OFF(register_max_inflated), REMOTE(1 << 20, 4LL << 30, 1 << 20, 1 << 30),
     "Bytes a compressed REGISTER_BROKER body may inflate to; past it the "
     "registration is refused (Java's \"Failed to decode "
     "RegisterBrokerBody\")."},
    {"registerBodyMaxInflateRatio", NULL, T_INT, G_EXT, R_RUNTIME, D_TEXT, "100",
     OFF(register_max_ratio), REMOTE(0, 100000, 10, 1000),
     "Inflated bytes per compressed byte a REGISTER_BROKER body may reach once "
     "past 1 MiB (real bodies: 3 to 31); past it the registration is refused "
     "(0: no limit)."},
    {"registerBodyMaxCpuMillis", NULL, T_INT, G_EXT, R_RUNTIME, D_TEXT, "1000",
     OFF(register_max_cpu_ms), REMOTE(0, 3600000, 10, 60000),
     "CPU time decoding one compressed REGISTER_BROKER body may take, ms; past "
     "it the registration is refused (0: no limit)."},

    /* ACL (docs/operations.md, Security): protections and a file, so 318 may touch none. */
    {"aclEnable", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "false", OFF(acl_enable), NOR,
     "Check signed requests (RocketMQ's ACL RPC hook: AccessKey and Signature) "
     "against the account file: broker requests need a valid signature of any "
     "account, admin requests one of an account with admin: true; reads stay "
     "anonymous (see aclReadsRequireSignature). The 4.x broker's key. With "
     "aclEnable=true a missing or unreadable account file stops the start."},
    {"aclReadsRequireSignature", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "false",
     OFF(acl_reads_require_signature), NOR,
     "With aclEnable: route, list and config reads need a signature too."},
    {"aclPlainFile", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "", OFF(acl_plain_file), NOR,
     "The account file (the 4.x broker's plain_acl.yml format), relative to "
     "rocketmqHome unless absolute (empty: conf/plain_acl.yml); reread when it "
     "changes and on SIGHUP. conf/plain_acl.yml.example shows the format."},
    /* Monitoring (docs/operations.md). The exporter keys open, or move, a listening port: 318
     * may change none of them, not even for the next start. The traffic log's file is named by
     * trafficLogPath (never remote); switching the lines on takes effect at the next start. */
    {"metricsExporterType", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "DISABLE",
     OFF(metrics_exporter_type), NOR,
     "PROM: serve Prometheus metrics, /livez and /readyz over HTTP; DISABLE: "
     "no HTTP port at all (the default: a drop-in NameServer opens no port it "
     "was not asked for). RocketMQ 5.x's OTLP_GRPC and LOG are refused at "
     "start."},
    {"metricsPromExporterPort", NULL, T_INT, G_EXT, R_NEVER, D_TEXT, "5557",
     OFF(metrics_prom_exporter_port), RANGE(0, 65535),
     "Port of the exporter (0: any free port, logged at start)."},
    {"metricsPromExporterHost", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "",
     OFF(metrics_prom_exporter_host), NOR,
     "Address of the exporter, IPv4 or IPv6 (empty: every IPv4 address)."},
    {"trafficLogEnable", NULL, T_BOOL, G_EXT, R_NEXT_START, D_TEXT, "false",
     OFF(traffic_log_enable), NOR,
     "Write Java's per-second traffic lines (\"Port: 9876, RequestCode "
     "Distribution: {105:12, 103:1}\" and ResponseCode Distribution) to "
     "trafficLogPath, for log tooling that parses them."},
    {"trafficLogPath", NULL, T_STR, G_EXT, R_NEVER, D_HOME,
     "/logs/rocketmqlogs/namesrv_traffic.log", OFF(traffic_log_path), NOR,
     "File of the traffic lines (Java's namesrv_traffic.log)."},
    /* Route snapshot (docs/route.md, Snapshot). Switching it off removes a protection (clients
     * see no routes after a restart) and the path names a file: 318 may touch neither. The
     * interval applies at once, within a range that keeps it a periodic write; the maximum age
     * is read at the start, and 318 may not make it so short that no snapshot is ever used. */
    {"routeSnapshotEnable", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "true",
     OFF(route_snapshot_enable), NOR,
     "Keep a snapshot of the route table (brokers, topics, queue data, mappings, filter "
     "servers; not connections) and load it before listening: after a restart every broker is "
     "served at once and kept for its own heartbeat timeout until it registers again (Java "
     "answers TOPIC_NOT_EXIST until then). Written when the table changed, every "
     "routeSnapshotIntervalMillis, within a second of a change of brokers (one joins or leaves, "
     "a master changes), and at SIGTERM."},
    {"routeSnapshotPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "", OFF(route_snapshot_path), NOR,
     "The snapshot file. Empty: routeSnapshot.bin in kvConfigPath's directory."},
    {"routeSnapshotIntervalMillis", NULL, T_LONG, G_EXT, R_RUNTIME, D_TEXT, "10000",
     OFF(route_snapshot_interval_ms), REMOTE(100, 86400000, 1000, 3600000),
     "How often a changed route table is written, ms. A kill -9 loses at most this much of "
     "the latest topic changes; a change of brokers (one joins or leaves, a master changes) is "
     "written within a second whatever this says."},
    {"routeSnapshotMaxAgeMillis", NULL, T_LONG, G_EXT, R_NEXT_START, D_TEXT, "600000",
     OFF(route_snapshot_max_age_ms), REMOTE(1000, INT64_MAX, 60000, 86400000),
     "A snapshot written longer ago than this is not used (WARN, the table starts empty), ms."},
    /* Route answer cache (docs/performance.md, issue 16): applies at the next fill; 318 may
     * neither switch it off nor make it unbounded. */
    {"routeAnswerCacheMaxBytes", NULL, T_LONG, G_EXT, R_RUNTIME, D_TEXT, "8388608",
     OFF(route_answer_cache_max_bytes), REMOTE(0, INT64_MAX, 65536, 1073741824),
     "Bytes of complete route answers (GET_ROUTEINFO_BY_TOPIC bodies) kept for route reads, all "
     "I/O loops together: each loop keeps its share, the least recently used go first. An answer "
     "is kept until its topic's queue data or the broker data of one of its broker names change; "
     "about 1 KB per topic and JSON mode at four brokers per topic. A bound too small for the "
     "topics read costs about what no cache costs (fills only as often as hits pay for them); "
     "how to size it: docs/operations.md. 0: none."},

    /* TLS: Java's TlsSystemConfig system properties (-D there; -c, --set and tls.config.file
     * here), names and defaults as in Java 5.5.0. Never remote: they name files or switch a
     * protection. */
    {"tls.server.mode", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "permissive", OFF(tls.server_mode),
     NOR,
     "disabled (TLS refused), permissive (TLS and plaintext on one port) or "
     "enforcing (TLS only); anything else stops startup (Java silently takes "
     "permissive)."},
    {"tls.test.mode.enable", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "true",
     OFF(tls.test_mode_enable), NOR,
     "Test mode (Java's default): a self-signed certificate for \"localhost\" "
     "is made at start and tls.server.certPath/keyPath are ignored."},
    {"tls.server.certPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.server_cert_path),
     NOR, "Server certificate chain, PEM (outside test mode)."},
    {"tls.server.keyPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.server_key_path), NOR,
     "Server private key, PEM (PKCS#8 or traditional, encrypted with "
     "tls.server.keyPassword or not)."},
    {"tls.server.keyPassword", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL,
     OFF(tls.server_key_password), NOR, "Password of an encrypted server key (printed masked)."},
    {"tls.server.need.client.auth", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "none",
     OFF(tls.server_need_client_auth), NOR,
     "Ask clients for a certificate: none, optional or require (any case); "
     "anything else stops startup (Java takes none)."},
    {"tls.server.authClient", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "false",
     OFF(tls.server_auth_client), NOR,
     "Check client certificates against tls.server.trustCertPath (false: any "
     "certificate is taken)."},
    {"tls.server.trustCertPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL,
     OFF(tls.server_trust_cert_path), NOR,
     "CA certificates (PEM) client certificates must chain to (empty: the "
     "system's trust store)."},
    {"tls.ciphers", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.ciphers), NOR,
     "Cipher suites, comma-separated: Java/IANA names "
     "(TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256) or "
     "OpenSSL names (empty: OpenSSL's defaults)."},
    {"tls.protocols", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.protocols), NOR,
     "Protocols, comma-separated: TLSv1.3, TLSv1.2, TLSv1.1, TLSv1 (empty: "
     "OpenSSL's defaults)."},
    {"tls.config.file", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "/etc/rocketmq/tls.properties",
     OFF(tls.config_file), NOR,
     "A properties file of tls.* keys read after -c and --set, whose values "
     "win (missing: nothing read; empty: none)."},
    {"tls.enable", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "false", OFF(tls.enable), NOR,
     "The default of useTLS: the NOTIFY_MIN_BROKER_ID_CHANGE connections to "
     "brokers use TLS (Java: tls.enable if given, else whether tls.server.mode "
     "is enforcing)."},
    {"tls.client.certPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.client_cert_path),
     NOR, "The notifier's client certificate chain, PEM (not sent in test mode)."},
    {"tls.client.keyPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL, OFF(tls.client_key_path), NOR,
     "The notifier's client private key, PEM."},
    {"tls.client.keyPassword", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL,
     OFF(tls.client_key_password), NOR, "Password of an encrypted client key (printed masked)."},
    {"tls.client.authServer", NULL, T_BOOL, G_EXT, R_NEVER, D_TEXT, "false",
     OFF(tls.client_auth_server), NOR,
     "Check brokers' certificates against tls.client.trustCertPath (false: "
     "accept any)."},
    {"tls.client.trustCertPath", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, NULL,
     OFF(tls.client_trust_cert_path), NOR,
     "CA certificates (PEM) for brokers' certificates (empty: the system's "
     "trust store)."},
    /* Ours. 10 s is Netty's SslHandler handshake timeout. */
    {"tlsHandshakeTimeoutMillis", NULL, T_LONG, G_EXT, R_NEVER, D_TEXT, "10000",
     OFF(tls.handshake_timeout_ms), RANGE(100, 600000),
     "(mqnamesrv) A TLS handshake or PROXY protocol header begun but not "
     "finished in this many ms closes the connection (Netty's SslHandler waits "
     "10 s)."},
    /* Ours: session resumption (operations.md, TLS). Never remote: a longer lifetime keeps
     * ticket keys longer (less forward secrecy), and both are limits of what TLS may cost. 7200
     * s is OpenSSL's session timeout; 604800 s (7 days) is TLS 1.3's longest ticket lifetime. */
    {"tlsSessionTimeoutSeconds", NULL, T_LONG, G_EXT, R_NEVER, D_TEXT, "7200",
     OFF(tls.session_timeout_s), RANGE(0, 604800),
     "(mqnamesrv) How long a TLS session may be resumed after its full handshake, in seconds "
     "(TLS 1.3 and TLS 1.2 session tickets, TLS 1.2 session ids; resuming does not extend it); a "
     "resumed session keeps the client certificate its full handshake verified. Ticket keys are "
     "random, rotate at this period and are erased after "
     "two; a certificate reload starts new ones, so sessions from before it get a full "
     "handshake. 0: no resumption, every handshake is a full one."},
    {"tlsSessionCacheSize", NULL, T_LONG, G_EXT, R_NEVER, D_TEXT, "4096",
     OFF(tls.session_cache_size), RANGE(0, 131072),
     "(mqnamesrv) TLS 1.2 sessions remembered for clients without ticket support, which resume "
     "by session id: about 1 KB each, 6 KB with a client certificate; the oldest is forgotten "
     "first, and clients with tickets take no room. 0: none, only tickets resume."},
    {"proxyProtocolTrustedProxies", NULL, T_STR, G_EXT, R_NEVER, D_TEXT, "", OFF(tls.proxy_trusted),
     NOR,
     "(mqnamesrv) Peers allowed to open with a PROXY protocol header: IP "
     "addresses and CIDR blocks, comma-separated; empty: any peer (as Java; "
     "with aclEnable=true their client addresses are then ignored); none: no "
     "peer."},
};

#define NOPTS NS_ARRAY_SIZE(opts)

/* What some keys need beyond the table's columns (kept apart so that rows keep one shape). */
typedef struct opt_extra {
    const char *key;
    unsigned flags; /* F_* */
    /* Strict loads (-c, --set, tls.config.file): refuses a value the server cannot use. */
    bool (*check)(const char *value, char *err, size_t errlen);
} opt_extra_t;

static const opt_extra_t opt_extras[] = {
    {"tls.server.mode", 0, check_tls_mode},
    {"tls.test.mode.enable", F_TLS_FILE, NULL},
    {"tls.server.certPath", F_TLS_FILE, NULL},
    {"tls.server.keyPath", F_TLS_FILE, NULL},
    {"tls.server.keyPassword", F_TLS_FILE | F_SECRET, NULL},
    {"tls.server.need.client.auth", F_TLS_FILE, check_client_auth},
    {"tls.server.authClient", F_TLS_FILE, NULL},
    {"tls.server.trustCertPath", F_TLS_FILE, NULL},
    {"tls.ciphers", F_TLS_FILE, NULL},
    {"tls.protocols", F_TLS_FILE, NULL},
    {"tls.client.certPath", F_TLS_FILE, NULL},
    {"tls.client.keyPath", F_TLS_FILE, NULL},
    {"tls.client.keyPassword", F_TLS_FILE | F_SECRET, NULL},
    {"tls.client.authServer", F_TLS_FILE, NULL},
    {"tls.client.trustCertPath", F_TLS_FILE, NULL},
    {"proxyProtocolTrustedProxies", 0, check_proxy_acl},
    {"electMasterMaxRetryCount", F_CTL_RUNTIME, NULL},
    {"enableElectUncleanMaster", F_CTL_RUNTIME, NULL},
    {"notifyBrokerRoleChanged", F_CTL_RUNTIME, NULL},
};

static const opt_extra_t *extra_of(const opt_t *o)
{
    for (size_t i = 0; i < NS_ARRAY_SIZE(opt_extras); i++)
        if (strcmp(opt_extras[i].key, o->key) == 0)
            return &opt_extras[i];
    return NULL;
}

static unsigned opt_flags(const opt_t *o)
{
    const opt_extra_t *x = extra_of(o);
    return x != NULL ? x->flags : 0;
}

static const opt_t *find_opt(const char *key, bool for_update);

size_t ns_config_key_count(void)
{
    return NOPTS;
}

void ns_config_key_at(size_t i, ns_config_key_t *out)
{
    static const char *const sections[] = {
        [G_NAMESRV] = "NamesrvConfig",    [G_SERVER] = "NettyServerConfig",
        [G_CLIENT] = "NettyClientConfig", [G_CTL] = "ControllerConfig",
        [G_JRAFT] = "JraftConfig",        [G_EXT] = "mqnamesrv",
    };
    static const char *const types[] = {
        [T_STR] = "string", [T_BOOL] = "boolean", [T_INT] = "int", [T_LONG] = "long"};
    static const ns_config_key_class_t classes[] = {
        [R_NEXT_START] = NS_KEY_NEXT_START, [R_RUNTIME] = NS_KEY_RUNTIME, [R_NEVER] = NS_KEY_NEVER};
    NS_ASSERT(i < NOPTS);
    const opt_t *o = &opts[i];
    *out = (ns_config_key_t){
        .key = o->key,
        .section = sections[o->group],
        .type = types[o->type],
        .remote = o->group == G_CLIENT                       ? NS_KEY_CLIENT
                  : o->group == G_CTL || o->group == G_JRAFT ? NS_KEY_NEVER
                                                             : classes[o->remote],
        .def = o->def,
        .def_prefix = o->dkind == D_HOME  ? "$HOME"
                      : o->dkind == D_ENV ? "$"
                                          : "",
        .cpus = o->dkind == D_NCPU,
        .number = o->type == T_INT || o->type == T_LONG,
        .min = o->min,
        .max = o->max,
        .rmin = o->rmin,
        .rmax = o->rmax,
        .secret = (opt_flags(o) & F_SECRET) != 0,
        .help = o->help,
    };
}

/* ---- small helpers -------------------------------------------------------------------- */

static void *field_ptr(ns_config_t *cfg, const opt_t *o)
{
    return (char *)cfg + o->off;
}

static const char *opt_field_name(const opt_t *o)
{
    return o->field != NULL ? o->field : o->key;
}

_Static_assert(NOPTS <= NS_CONFIG_MAX_OPTS, "raise NS_CONFIG_MAX_OPTS");

static size_t opt_index(const opt_t *o)
{
    return (size_t)(o - opts);
}

static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Java's user.home: we take $HOME (what operators and tests set), then the passwd entry, then
 * Java's own fallback "?". */
static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h != NULL && h[0] != '\0')
        return h;
    struct passwd *pw = getpwuid(getuid());
    if (pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] != '\0')
        return pw->pw_dir;
    return "?";
}

/* Java's Long.parseLong within [lo, hi] (Integer.parseInt with the int range): an optional
 * sign, then ASCII digits only. Returns false for anything else or on overflow. */
static bool java_parse_num(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t r;
    if (!ns_java_parse_long(s, strlen(s), &r) || r < lo || r > hi)
        return false;
    *out = r;
    return true;
}

/* Java's String.trim(): drops code points <= U+0020 at both ends; U+0000 is C0 80 here. */
static char *java_trim_dup(const char *s)
{
    size_t n = strlen(s), a = 0;
    for (;;) {
        if (a < n && (unsigned char)s[a] <= 0x20)
            a++;
        else if (a + 1 < n && (unsigned char)s[a] == 0xC0 && (unsigned char)s[a + 1] == 0x80)
            a += 2;
        else
            break;
    }
    for (;;) {
        if (n > a && (unsigned char)s[n - 1] <= 0x20)
            n--;
        else if (n >= a + 2 && (unsigned char)s[n - 2] == 0xC0 && (unsigned char)s[n - 1] == 0x80)
            n -= 2;
        else
            break;
    }
    return ns_xstrndup(s + a, n - a);
}

/* ---- extras ------------------------------------------------------------------------------ */

static ssize_t extra_find(const ns_config_t *cfg, const char *key)
{
    uintptr_t at = cfg->extra_index != NULL ? (uintptr_t)ns_strmap_get(cfg->extra_index, key) : 0;
    return (ssize_t)at - 1;
}

static void retire(ns_config_t *cfg, char *s)
{
    if (s == NULL)
        return;
    cfg->retired = ns_xrealloc(cfg->retired, (cfg->retired_count + 1) * sizeof(char *));
    cfg->retired[cfg->retired_count++] = s;
}

/* Sets extras[key] = value. `live`: other threads may run (318), so the old text is retired. */
static void extra_put(ns_config_t *cfg, const char *key, const char *value, bool live)
{
    ssize_t i = extra_find(cfg, key);
    if (i >= 0) {
        if (live)
            retire(cfg, cfg->extra_values[i]);
        else
            free(cfg->extra_values[i]);
        cfg->extra_values[i] = ns_xstrdup(value);
        return;
    }
    if (cfg->extra_count == cfg->extra_cap) {
        cfg->extra_cap = cfg->extra_cap ? cfg->extra_cap * 2 : 16;
        cfg->extra_keys = ns_xrealloc(cfg->extra_keys, cfg->extra_cap * sizeof(char *));
        cfg->extra_values = ns_xrealloc(cfg->extra_values, cfg->extra_cap * sizeof(char *));
    }
    if (cfg->extra_index == NULL)
        cfg->extra_index = ns_strmap_new(NULL);
    cfg->extra_keys[cfg->extra_count] = ns_xstrdup(key);
    cfg->extra_values[cfg->extra_count] = ns_xstrdup(value);
    cfg->extra_count++;
    ns_strmap_put(cfg->extra_index, key, (void *)(uintptr_t)cfg->extra_count, NULL);
}

/* ---- applying one value ------------------------------------------------------------------ */

static const char *type_name(opt_type_t t)
{
    switch (t) {
    case T_BOOL:
        return "boolean";
    case T_INT:
        return "int";
    case T_LONG:
        return "long";
    default:
        return "string";
    }
}

/* A converted value, ready to store. */
typedef struct opt_value {
    char *str;   /* T_STR: owned, trimmed */
    bool b;      /* T_BOOL */
    int64_t num; /* T_INT, T_LONG */
} opt_value_t;

/* Converts `value` for o as the -c loader (strict) or as Java (not strict) does. Returns 1 with
 * *v filled (a string in it is the caller's), 0 when Java would ignore it (not strict: nothing
 * to store), or NS_ECONFIG with err set (strict only). */
static int convert(const opt_t *o, const char *value, bool strict, opt_value_t *v, char *err,
                   size_t errlen)
{
    switch (o->type) {
    case T_STR: {
        v->str = java_trim_dup(value);
        const opt_extra_t *x = extra_of(o);
        if (strict && x != NULL && x->check != NULL && !x->check(v->str, err, errlen)) {
            free(v->str);
            v->str = NULL;
            return NS_ECONFIG;
        }
        if (strict && o->off == OFF(log_level)) {
            ns_log_level_t lv;
            if (!ns_log_level_parse(v->str, &lv)) {
                ns_set_err(err, errlen, "%s: '%s' is not ERROR, WARN, INFO or DEBUG", o->key,
                           v->str);
                free(v->str);
                v->str = NULL;
                return NS_ECONFIG;
            }
        }
        if (strict && o->off == OFF(metrics_exporter_type) && strcasecmp(v->str, "PROM") != 0 &&
            strcasecmp(v->str, "DISABLE") != 0) {
            /* RocketMQ also knows OTLP_GRPC and LOG; mqnamesrv exports Prometheus only. */
            ns_set_err(err, errlen, "%s: '%s' is not PROM or DISABLE", o->key, v->str);
            free(v->str);
            v->str = NULL;
            return NS_ECONFIG;
        }
        return 1;
    }
    case T_BOOL:
        v->b = ns_java_parse_bool(value, strlen(value));
        if (strict && !v->b && strcasecmp(value, "false") != 0) {
            /* Java takes anything but "true" as false; a typo there silently disables a
             * feature, so the strict loader asks for one of the two words. */
            ns_set_err(err, errlen, "%s: '%s' is not a boolean (true or false)", o->key, value);
            return NS_ECONFIG;
        }
        return 1;
    case T_INT:
    case T_LONG: {
        int64_t lo = o->type == T_INT ? INT32_MIN : INT64_MIN;
        int64_t hi = o->type == T_INT ? INT32_MAX : INT64_MAX;
        if (!java_parse_num(value, lo, hi, &v->num)) {
            if (!strict)
                return 0;
            ns_set_err(err, errlen, "%s: '%s' is not a valid %s", o->key, value,
                       type_name(o->type));
            return NS_ECONFIG;
        }
        if (v->num < o->min || v->num > o->max) {
            /* 318 is unauthenticated and its values are persisted: a value the loader would
             * refuse at the next start (frameMaxLength=0, listenPort=-1) is ignored, so one
             * request can neither break this process nor keep it from starting again. */
            if (!strict) {
                NS_LOG_W("updateConfig ignores %s=%lld: out of range [%lld, %lld]", o->key,
                         (long long)v->num, (long long)o->min, (long long)o->max);
                return 0;
            }
            ns_set_err(err, errlen, "%s: %lld is out of range [%lld, %lld]", o->key,
                       (long long)v->num, (long long)o->min, (long long)o->max);
            return NS_ECONFIG;
        }
        return 1;
    }
    }
    return 0;
}

/* Converts and stores `value` into o's field. `live`: store scalars atomically and retire the
 * old string. Returns 0, or NS_ECONFIG with err set (only when strict; non-strict failures
 * leave the field unchanged and return 0, as Java swallows them). */
static int apply(ns_config_t *cfg, const opt_t *o, const char *value, bool strict, bool live,
                 char *err, size_t errlen)
{
    opt_value_t v = {NULL, false, 0};
    int rc = convert(o, value, strict, &v, err, errlen);
    if (rc <= 0)
        return rc;
    void *p = field_ptr(cfg, o);
    switch (o->type) {
    case T_STR: {
        char **sp = p;
        char *old = __atomic_exchange_n(sp, v.str, __ATOMIC_ACQ_REL);
        if (live)
            retire(cfg, old);
        else
            free(old);
        break;
    }
    case T_BOOL:
        __atomic_store_n((bool *)p, v.b, __ATOMIC_RELAXED);
        break;
    case T_INT:
        __atomic_store_n((int32_t *)p, (int32_t)v.num, __ATOMIC_RELAXED);
        break;
    case T_LONG:
        __atomic_store_n((int64_t *)p, v.num, __ATOMIC_RELAXED);
        break;
    }
    return 0;
}

/* True when the -c loader takes `value` for o (what 318 persists as text must load again). */
static bool loads_strictly(const opt_t *o, const char *value, char *why, size_t whylen)
{
    opt_value_t v = {NULL, false, 0};
    int rc = convert(o, value, true, &v, why, whylen);
    free(v.str);
    return rc == 1;
}

/* Formats o's current value into out (a set secret as SECRET_MASK unless `reveal`). Returns
 * false for a NULL string. */
static bool format_value(ns_config_t *cfg, const opt_t *o, ns_buf_t *out, bool reveal)
{
    const void *p = field_ptr(cfg, o);
    switch (o->type) {
    case T_STR: {
        const char *s = __atomic_load_n((char *const *)p, __ATOMIC_ACQUIRE);
        if (s == NULL)
            return false;
        ns_buf_append_str(out, (opt_flags(o) & F_SECRET) && !reveal && s[0] ? SECRET_MASK : s);
        return true;
    }
    case T_BOOL:
        ns_buf_append_str(out,
                          __atomic_load_n((const bool *)p, __ATOMIC_RELAXED) ? "true" : "false");
        return true;
    case T_INT:
        ns_buf_appendf(out, "%d", (int)__atomic_load_n((const int32_t *)p, __ATOMIC_RELAXED));
        return true;
    case T_LONG:
        ns_buf_appendf(out, "%lld",
                       (long long)__atomic_load_n((const int64_t *)p, __ATOMIC_RELAXED));
        return true;
    }
    return false;
}

/* How a property reaches the config. */
typedef enum set_mode {
    SET_FILE,   /* -c or --set: every Java object, extras recorded */
    SET_UPDATE, /* 318: NamesrvConfig + NettyServerConfig only, extras only if present */
} set_mode_t;

static int set_property(ns_config_t *cfg, const char *key, const char *value, bool strict,
                        set_mode_t mode, char *err, size_t errlen)
{
    bool live = mode == SET_UPDATE;
    bool known = false, object_key = false;
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (strcmp(o->key, key) != 0)
            continue;
        known = true;
        if ((o->group == G_CLIENT || o->group == G_CTL || o->group == G_JRAFT) &&
            mode == SET_UPDATE)
            continue; /* 318 touches NamesrvConfig and NettyServerConfig only */
        int rc = apply(cfg, o, value, strict, live, err, errlen);
        if (rc < 0)
            return rc;
        if (mode == SET_FILE)
            cfg->file_set[opt_index(o)] = 1;
        if (o->group == G_NAMESRV || o->group == G_SERVER)
            object_key = true;
        if (o->group == G_EXT) {
            object_key = true;
            cfg->ext_set[opt_index(o)] = 1;
            if (live && o->off == OFF(log_level)) {
                ns_log_level_t lv;
                if (ns_log_level_parse(cfg->log_level, &lv))
                    ns_log_set_level(lv);
            }
        }
    }
    if (!object_key) {
        /* NettyClientConfig and unknown keys live on as text in Java's allConfigs. */
        if (mode == SET_FILE || extra_find(cfg, key) >= 0)
            extra_put(cfg, key, value, live);
    }
    return known ? 1 : 0;
}

int ns_config_set(ns_config_t *cfg, const char *key, const char *value, bool strict, char *err,
                  size_t errlen)
{
    return set_property(cfg, key, value, strict, SET_FILE, err, errlen);
}

/* ---- defaults and lifetime --------------------------------------------------------------- */

void ns_config_init_defaults(ns_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    pthread_mutex_init(&cfg->lock, NULL);
    cfg->saving = ns_xcalloc(1, sizeof(*cfg->saving));
    pthread_mutex_init(&cfg->saving->write_lock, NULL);
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        char buf[32];
        const char *text = o->def;
        char *owned = NULL;
        switch (o->dkind) {
        case D_TEXT:
            break;
        case D_HOME: {
            const char *h = home_dir();
            owned = ns_xmalloc(strlen(h) + strlen(o->def) + 1);
            strcpy(owned, h);
            strcat(owned, o->def);
            text = owned;
            break;
        }
        case D_ENV:
            text = getenv(o->def);
            break;
        case D_NCPU:
            snprintf(buf, sizeof(buf), "%d", usable_cpus());
            text = buf;
            break;
        }
        if (text != NULL) {
            if (o->type == T_STR) /* defaults are not trimmed: ROCKETMQ_HOME is taken as is */
                *(char **)field_ptr(cfg, o) = ns_xstrdup(text);
            else
                apply(cfg, o, text, false, false, NULL, 0);
        }
        free(owned);
    }
}

void ns_config_free(ns_config_t *cfg)
{
    if (cfg == NULL)
        return;
    for (size_t i = 0; i < NOPTS; i++) {
        if (opts[i].type == T_STR) {
            char **sp = field_ptr(cfg, &opts[i]);
            free(*sp);
            *sp = NULL;
        }
    }
    for (size_t i = 0; i < cfg->extra_count; i++) {
        free(cfg->extra_keys[i]);
        free(cfg->extra_values[i]);
    }
    free(cfg->extra_keys);
    free(cfg->extra_values);
    ns_strmap_free(cfg->extra_index);
    cfg->extra_index = NULL;
    cfg->extra_cap = 0;
    for (size_t i = 0; i < cfg->retired_count; i++)
        free(cfg->retired[i]);
    free(cfg->retired);
    free(cfg->config_file);
    cfg->extra_keys = cfg->extra_values = cfg->retired = NULL;
    cfg->extra_count = cfg->retired_count = 0;
    cfg->config_file = NULL;
    if (cfg->saving != NULL) {
        NS_ASSERT(cfg->saving->waiter_count == 0);
        free(cfg->saving->waiters);
        pthread_mutex_destroy(&cfg->saving->write_lock);
        free(cfg->saving);
        cfg->saving = NULL;
    }
    pthread_mutex_destroy(&cfg->lock);
}

bool ns_config_home_missing(const ns_config_t *cfg)
{
    if (cfg->controller_only)
        return cfg->ctl.rocketmq_home == NULL || cfg->ctl.rocketmq_home[0] == '\0';
    return cfg->rocketmq_home == NULL;
}

bool ns_config_metrics_enabled(const ns_config_t *cfg)
{
    return cfg->metrics_exporter_type != NULL &&
           strcasecmp(cfg->metrics_exporter_type, "PROM") == 0;
}

/* ---- properties text -> ordered, de-duplicated pairs ------------------------------------- */

typedef struct pair {
    char *key;
    char *value;
    int line;
} pair_t;

typedef struct pair_list {
    pair_t *v;
    size_t n, cap;
    ns_strmap_t *index; /* key -> position + 1 (so that a repeated key costs one look-up) */
} pair_list_t;

#define PAIR_LIST_INIT                                                                             \
    {                                                                                              \
        NULL, 0, 0, NULL                                                                           \
    }

/* Java's Properties is a Hashtable: a repeated key keeps its last value. We keep the first
 * position (for stable error order) and the last value and line. */
static int collect_pair(void *arg, const char *key, const char *value, int line)
{
    pair_list_t *l = arg;
    if (l->index == NULL)
        l->index = ns_strmap_new(NULL);
    uintptr_t at = (uintptr_t)ns_strmap_get(l->index, key);
    if (at != 0) {
        pair_t *p = &l->v[at - 1];
        free(p->value);
        p->value = ns_xstrdup(value);
        p->line = line;
        return 0;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = ns_xrealloc(l->v, l->cap * sizeof(pair_t));
    }
    l->v[l->n++] = (pair_t){ns_xstrdup(key), ns_xstrdup(value), line};
    ns_strmap_put(l->index, key, (void *)(uintptr_t)l->n, NULL);
    return 0;
}

static void pair_list_free(pair_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
    ns_strmap_free(l->index);
    *l = (pair_list_t)PAIR_LIST_INIT;
}

/* The UTF-8 byte order mark Windows editors (Notepad) put at the start of a file. */
static const char utf8_bom[3] = {'\xEF', '\xBB', '\xBF'};

/* Reads a properties file an operator names (-c, tls.config.file) into pairs: at most
 * NS_CONFIG_FILE_MAX bytes of a regular file (ns_afile_read: a FIFO or /dev/zero is refused
 * before anything is read). A UTF-8 byte order mark is skipped; a UTF-16 file (a byte order
 * mark FF FE or FE FF, or a NUL among its first two bytes: ASCII saved as UTF-16) is refused,
 * since every key would be read wrong. Java reads all of these as ISO-8859-1 and so takes the
 * first key of a file with a BOM for an unknown one (docs/compatibility.md). Returns 0, -errno,
 * NS_ENOTREG, NS_ETOOBIG, NS_ECONFIG (UTF-16) or NS_EPROTO (a malformed \uXXXX, Java's
 * IllegalArgumentException), with "path: reason" or "path:line: reason" in err. When text_out is
 * not NULL, the file's text is handed to it (the caller frees it), on success. */
static int read_properties_file(const char *path, pair_list_t *pairs, ns_buf_t *text_out, char *err,
                                size_t errlen)
{
    ns_buf_t text = NS_BUF_INIT;
    int rc = ns_afile_read(path, NS_CONFIG_FILE_MAX, &text);
    if (rc == NS_ETOOBIG)
        ns_set_err(err, errlen, "%s: larger than %u bytes (a config file holds a few KB)", path,
                   NS_CONFIG_FILE_MAX);
    else if (rc == NS_ENOTREG)
        ns_set_err(err, errlen, "%s: not a regular file (a FIFO, a device or a socket)", path);
    else if (rc < 0)
        ns_set_err(err, errlen, "%s: %s", path, strerror(-rc));
    if (rc < 0)
        goto out;
    const char *data = (const char *)text.data;
    size_t len = text.len;
    if ((len >= 2 && ((uint8_t)data[0] == 0xFF && (uint8_t)data[1] == 0xFE)) ||
        (len >= 2 && ((uint8_t)data[0] == 0xFE && (uint8_t)data[1] == 0xFF)) ||
        (len >= 2 && (data[0] == '\0' || data[1] == '\0'))) {
        ns_set_err(err, errlen,
                   "%s: the file is UTF-16 (Windows \"Unicode\"); save it as UTF-8 or ASCII", path);
        rc = NS_ECONFIG;
        goto out;
    }
    if (len >= sizeof(utf8_bom) && memcmp(data, utf8_bom, sizeof(utf8_bom)) == 0) {
        data += sizeof(utf8_bom);
        len -= sizeof(utf8_bom);
    }
    int bad_line = 0;
    if (ns_properties_parse(data, len, collect_pair, pairs, &bad_line) < 0) {
        ns_set_err(err, errlen, "%s:%d: Malformed \\uxxxx encoding.", path, bad_line);
        rc = NS_EPROTO;
    }
    if (rc >= 0 && text_out != NULL) {
        *text_out = text;
        text = (ns_buf_t)NS_BUF_INIT;
    }
out:
    ns_buf_free(&text);
    return rc;
}

/* Apache's own config files (conf/controller/cluster-3n-namesrv-plugin/namesrv-n0.conf ...) begin
 * with an XML licence comment. java.util.Properties has no such syntax: "<!--", each line's first
 * word and "-->" become keys, which Java keeps (they show in 319) and never uses. So do we; the
 * loader only says so once instead of warning of each unknown key. A block: from a line whose
 * first non-blank characters are "<!--" to the first line holding "-->" (1-based lines). */
#define MAX_XML_BLOCKS 8

static size_t xml_comment_blocks(const char *text, size_t len, int blocks[][2])
{
    size_t n = 0;
    int line = 1, start = 0;
    size_t i = 0;
    while (i < len && n < MAX_XML_BLOCKS) {
        size_t e = i;
        while (e < len && text[e] != '\n' && text[e] != '\r')
            e++;
        size_t b = i;
        while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\f'))
            b++;
        if (start == 0 && e - b >= 4 && memcmp(text + b, "<!--", 4) == 0)
            start = line;
        if (start != 0) {
            for (size_t k = i; k + 3 <= e; k++) {
                if (memcmp(text + k, "-->", 3) == 0) {
                    blocks[n][0] = start;
                    blocks[n][1] = line;
                    n++;
                    start = 0;
                    break;
                }
            }
        }
        /* \r\n is one line end, as in Java */
        if (e < len && text[e] == '\r' && e + 1 < len && text[e + 1] == '\n')
            e++;
        i = e + 1;
        line++;
    }
    return n;
}

static bool in_blocks(int blocks[][2], size_t n, int line)
{
    for (size_t i = 0; i < n; i++)
        if (line >= blocks[i][0] && line <= blocks[i][1])
            return true;
    return false;
}

int ns_config_load_file(ns_config_t *cfg, const char *path, char *err, size_t errlen)
{
    pair_list_t pairs = PAIR_LIST_INIT;
    ns_buf_t text = NS_BUF_INIT;
    int rc = read_properties_file(path, &pairs, &text, err, errlen);
    if (rc < 0)
        goto out;
    int blocks[MAX_XML_BLOCKS][2];
    size_t nblocks = xml_comment_blocks((const char *)text.data, text.len, blocks);
    for (size_t b = 0; b < nblocks; b++)
        fprintf(stderr,
                "mqnamesrv: %s:%d-%d is an XML comment block; Java's Properties reads its lines "
                "as keys, and so does mqnamesrv (kept, unused)\n",
                path, blocks[b][0], blocks[b][1]);
    for (size_t i = 0; i < pairs.n; i++) {
        char why[512];
        int r = ns_config_set(cfg, pairs.v[i].key, pairs.v[i].value, true, why, sizeof(why));
        if (r < 0) {
            ns_set_err(err, errlen, "%s:%d: %s", path, pairs.v[i].line, why);
            rc = NS_ECONFIG;
            goto out;
        }
        if (r == 0 && !in_blocks(blocks, nblocks, pairs.v[i].line))
            fprintf(stderr, "mqnamesrv: unknown property %s at %s:%d\n", pairs.v[i].key, path,
                    pairs.v[i].line);
    }
    /* Java: namesrvConfig.setConfigStorePath(file), untrimmed. */
    free(cfg->config_store_path);
    cfg->config_store_path = ns_xstrdup(path);
    free(cfg->config_file);
    cfg->config_file = ns_xstrdup(path);
    printf("load config properties file OK, %s\n", path);
    fflush(stdout);
    rc = 0;
out:
    pair_list_free(&pairs);
    ns_buf_free(&text);
    return rc;
}

/* ---- tls.config.file ---------------------------------------------------------------------- */

static void tls_file_warn(bool live, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tls_file_warn(bool live, const char *fmt, ...)
{
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (live)
        NS_LOG_W("%s", line);
    else
        fprintf(stderr, "mqnamesrv: %s\n", line);
}

int ns_config_load_tls_file(ns_config_t *cfg, bool live, char *err, size_t errlen)
{
    /* The file is read without the lock (a slow file system must not hold up 318 and 319),
     * then checked and applied under it. */
    if (live)
        pthread_mutex_lock(&cfg->lock);
    char *path = cfg->tls.config_file != NULL ? ns_xstrdup(cfg->tls.config_file) : NULL;
    if (live)
        pthread_mutex_unlock(&cfg->lock);
    pair_list_t pairs = PAIR_LIST_INIT;
    int rc = 0;
    bool locked = false;
    struct stat st;
    /* Java: "Tls config file doesn't exist, skip it" unless a readable regular file. */
    if (path == NULL || path[0] == '\0' || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        access(path, R_OK) != 0)
        goto out;
    rc = read_properties_file(path, &pairs, NULL, err, errlen);
    if (rc < 0) {
        rc = NS_ECONFIG;
        goto out;
    }
    if (live) {
        pthread_mutex_lock(&cfg->lock);
        locked = true;
    }
    /* All or nothing: every value is checked before any is applied. */
    for (size_t i = 0; i < pairs.n; i++) {
        const opt_t *o = find_opt(pairs.v[i].key, false);
        char why[512];
        if (o != NULL && (opt_flags(o) & F_TLS_FILE) &&
            !loads_strictly(o, pairs.v[i].value, why, sizeof(why))) {
            ns_set_err(err, errlen, "%s:%d: %s", path, pairs.v[i].line, why);
            rc = NS_ECONFIG;
            goto out;
        }
    }
    for (size_t i = 0; i < pairs.n; i++) {
        const opt_t *o = find_opt(pairs.v[i].key, false);
        if (o == NULL || !(opt_flags(o) & F_TLS_FILE)) {
            tls_file_warn(live, "%s:%d: %s is not read from tls.config.file (as in Java), ignored",
                          path, pairs.v[i].line, pairs.v[i].key);
            continue;
        }
        apply(cfg, o, pairs.v[i].value, false, live, NULL, 0);
    }
    rc = 1;
out:
    if (locked)
        pthread_mutex_unlock(&cfg->lock);
    pair_list_free(&pairs);
    free(path);
    return rc;
}

const char *ns_config_tls_problem(const ns_config_t *cfg)
{
    const ns_tls_config_t *t = &cfg->tls;
    bool accepts_tls = t->server_mode == NULL || strcmp(t->server_mode, "disabled") != 0;
    bool missing = t->server_cert_path == NULL || t->server_cert_path[0] == '\0' ||
                   t->server_key_path == NULL || t->server_key_path[0] == '\0';
    if (accepts_tls && !t->test_mode_enable && missing)
        return "tls.test.mode.enable=false needs tls.server.certPath and tls.server.keyPath (or "
               "tls.server.mode=disabled)";
    return NULL;
}

void ns_config_derive_use_tls(ns_config_t *cfg)
{
    if (extra_find(cfg, "useTLS") >= 0)
        return; /* set in -c or --set: NettyClientConfig's own value */
    const opt_t *enable = find_opt("tls.enable", false);
    if (cfg->ext_set[opt_index(enable)])
        cfg->client.use_tls = cfg->tls.enable;
    else
        cfg->client.use_tls =
            cfg->tls.server_mode != NULL && strcmp(cfg->tls.server_mode, "enforcing") == 0;
}

/* ---- dumps ------------------------------------------------------------------------------- */

static void dump_line(ns_config_t *cfg, const opt_t *o, ns_buf_t *out)
{
    ns_buf_append_str(out, opt_field_name(o));
    ns_buf_append_char(out, '=');
    format_value(cfg, o, out, false); /* a NULL string prints as empty, as Java's -p does */
    ns_buf_append_char(out, '\n');
}

/* Java's -p prints ControllerConfig only with enableControllerInNamesrv; its jraftConfig field
 * (an object printed as class@hash) comes third: the JraftConfig keys stand there instead. */
/* The lines of one group (JraftConfig's where ControllerConfig prints its jraftConfig). */
static void dump_one_group(ns_config_t *cfg, ns_buf_t *out, opt_group_t group)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (o->group != group)
            continue;
        dump_line(cfg, o, out);
        if (o->group == G_CTL && o->off == OFF(ctl.config_store_path))
            for (size_t j = 0; j < NOPTS; j++)
                if (opts[j].group == G_JRAFT)
                    dump_line(cfg, &opts[j], out);
    }
}

static void dump_group(ns_config_t *cfg, ns_buf_t *out, bool extensions)
{
    if (extensions) {
        dump_one_group(cfg, out, G_EXT);
        return;
    }
    if (cfg->controller_only) { /* ControllerStartup's order */
        dump_one_group(cfg, out, G_CTL);
        dump_one_group(cfg, out, G_SERVER);
        dump_one_group(cfg, out, G_CLIENT);
        return;
    }
    dump_one_group(cfg, out, G_NAMESRV);
    dump_one_group(cfg, out, G_SERVER);
    dump_one_group(cfg, out, G_CLIENT);
    if (cfg->enable_controller_in_namesrv)
        dump_one_group(cfg, out, G_CTL);
}

void ns_config_dump_java_order(ns_config_t *cfg, ns_buf_t *out)
{
    dump_group(cfg, out, false);
}

void ns_config_dump_extensions(ns_config_t *cfg, ns_buf_t *out)
{
    dump_group(cfg, out, true);
}

void ns_config_print(ns_config_t *cfg, FILE *fp)
{
    ns_buf_t body = NS_BUF_INIT;
    ns_config_dump_java_order(cfg, &body);
    ns_config_dump_extensions(cfg, &body);
    /* logback pattern %d{yyy-MM-dd HH:mm:ss,GMT+8}: wall time rendered in GMT+8. */
    time_t t = time(NULL) + 8 * 3600;
    struct tm tm;
    char stamp[32];
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
    /* A first line that names the build (it has no '=', so key=value readers skip it). */
    fprintf(fp, "%s INFO main - %s\n", stamp, ns_version_line());
    const char *s = ns_buf_cstr(&body);
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        fprintf(fp, "%s INFO main - %.*s\n", stamp, (int)n, s);
        s += n + (nl ? 1 : 0);
    }
    fflush(fp);
    ns_buf_free(&body);
}

typedef struct kv_ref {
    const char *key;
    size_t voff; /* value offset in the scratch buffer */
} kv_ref_t;

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const kv_ref_t *)a)->key, ((const kv_ref_t *)b)->key);
}

/* How the sorted dump is written. */
typedef enum dump_form {
    DUMP_REPLY, /* the 319 body: "key=value\n" unescaped, as Java sends it (U+0000 a 0x00 byte) */
    DUMP_FILE,  /* configStorePath: each key and value escaped as Properties.store escapes them,
                   so that the file reads back as exactly what is in memory */
} dump_form_t;

static void dump_sorted_locked(ns_config_t *cfg, ns_buf_t *out, dump_form_t form)
{
    kv_ref_t *refs = ns_xcalloc(NOPTS + cfg->extra_count + 1, sizeof(kv_ref_t));
    ns_buf_t vals = NS_BUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (o->group == G_CLIENT || o->group == G_CTL || o->group == G_JRAFT)
            continue;
        if (o->group == G_EXT && !cfg->ext_set[opt_index(o)])
            continue;
        size_t start = vals.len;
        /* Secrets in clear only for the file 318 writes, never in the 319 reply. */
        if (!format_value(cfg, o, &vals, form == DUMP_FILE))
            continue; /* Java's object2Properties skips null fields */
        ns_buf_append_char(&vals, '\0');
        refs[n++] = (kv_ref_t){opt_field_name(o), start};
    }
    for (size_t i = 0; i < cfg->extra_count; i++) {
        size_t start = vals.len;
        ns_buf_append_str(&vals, cfg->extra_values[i]);
        ns_buf_append_char(&vals, '\0');
        refs[n++] = (kv_ref_t){cfg->extra_keys[i], start};
    }
    qsort(refs, n, sizeof(kv_ref_t), cmp_kv);
    for (size_t i = 0; i < n; i++) {
        const char *key = refs[i].key, *value = (const char *)vals.data + refs[i].voff;
        if (form == DUMP_FILE) {
            ns_properties_escape(key, true, out);
            ns_buf_append_char(out, '=');
            ns_properties_escape(value, false, out);
        } else {
            ns_java_text_put_utf8(out, key, strlen(key));
            ns_buf_append_char(out, '=');
            ns_java_text_put_utf8(out, value, strlen(value));
        }
        ns_buf_append_char(out, '\n');
    }
    ns_buf_free(&vals);
    free(refs);
}

void ns_config_dump_sorted(ns_config_t *cfg, ns_buf_t *out)
{
    pthread_mutex_lock(&cfg->lock);
    dump_sorted_locked(cfg, out, DUMP_REPLY);
    pthread_mutex_unlock(&cfg->lock);
}

void ns_config_dump_file(ns_config_t *cfg, ns_buf_t *out)
{
    pthread_mutex_lock(&cfg->lock);
    dump_sorted_locked(cfg, out, DUMP_FILE);
    pthread_mutex_unlock(&cfg->lock);
}

/* ---- 318 --------------------------------------------------------------------------------- */

/* Java builds the set once at startup: the fixed keys plus configBlackList.split(";") (empty
 * trailing entries dropped; an empty setting yields the one entry ""). */
static bool in_black_list(const char *list, const char *const *fixed, size_t nfixed,
                          const char *key)
{
    for (size_t i = 0; i < nfixed; i++)
        if (strcmp(fixed[i], key) == 0)
            return true;
    list = list != NULL ? list : "";
    size_t total = strlen(list);
    size_t keep = total; /* String.split drops trailing empty strings... */
    while (keep > 0 && list[keep - 1] == ';')
        keep--;
    if (keep == 0) /* ...but "" (or only ';') splits to [""] resp. [] */
        return total == 0 && key[0] == '\0';
    const char *p = list, *end = list + keep;
    while (p <= end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *e = semi ? semi : end;
        if ((size_t)(e - p) == strlen(key) && memcmp(p, key, (size_t)(e - p)) == 0)
            return true;
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    return false;
}

static bool blacklisted(const ns_config_t *cfg, const char *key)
{
    static const char *const fixed[] = {"configBlackList", "configStorePath", "kvConfigPath",
                                        "rocketmqHome"};
    return in_black_list(cfg->config_black_list, fixed, NS_ARRAY_SIZE(fixed), key);
}

/* Writes data to path atomically (ns_atomic_file.h): path.tmp.<pid> in the same directory,
 * missing directories made first. Returns 0 or -errno. */
static int write_atomic(const char *path, const void *data, size_t len)
{
    const ns_afile_opts_t o = {.make_dirs = true, .pid_suffix = true, .mode = 0644};
    return ns_afile_write(path, data, len, &o, NULL, NULL);
}

/* Java's MixAll.string2File: mkdirs, previous content -> <path>.bak, then the new content
 * (atomically here). Returns 0 or -errno. Not static, never inlined: the fault tests name it
 * (fiu's enable_stack_by_name) to fail exactly the config file's writes. */
__attribute__((noinline)) int ns__config_write_file(const char *path, const ns_buf_t *body)
{
    if (path == NULL || path[0] == '\0')
        return -ENOENT;
    ns_buf_t prev = NS_BUF_INIT;
    int rc = ns_afile_read(path, NS_CONFIG_FILE_MAX, &prev);
    if (rc == 0) {
        size_t blen = strlen(path) + 5;
        char *bak = ns_xmalloc(blen);
        snprintf(bak, blen, "%s.bak", path);
        rc = write_atomic(bak, prev.data, prev.len);
        free(bak);
    } else if (rc == -ENOENT) {
        rc = 0;
    }
    if (rc == 0)
        rc = write_atomic(path, body->data, body->len);
    ns_buf_free(&prev);
    return rc;
}

#define RETRY_FIRST_MS 500u
#define RETRY_MAX_MS 30000u

/* Writes the config file if an update is not on disk yet and answers the requests the write
 * covered. Returns what ns_persist_flush_fn says. */
static uint64_t flush_config(void *arg)
{
    ns_config_t *cfg = arg;
    ns_config_saving_t *sv = cfg->saving;
    pthread_mutex_lock(&sv->write_lock);
    pthread_mutex_lock(&cfg->lock);
    if (sv->durable == sv->changes) {
        pthread_mutex_unlock(&cfg->lock);
        pthread_mutex_unlock(&sv->write_lock);
        return 0;
    }
    uint64_t covered = sv->changes;
    char *path = cfg->config_store_path ? ns_xstrdup(cfg->config_store_path) : NULL;
    ns_buf_t body = NS_BUF_INIT;
    dump_sorted_locked(cfg, &body, DUMP_FILE);
    pthread_mutex_unlock(&cfg->lock);

    uint64_t t0 = ns_metrics_clock();
    int rc = ns__config_write_file(path, &body);
    ns_metrics_observe_since(NS_H_PERSIST_CONFIG, t0);
    ns_buf_free(&body);
    if (rc != 0) {
        NS_METRIC_INC(PERSIST_FAIL_CONFIG);
        if (sv->failures++ == 0)
            NS_LOG_E("persist string2File error: %s: %s (the update is in force; the file is "
                     "written again until the disk takes it; logged once until then)",
                     path ? path : "(null)", ns_strerror(rc));
        sv->retry_ms = sv->retry_ms ? sv->retry_ms * 2 : RETRY_FIRST_MS;
        if (sv->retry_ms > RETRY_MAX_MS)
            sv->retry_ms = RETRY_MAX_MS;
    } else {
        NS_METRIC_INC(PERSIST_WRITES_CONFIG);
        if (sv->failures > 0)
            NS_LOG_W("persist config %s: written again after %u failed write(s)", path,
                     sv->failures);
        sv->failures = 0;
        sv->retry_ms = 0;
    }
    free(path);

    pthread_mutex_lock(&cfg->lock);
    size_t n = 0;
    while (n < sv->waiter_count && sv->waiters[n].seq <= covered)
        n++;
    config_waiter_t *answered = NULL;
    if (n > 0) {
        answered = ns_xmalloc(n * sizeof(*answered));
        memcpy(answered, sv->waiters, n * sizeof(*answered));
        memmove(sv->waiters, sv->waiters + n, (sv->waiter_count - n) * sizeof(*answered));
        sv->waiter_count -= n;
    }
    if (rc == 0)
        sv->durable = covered;
    bool pending = sv->durable != sv->changes;
    pthread_mutex_unlock(&cfg->lock);
    uint64_t next = !pending ? 0 : rc == 0 ? NS_PERSIST_AGAIN : sv->retry_ms;
    pthread_mutex_unlock(&sv->write_lock);

    for (size_t i = 0; i < n; i++)
        answered[i].done(answered[i].arg, rc);
    free(answered);
    return next;
}

void ns_config_use_persister(ns_config_t *cfg, ns_persister_t *persister)
{
    cfg->saving->persister = persister;
    if (persister != NULL)
        cfg->saving->slot = ns_persister_add(persister, flush_config, cfg);
}

/* An update was applied (cfg->lock held): numbers it and records its request. */
static void record_update_locked(ns_config_t *cfg, ns_persist_done_fn *done, void *arg)
{
    ns_config_saving_t *sv = cfg->saving;
    uint64_t seq = ++sv->changes;
    if (done == NULL)
        return;
    if (sv->waiter_count == sv->waiter_cap) {
        sv->waiter_cap = sv->waiter_cap ? sv->waiter_cap * 2 : 4;
        sv->waiters = ns_xrealloc(sv->waiters, sv->waiter_cap * sizeof(*sv->waiters));
    }
    sv->waiters[sv->waiter_count++] = (config_waiter_t){seq, done, arg};
}

static void request_write(ns_config_t *cfg)
{
    ns_config_saving_t *sv = cfg->saving;
    if (sv->persister != NULL)
        ns_persister_kick(sv->persister, sv->slot);
    else
        while (flush_config(cfg) == NS_PERSIST_AGAIN) {
        }
}

static const opt_t *find_opt(const char *key, bool for_update)
{
    for (size_t i = 0; i < NOPTS; i++) {
        if (strcmp(opts[i].key, key) != 0)
            continue;
        if (for_update && opts[i].group == G_CLIENT)
            continue; /* 318 does not touch NettyClientConfig */
        return &opts[i];
    }
    return NULL;
}

/* 318 may not set this pair: a key of class R_NEVER; a number outside its remote range (a
 * limit tuned past safe bounds, 0 = "unlimited" among them); or a value 318 would persist as
 * text that the -c loader refuses (logLevel=LOUD, a NettyClientConfig key of the -c file set
 * to a non-number), which would keep the next start from succeeding. Unparsable numbers of the
 * Java config objects are not refused: Java ignores them, and so does apply() (the old value
 * stays, and is what is persisted). */
static bool refused_remotely(const ns_config_t *cfg, const char *key, const char *value, char *why,
                             size_t whylen)
{
    const opt_t *o = find_opt(key, false);
    /* A line break would make the value a line of its own in the 319 text, which readers
     * (mqadmin, nsadmin) take for another key: productEnvName=x\nkvConfigPath=/evil. Java
     * takes it; we refuse it (docs/compatibility.md, "318 and the config file"). Only for keys
     * the update stores: unknown ones are ignored (mergeIfExist). */
    bool stored = (o != NULL && o->group != G_CLIENT) || extra_find(cfg, key) >= 0;
    if (stored && strpbrk(value, "\r\n") != NULL) {
        ns_set_err(why, whylen,
                   "Can not update config %s remotely: the value holds a line break (CR or LF), "
                   "which GET_NAMESRV_CONFIG would show as two lines.",
                   o != NULL ? o->key : "(a key of the config file)");
        return true;
    }
    if (o == NULL)
        return false;
    if (o->group == G_CLIENT) {
        /* 318 only rewrites the text of one the -c file gave (mergeIfExist), as it is */
        char reason[256];
        if (extra_find(cfg, key) < 0 || loads_strictly(o, value, reason, sizeof(reason)))
            return false;
        ns_set_err(why, whylen, "Can not update config %s remotely: %s.", o->key, reason);
        return true;
    }
    if (o->remote == R_NEVER || o->group == G_CTL || o->group == G_JRAFT) {
        ns_set_err(why, whylen,
                   "Can not update config %s remotely: it may only be set in the config file.",
                   o->key);
        return true;
    }
    if (o->type == T_STR) {
        char reason[256];
        if (loads_strictly(o, value, reason, sizeof(reason)))
            return false;
        ns_set_err(why, whylen, "Can not update config %s remotely: %s.", o->key, reason);
        return true;
    }
    if (o->type != T_INT && o->type != T_LONG)
        return false;
    int64_t v;
    bool is_int = o->type == T_INT;
    if (!java_parse_num(value, is_int ? INT32_MIN : INT64_MIN, is_int ? INT32_MAX : INT64_MAX, &v))
        return false; /* not a number of its type: ignored, as Java does */
    if (v >= o->rmin && v <= o->rmax)
        return false;
    ns_set_err(why, whylen,
               "Can not update config %s=%lld remotely: outside %lld..%lld (wider values only in "
               "the config file).",
               o->key, (long long)v, (long long)o->rmin, (long long)o->rmax);
    return true;
}

ns_config_update_result_t ns_config_update_async(ns_config_t *cfg, const char *text, size_t len,
                                                 char *why, size_t whylen, ns_persist_done_fn *done,
                                                 void *arg)
{
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    ns_buf_t clean = NS_BUF_INIT;
    pair_list_t pairs = PAIR_LIST_INIT;
    ns_config_update_result_t res = NS_CONFIG_UPDATE_OK;

    /* Java: new String(body, UTF-8), then getBytes(UTF-8) into Properties.load (ISO-8859-1). */
    ns_utf8_decode_java(text, len, &clean, NS_UTF8_KEEP_NUL);
    if (ns_properties_parse((const char *)clean.data, clean.len, collect_pair, &pairs, NULL) < 0) {
        res = NS_CONFIG_UPDATE_BAD_TEXT;
        goto out;
    }
    pthread_mutex_lock(&cfg->lock);
    for (size_t i = 0; i < pairs.n; i++) {
        if (blacklisted(cfg, pairs.v[i].key)) {
            res = NS_CONFIG_UPDATE_BLACKLISTED;
            break;
        }
    }
    for (size_t i = 0; i < pairs.n && res == NS_CONFIG_UPDATE_OK; i++) {
        if (refused_remotely(cfg, pairs.v[i].key, pairs.v[i].value, why, whylen)) {
            char k[200];
            ns_log_escape(pairs.v[i].key, strlen(pairs.v[i].key), 64, k, sizeof(k));
            NS_LOG_W("updateConfig refused: %s may not be changed remotely to that value", k);
            res = NS_CONFIG_UPDATE_NOT_REMOTE;
        }
    }
    if (res == NS_CONFIG_UPDATE_OK) {
        for (size_t i = 0; i < pairs.n; i++) {
            char k[200], v[200]; /* peer text: escaped and bounded in the log */
            ns_log_escape(pairs.v[i].key, strlen(pairs.v[i].key), 64, k, sizeof(k));
            ns_log_escape(pairs.v[i].value, strlen(pairs.v[i].value), 64, v, sizeof(v));
            NS_LOG_I("updateConfig %s=%s", k, v);
            set_property(cfg, pairs.v[i].key, pairs.v[i].value, false, SET_UPDATE, NULL, 0);
        }
        record_update_locked(cfg, done, arg);
    }
    pthread_mutex_unlock(&cfg->lock);
    if (res == NS_CONFIG_UPDATE_OK)
        request_write(cfg);
out:
    pair_list_free(&pairs);
    ns_buf_free(&clean);
    return res;
}

/* ns_config_update waits here for its write. */
typedef struct update_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int rc;
} update_wait_t;

static void on_update_written(void *arg, int rc)
{
    update_wait_t *w = arg;
    pthread_mutex_lock(&w->lock);
    w->rc = rc;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

ns_config_update_result_t ns_config_update(ns_config_t *cfg, const char *text, size_t len,
                                           char *why, size_t whylen)
{
    update_wait_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
    ns_config_update_result_t res =
        ns_config_update_async(cfg, text, len, why, whylen, on_update_written, &w);
    if (res == NS_CONFIG_UPDATE_OK) {
        pthread_mutex_lock(&w.lock);
        while (!w.done)
            pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
        if (w.rc != 0) {
            res = NS_CONFIG_UPDATE_PERSIST_FAILED;
            ns_set_err(why, whylen, "%s", ns_strerror(w.rc));
        }
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return res;
}

/* ---- the controller's 1009 and 1010 ------------------------------------------------------- */

typedef struct named_value {
    const char *key;
    char *value; /* owned */
} named_value_t;

/* Sets key=value in the list, replacing an earlier value of the key (Java's putAll order). */
static void put_named(named_value_t **v, size_t *n, const char *key, const char *value)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*v)[i].key, key) == 0) {
            free((*v)[i].value);
            (*v)[i].value = ns_xstrdup(value);
            return;
        }
    }
    *v = ns_xrealloc(*v, (*n + 1) * sizeof(named_value_t));
    (*v)[(*n)++] = (named_value_t){key, ns_xstrdup(value)};
}

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named_value_t *)a)->key, ((const named_value_t *)b)->key);
}

void ns_config_dump_controller(ns_config_t *cfg, ns_buf_t *out)
{
    pthread_mutex_lock(&cfg->lock);
    named_value_t *v = NULL;
    size_t n = 0;
    ns_buf_t val = NS_BUF_INIT;
    /* the -c file's keys (Java's allConfigs): their text, or the value of the field they set */
    for (size_t i = 0; i < cfg->extra_count; i++)
        put_named(&v, &n, cfg->extra_keys[i], cfg->extra_values[i]);
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        bool object = o->group == G_SERVER || o->group == G_CTL || o->group == G_JRAFT;
        if (!object && !((o->group == G_NAMESRV || o->group == G_EXT) && cfg->file_set[i]))
            continue;
        val.len = 0;
        if (format_value(cfg, o, &val, false)) /* null fields are skipped, as in Java */
            put_named(&v, &n, opt_field_name(o), ns_buf_cstr(&val));
    }
    /* the objects last: they win over the file's text (Configuration.getAllConfigs) */
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (o->group != G_SERVER && o->group != G_CTL && o->group != G_JRAFT)
            continue;
        val.len = 0;
        if (format_value(cfg, o, &val, false))
            put_named(&v, &n, opt_field_name(o), ns_buf_cstr(&val));
    }
    qsort(v, n, sizeof(named_value_t), cmp_named);
    for (size_t i = 0; i < n; i++) {
        ns_java_text_put_utf8(out, v[i].key, strlen(v[i].key));
        ns_buf_append_char(out, '=');
        ns_java_text_put_utf8(out, v[i].value, strlen(v[i].value));
        ns_buf_append_char(out, '\n');
        free(v[i].value);
    }
    free(v);
    ns_buf_free(&val);
    pthread_mutex_unlock(&cfg->lock);
}

ns_config_update_result_t ns_config_update_controller(ns_config_t *cfg, const char *text,
                                                      size_t len, char *why, size_t whylen)
{
    static const char *const fixed[] = {"configBlackList", "configStorePath", "rocketmqHome"};
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    ns_buf_t clean = NS_BUF_INIT;
    pair_list_t pairs = PAIR_LIST_INIT;
    ns_config_update_result_t res = NS_CONFIG_UPDATE_OK;
    ns_utf8_decode_java(text, len, &clean, NS_UTF8_KEEP_NUL);
    if (ns_properties_parse((const char *)clean.data, clean.len, collect_pair, &pairs, NULL) < 0) {
        res = NS_CONFIG_UPDATE_BAD_TEXT;
        goto out;
    }
    pthread_mutex_lock(&cfg->lock);
    for (size_t i = 0; i < pairs.n && res == NS_CONFIG_UPDATE_OK; i++)
        if (in_black_list(cfg->ctl.config_black_list, fixed, NS_ARRAY_SIZE(fixed), pairs.v[i].key))
            res = NS_CONFIG_UPDATE_BLACKLISTED;
    /* the run-time keys only; other known keys would be stored by Java and used at its next
     * start, which mqnamesrv does not do from here (nothing is persisted) */
    for (size_t i = 0; i < pairs.n && res == NS_CONFIG_UPDATE_OK; i++) {
        const char *key = pairs.v[i].key;
        const opt_t *ctl_row = NULL;
        bool known = false;
        for (size_t j = 0; j < NOPTS; j++) {
            if (strcmp(opts[j].key, key) != 0)
                continue;
            known = true;
            if (opts[j].group == G_CTL && (opt_flags(&opts[j]) & F_CTL_RUNTIME))
                ctl_row = &opts[j];
        }
        char reason[256];
        if (known && ctl_row == NULL) {
            ns_set_err(why, whylen,
                       "Can not update config %s remotely: the controller changes "
                       "electMasterMaxRetryCount, enableElectUncleanMaster and "
                       "notifyBrokerRoleChanged only; set it in the config file.",
                       key);
            res = NS_CONFIG_UPDATE_NOT_REMOTE;
        } else if (ctl_row != NULL &&
                   !loads_strictly(ctl_row, pairs.v[i].value, reason, sizeof(reason))) {
            ns_set_err(why, whylen, "Can not update config %s remotely: %s.", key, reason);
            res = NS_CONFIG_UPDATE_NOT_REMOTE;
        }
    }
    if (res == NS_CONFIG_UPDATE_OK) {
        for (size_t i = 0; i < pairs.n; i++) {
            for (size_t j = 0; j < NOPTS; j++) {
                const opt_t *o = &opts[j];
                if (o->group != G_CTL || !(opt_flags(o) & F_CTL_RUNTIME) ||
                    strcmp(o->key, pairs.v[i].key) != 0)
                    continue;
                char k[200], v[200];
                ns_log_escape(pairs.v[i].key, strlen(pairs.v[i].key), 64, k, sizeof(k));
                ns_log_escape(pairs.v[i].value, strlen(pairs.v[i].value), 64, v, sizeof(v));
                NS_LOG_I("controller updateConfig %s=%s", k, v);
                apply(cfg, o, pairs.v[i].value, false, true, NULL, 0);
            }
        }
    } else if (res == NS_CONFIG_UPDATE_NOT_REMOTE) {
        NS_LOG_W("controller updateConfig refused: %s", why != NULL ? why : "");
    }
    pthread_mutex_unlock(&cfg->lock);
out:
    pair_list_free(&pairs);
    ns_buf_free(&clean);
    return res;
}
