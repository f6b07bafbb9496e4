/* Configuration: the Java NamesrvConfig, NettyServerConfig and NettyClientConfig property sets
 * (same keys, defaults and `-p` order), a few mqnamesrv extensions, the Java-properties file
 * loader and the command line.
 *
 * One table of {name, type, default, field, group, remote class, ranges, help} in config.c
 * drives the file loader, `--set`, `-p`, 319 GET_NAMESRV_CONFIG and 318 UPDATE_NAMESRV_CONFIG,
 * and the key reference of docs/config.md, conf/namesrv.conf and man/mqnamesrv.8
 * (tools/config_reference.c writes them from ns_config_key_at(); ctest checks they match).
 *
 * Threads: the struct is filled once at startup (no lock needed then). Afterwards only 318 writes
 * it, under `lock`, storing every scalar with NS_CFG_SET and replacing (never freeing) strings.
 * Fields marked RUNTIME are meant to be re-read per use: read them with NS_CFG_GET(), a relaxed
 * atomic load. Every other field takes effect at restart: read it once at startup (or with
 * NS_CFG_GET() if read later). A string pointer read by another thread stays valid until
 * ns_config_free(). */
#ifndef NS_CONFIG_H
#define NS_CONFIG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ns_buf.h"
#include "ns_persist.h"
#include "ns_properties.h"

#define NS_CFG_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define NS_CFG_SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

/* Room for the option table of config.c (checked there at compile time). */
#define NS_CONFIG_MAX_OPTS 256
/* The largest properties file read (-c, tls.config.file, the 318 store): a real one holds a
 * few KB (conf/namesrv.conf, a comment on every key, 18 KB); a cap keeps `-c /dev/zero`-like
 * mistakes from filling memory. */
#define NS_CONFIG_FILE_MAX (16u * 1024 * 1024)

/* NettyClientConfig: printed by `-p` and accepted in `-c` (as Java does). The notifier's
 * connections to brokers (NOTIFY_MIN_BROKER_ID_CHANGE) use connectTimeoutMillis,
 * clientChannelMaxIdleTimeSeconds and useTLS; the thread and semaphore counts are Java's
 * executor sizes and change nothing here. Field names follow the Java fields. */
typedef struct ns_client_config {
    int32_t client_worker_threads;                /* clientWorkerThreads (4) */
    int32_t client_callback_executor_threads;     /* clientCallbackExecutorThreads (CPUs) */
    int32_t client_oneway_semaphore_value;        /* clientOnewaySemaphoreValue (65535) */
    int32_t client_async_semaphore_value;         /* clientAsyncSemaphoreValue (65535) */
    int32_t connect_timeout_millis;               /* connectTimeoutMillis (3000) */
    int64_t channel_not_active_interval;          /* channelNotActiveInterval (60000) */
    bool is_scan_available_name_srv;              /* isScanAvailableNameSrv; set key is
                                                     scanAvailableNameSrv (Java's setter) */
    int32_t client_channel_max_idle_time_seconds; /* clientChannelMaxIdleTimeSeconds (120) */
    int32_t client_socket_snd_buf_size;           /* clientSocketSndBufSize (0) */
    int32_t client_socket_rcv_buf_size;           /* clientSocketRcvBufSize (0) */
    bool client_pooled_byte_buf_allocator_enable; /* clientPooledByteBufAllocatorEnable */
    bool client_close_socket_if_timeout;          /* clientCloseSocketIfTimeout (true) */
    bool use_tls;                                 /* useTLS (false) */
    char *socks_proxy_config;                     /* socksProxyConfig ("{}") */
    int32_t write_buffer_high_water_mark;         /* writeBufferHighWaterMark (0) */
    int32_t write_buffer_low_water_mark;          /* writeBufferLowWaterMark (0) */
    bool disable_callback_executor;               /* disableCallbackExecutor */
    bool disable_netty_worker_group;              /* disableNettyWorkerGroup */
    int64_t max_reconnect_interval_time_seconds;  /* maxReconnectIntervalTimeSeconds (60) */
    bool enable_reconnect_for_go_away;            /* enableReconnectForGoAway (true) */
} ns_client_config_t;

/* TLS and PROXY protocol keys (Java's TlsSystemConfig system properties, plus ours). Java reads
 * them from -D options and from tls.config.file; mqnamesrv from the -c file and --set (in the
 * place of -D), then tls.config.file, whose values win for the keys Java reads from it (every key
 * below but tls.server.mode, tls.enable, tls.config.file and ours), as in Java's TlsHelper. Read
 * once at start (and at a TLS reload, on loop 0); 318 never changes them. NULL strings: unset. */
typedef struct ns_tls_config {
    char *server_mode;             /* tls.server.mode: disabled, permissive, enforcing */
    bool test_mode_enable;         /* tls.test.mode.enable (true) */
    char *server_cert_path;        /* tls.server.certPath */
    char *server_key_path;         /* tls.server.keyPath */
    char *server_key_password;     /* tls.server.keyPassword (never printed) */
    char *server_need_client_auth; /* tls.server.need.client.auth: none, optional, require */
    bool server_auth_client;       /* tls.server.authClient */
    char *server_trust_cert_path;  /* tls.server.trustCertPath */
    char *ciphers;                 /* tls.ciphers */
    char *protocols;               /* tls.protocols */
    char *config_file;             /* tls.config.file (/etc/rocketmq/tls.properties) */
    bool enable;                   /* tls.enable: the notifier's connections use TLS */
    char *client_cert_path;        /* tls.client.certPath */
    char *client_key_path;         /* tls.client.keyPath */
    char *client_key_password;     /* tls.client.keyPassword (never printed) */
    bool client_auth_server;       /* tls.client.authServer */
    char *client_trust_cert_path;  /* tls.client.trustCertPath */
    int64_t handshake_timeout_ms;  /* tlsHandshakeTimeoutMillis (ours): TLS handshakes and PROXY
                                      headers begun but not finished in this time are closed */
    int64_t session_timeout_s;     /* tlsSessionTimeoutSeconds (ours): how long a TLS session may
                                      be resumed; 0: never */
    int64_t session_cache_size;    /* tlsSessionCacheSize (ours): TLS 1.2 session ids kept */
    char *proxy_trusted;           /* proxyProtocolTrustedProxies (ours): peers allowed to send a
                                      PROXY header ("": any, as Java) */
} ns_tls_config_t;

/* ControllerConfig and JraftConfig (RocketMQ 5.5.0): read from the same -c file, printed by -p
 * after NettyClientConfig when enableControllerInNamesrv=true, as Java's NamesrvStartup does.
 * A key both NamesrvConfig and ControllerConfig have (rocketmqHome, configStorePath,
 * scanNotActiveBrokerInterval, configBlackList, the metrics keys) sets both, as in Java, with
 * each its own default. 318 never touches them; 1009 (UPDATE_CONTROLLER_CONFIG) changes the
 * fields marked RUNTIME (docs/controller.md). */
typedef struct ns_controller_config {
    char *rocketmq_home;     /* rocketmqHome */
    char *config_store_path; /* configStorePath */
    char *controller_type;   /* controllerType: DLedger (jRaft is refused at start) */
    int64_t scan_not_active_broker_interval; /* scanNotActiveBrokerInterval, ms */
    int32_t controller_thread_pool_nums;     /* controllerThreadPoolNums (accepted, not used) */
    int32_t controller_request_thread_pool_queue_capacity; /* (accepted, not used) */
    char *controller_dleger_group;                         /* controllerDLegerGroup; NULL = unset */
    char *controller_dleger_peers;         /* controllerDLegerPeers: "n0-ip:port;n1-..." */
    char *controller_dleger_self_id;       /* controllerDLegerSelfId: "n0" */
    int32_t mapped_file_size;              /* mappedFileSize (DLedger's; accepted, not used) */
    char *controller_store_path;           /* controllerStorePath ("" = $HOME/DLedgerController) */
    int32_t elect_master_max_retry_count;  /* electMasterMaxRetryCount, RUNTIME */
    bool enable_elect_unclean_master;      /* enableElectUncleanMaster, RUNTIME */
    bool is_process_read_event;            /* isProcessReadEvent (key processReadEvent) */
    bool notify_broker_role_changed;       /* notifyBrokerRoleChanged, RUNTIME */
    int64_t scan_inactive_master_interval; /* scanInactiveMasterInterval, ms */
    char *metrics_exporter_type;           /* metricsExporterType (the controller's copy) */
    char *metrics_grpc_exporter_target;    /* metricsGrpcExporterTarget */
    char *metrics_grpc_exporter_header;    /* metricsGrpcExporterHeader */
    int64_t metric_grpc_exporter_time_out_in_mills;    /* metricGrpcExporterTimeOutInMills */
    int64_t metric_grpc_exporter_interval_in_mills;    /* metricGrpcExporterIntervalInMills */
    int64_t metric_logging_exporter_interval_in_mills; /* metricLoggingExporterIntervalInMills */
    int32_t metrics_prom_exporter_port; /* metricsPromExporterPort (the controller's copy) */
    char *metrics_prom_exporter_host;   /* metricsPromExporterHost (the controller's copy) */
    char *metrics_label;                /* metricsLabel */
    bool metrics_in_delta;              /* metricsInDelta */
    char *config_black_list;            /* configBlackList (1009's, ';'-separated) */
    /* JraftConfig (controllerType=jRaft, which mqnamesrv refuses: accepted and printed) */
    int32_t jraft_election_timeout_ms;    /* jRaftElectionTimeoutMs */
    int32_t jraft_scan_wait_timeout_ms;   /* jRaftScanWaitTimeoutMs */
    int32_t jraft_snapshot_interval_secs; /* jRaftSnapshotIntervalSecs */
    char *jraft_group_id;                 /* jRaftGroupId */
    char *jraft_server_id;                /* jRaftServerId */
    char *jraft_init_conf;                /* jRaftInitConf */
    char *jraft_controller_rpc_addr;      /* jRaftControllerRPCAddr */
} ns_controller_config_t;

typedef struct ns_config {
    /* NamesrvConfig */
    char *rocketmq_home;                      /* rocketmqHome; NULL = unset */
    char *kv_config_path;                     /* kvConfigPath */
    char *config_store_path;                  /* configStorePath (the -c file when given) */
    char *product_env_name;                   /* productEnvName */
    bool cluster_test;                        /* clusterTest */
    bool order_message_enable;                /* orderMessageEnable, RUNTIME */
    bool return_order_topic_config_to_broker; /* returnOrderTopicConfigToBroker, RUNTIME */
    int32_t client_request_thread_pool_nums;  /* clientRequestThreadPoolNums */
    int32_t default_thread_pool_nums;         /* defaultThreadPoolNums */
    int32_t client_request_thread_pool_queue_capacity;
    int32_t default_thread_pool_queue_capacity;
    int64_t scan_not_active_broker_interval;    /* scanNotActiveBrokerInterval, ms */
    int32_t unregister_broker_queue_capacity;   /* unRegisterBrokerQueueCapacity */
    bool support_acting_master;                 /* supportActingMaster, RUNTIME */
    bool enable_all_topic_list;                 /* enableAllTopicList, RUNTIME */
    bool enable_topic_list;                     /* enableTopicList, RUNTIME */
    bool notify_min_broker_id_changed;          /* notifyMinBrokerIdChanged, RUNTIME */
    bool enable_controller_in_namesrv;          /* enableControllerInNamesrv */
    bool need_wait_for_service;                 /* needWaitForService, RUNTIME */
    int32_t wait_seconds_for_service;           /* waitSecondsForService, RUNTIME */
    bool delete_topic_with_broker_registration; /* deleteTopicWithBrokerRegistration, RUNTIME */
    char *config_black_list;                    /* configBlackList, ';'-separated */

    /* NettyServerConfig */
    char *bind_address;                           /* bindAddress */
    int32_t listen_port;                          /* listenPort (9876; 0 = ephemeral) */
    int32_t server_worker_threads;                /* serverWorkerThreads */
    int32_t server_callback_executor_threads;     /* serverCallbackExecutorThreads */
    int32_t server_selector_threads;              /* serverSelectorThreads */
    int32_t server_oneway_semaphore_value;        /* serverOnewaySemaphoreValue */
    int32_t server_async_semaphore_value;         /* serverAsyncSemaphoreValue */
    int32_t server_channel_max_idle_time_seconds; /* serverChannelMaxIdleTimeSeconds */
    int32_t server_socket_snd_buf_size;           /* serverSocketSndBufSize, 0 = OS */
    int32_t server_socket_rcv_buf_size;           /* serverSocketRcvBufSize, 0 = OS */
    int32_t write_buffer_high_water_mark;         /* writeBufferHighWaterMark */
    int32_t write_buffer_low_water_mark;          /* writeBufferLowWaterMark */
    int32_t server_socket_backlog;                /* serverSocketBacklog */
    bool server_netty_worker_group_enable;        /* serverNettyWorkerGroupEnable */
    bool server_pooled_byte_buf_allocator_enable; /* serverPooledByteBufAllocatorEnable */
    bool enable_shutdown_gracefully;              /* enableShutdownGracefully */
    int32_t shutdown_wait_time_seconds;           /* shutdownWaitTimeSeconds */
    bool use_epoll_native_selector;               /* useEpollNativeSelector */

    /* NettyClientConfig (see above) */
    ns_client_config_t client;

    /* mqnamesrv extensions (not Java keys; each documented in conf/namesrv.conf). Java does not
     * know them, so 319 shows one only once it was set by -c, --set or 318. */
    int64_t frame_max_length;      /* frameMaxLength: max frame, Java
                                      -Dcom.rocketmq.remoting.frameMaxLength */
    int64_t max_conn_output_bytes; /* connectionMaxPendingWriteBytes: unsent reply bytes before a
                                      peer that does not read is cut off (0: no limit) */
    char *log_path;                /* logPath: log file ("" = none) */
    char *log_level;               /* logLevel: ERROR, WARN, INFO or DEBUG; RUNTIME (318 applies
                                      it to the logger at once) */
    char *port_file;             /* portFile: write the bound port here once listening ("" = no) */
    int32_t io_threads;          /* ioThreads: I/O event loops (0 = one per CPU) */
    int32_t worker_thread_nice;  /* workerThreadNice: the worker thread's nice value (10) */
    char *metrics_exporter_type; /* metricsExporterType: PROM or DISABLE (RocketMQ 5.x key) */
    int32_t metrics_prom_exporter_port; /* metricsPromExporterPort (5557; 0 = any free port) */
    char *metrics_prom_exporter_host;   /* metricsPromExporterHost ("" = every IPv4 address) */
    bool traffic_log_enable;            /* trafficLogEnable: Java's per-second traffic lines */
    char *traffic_log_path;             /* trafficLogPath: where they go */
    bool acl_enable;                    /* aclEnable: check signatures (ns_acl.h); never remote */
    bool acl_reads_require_signature;   /* aclReadsRequireSignature; never remote */
    char *acl_plain_file; /* aclPlainFile: the account file ("" = conf/plain_acl.yml), relative
                             to rocketmqHome unless absolute; never remote */
    /* Budgets (docs/operations.md, "Limits that protect the server"); 0 = none where allowed. */
    int64_t max_partial_frame_bytes;  /* serverMaxPartialFrameBytes: frames being received */
    int64_t frame_receive_timeout_ms; /* frameReceiveTimeoutMillis: for one frame to arrive */
    int64_t max_worker_queue_bytes;   /* serverMaxWorkerQueueBytes: requests for the worker */
    int32_t conn_max_worker_requests; /* connectionMaxWorkerRequests: one peer's at the worker */
    int64_t conn_max_worker_bytes;    /* connectionMaxWorkerBytes: their bytes */
    int64_t max_pending_write_bytes;  /* serverMaxPendingWriteBytes: unread replies, all peers */
    int64_t register_max_inflated;    /* registerBodyMaxInflatedBytes, RUNTIME */
    int32_t register_max_ratio;       /* registerBodyMaxInflateRatio (0: none), RUNTIME */
    int32_t register_max_cpu_ms;      /* registerBodyMaxCpuMillis (0: none), RUNTIME */
    /* Route snapshot (docs/route.md, Snapshot): warm restart. */
    bool route_snapshot_enable;                 /* routeSnapshotEnable; never remote */
    char *route_snapshot_path;                  /* routeSnapshotPath ("" = routeSnapshot.bin next to
                                                   kvConfigPath); never remote */
    int64_t route_snapshot_interval_ms;         /* routeSnapshotIntervalMillis, RUNTIME */
    int64_t route_snapshot_max_age_ms;          /* routeSnapshotMaxAgeMillis, next start */
    int64_t route_answer_cache_max_bytes;       /* routeAnswerCacheMaxBytes, RUNTIME */
    ns_tls_config_t tls;                        /* tls.* and the PROXY protocol (see above) */
    ns_controller_config_t ctl;                 /* ControllerConfig, JraftConfig (see above) */
    unsigned char ext_set[NS_CONFIG_MAX_OPTS];  /* [option index]: this extension key was set
                                                    (319 shows it) */
    unsigned char file_set[NS_CONFIG_MAX_OPTS]; /* [option index]: the -c file or --set gave it
                                                    (1010 shows it as Java's allConfigs do) */

    /* Bookkeeping, not properties. */
    char *config_file;    /* the -c path, or NULL */
    bool print_config;    /* -p given: main prints ns_config_print() and exits 0 */
    bool controller_only; /* --controller (bin/mqcontroller, Java's ControllerStartup): the
                             controller alone, no NameServer (enable_controller_in_namesrv is
                             set with it); -p prints ControllerStartup's groups */
    /* Java's "all configs" keys that are not NamesrvConfig/NettyServerConfig fields nor our
     * extensions: NettyClientConfig keys and unknown keys read from -c or --set, with their raw
     * text. 319 shows them and 318 persists them; 318 updates the text of one already present
     * and ignores unknown keys otherwise (Java's mergeIfExist). Owned parallel arrays, unique
     * keys, in first-seen order. */
    char **extra_keys;
    char **extra_values;
    size_t extra_count, extra_cap;
    struct ns_strmap *extra_index; /* key -> position + 1 */
    /* Strings replaced by 318 while other threads may still read them: freed by
     * ns_config_free() only. */
    char **retired;
    size_t retired_count;
    pthread_mutex_t lock; /* serialises 318/319 against each other */
    /* The writes of configStorePath (config.c's; made by ns_config_init_defaults). */
    struct ns_config_saving *saving;
} ns_config_t;
typedef struct ns_config_saving ns_config_saving_t;

/* Fills every field with its Java default: rocketmqHome from $ROCKETMQ_HOME (NULL when unset),
 * kvConfigPath/configStorePath/logPath under $HOME (else the passwd home directory),
 * clientCallbackExecutorThreads = usable CPUs, listenPort 9876. Free with ns_config_free(). */
void ns_config_init_defaults(ns_config_t *cfg);
/* Frees every string the config owns. NULL is a no-op. */
void ns_config_free(ns_config_t *cfg);

/* Applies one property as Java's MixAll.properties2Object does to NamesrvConfig,
 * NettyServerConfig and NettyClientConfig (the -c file semantics): String trimmed (Java's
 * String.trim), boolean true only for "true" (any case), int/long with Integer.parseInt /
 * Long.parseLong (ASCII digits, optional sign, no blanks). Keys are Java's setter names
 * (scanAvailableNameSrv, not the field name isScanAvailableNameSrv). Returns 1 when the key is
 * known, 0 for an unknown key (remembered in extra_* nonetheless), or NS_ECONFIG with a reason
 * in err when `strict` is set and the value does not parse or is out of our sanity range (Java
 * ignores an unparsable number silently; so does strict=false). Takes no lock: for startup and
 * tests. */
int ns_config_set(ns_config_t *cfg, const char *key, const char *value, bool strict, char *err,
                  size_t errlen);

/* Loads a -c file: parses it, applies every pair strictly (a key given twice: the last one,
 * as in Java), warns on stderr "mqnamesrv: unknown property X at FILE:LINE" for keys no Java
 * config object nor mqnamesrv knows (they are kept, see extra_keys), sets configStorePath and
 * config_file to `path` and prints "load config properties file OK, <path>" to stdout as Java
 * does. Only a regular file of at most NS_CONFIG_FILE_MAX bytes is read (a FIFO or a device is
 * refused without waiting on it); a UTF-8 byte order mark at its start is skipped, a UTF-16
 * file refused (Java reads both as ISO-8859-1). Returns 0; -errno when the file cannot be read,
 * NS_ENOTREG or NS_ETOOBIG (err = "FILE: reason"); NS_EPROTO when it is not properties text
 * (malformed \uXXXX), err = "FILE:LINE: Malformed \uxxxx encoding."; NS_ECONFIG for a bad value,
 * err = "FILE:LINE: reason", or a UTF-16 file, err = "FILE: the file is UTF-16 ...". */
int ns_config_load_file(ns_config_t *cfg, const char *path, char *err, size_t errlen);

/* Reads tls.config.file (Java's TlsHelper.extractTlsConfigFromFile): when it is a readable
 * regular file, every key Java reads from it that the file holds replaces the value from -c /
 * --set (strictly checked; tls.server.mode, tls.enable and other keys there are ignored with a
 * warning, as Java ignores them). A missing file is no error (Java skips it). `live`: other
 * threads run (a TLS reload on SIGHUP): takes cfg->lock and keeps replaced strings alive. The
 * values do not count as set for 319 and 318's file. Warnings go to the log when `live`, else
 * to stderr. Returns 1 when the file was read, 0 when there is none; NS_ECONFIG with err =
 * "FILE:LINE: reason" (nothing applied), -errno for a file that exists but cannot be read. */
int ns_config_load_tls_file(ns_config_t *cfg, bool live, char *err, size_t errlen);

/* A TLS setting the server cannot start with, as a message, or NULL: outside test mode a
 * server that accepts TLS needs tls.server.certPath and tls.server.keyPath (Java's NameServer
 * dies at start then, with Netty's "NullPointerException: keyCertChain"). Files that cannot be
 * read are not checked here: as in Java, the server then starts and refuses TLS clients. */
const char *ns_config_tls_problem(const ns_config_t *cfg);

/* Java's NettyClientConfig.useTLS default: tls.enable when it was given, else whether
 * tls.server.mode is enforcing; a useTLS key from -c or --set wins. ns_config_parse_cli()
 * calls it after --set. */
void ns_config_derive_use_tls(ns_config_t *cfg);

/* Parses the command line as Java's NamesrvStartup does (commons-cli 1.5 DefaultParser):
 * -c/--configFile <file>, -p/--printConfigItem, -h/--help, -n/--namesrvAddr <list> (accepted,
 * ignored); unique prefixes of long options, --configFile=FILE, -cFILE, -c=FILE, bundled -pc F;
 * the first -c wins; non-option words are ignored. Plus mqnamesrv's long-only, repeatable
 * `--set key=value`, applied strictly after the -c file (unknown keys refused), and
 * `--version` (prints "mqnamesrv x.y.z (git REV)" to stdout, exit 0), and `--controller`
 * (mqcontroller: sets controller_only; -h then prints ControllerStartup's usage). Then loads
 * -c.
 * Output: -h prints Java's usage to stdout; a parse error prints "Unrecognized option: -x" or
 * "Missing argument for option: c" to stderr and the usage to stdout; -c/--set problems go to
 * stderr. Sets print_config for -p (the caller prints ns_config_print() and exits 0).
 * Returns 0 to go on, or -(status + 1) when the process should exit now with `status`: help and
 * version 0,
 * usage error 1, bad value 1, unreadable or malformed -c file 255 (Java's -1). */
int ns_config_parse_cli(ns_config_t *cfg, int argc, char **argv);

/* Java's usage text for `mqnamesrv -h` (commons-cli, width 110), byte-exact, and for
 * `mqcontroller -h` (ControllerStartup's). */
extern const char ns_config_usage[];
extern const char ns_config_usage_controller[];

/* True when rocketmqHome is unset: main must then print NS_CONFIG_HOME_MISSING_MSG to stdout
 * and exit 254, as Java does (after -p handling: -p does not need it). With controller_only,
 * the ControllerConfig's rocketmqHome is the one (ControllerStartup's check: print
 * NS_CONFIG_CTL_HOME_MISSING_MSG, exit 255). */
bool ns_config_home_missing(const ns_config_t *cfg);

/* True when metricsExporterType is PROM (any case): main starts the HTTP exporter. */
bool ns_config_metrics_enabled(const ns_config_t *cfg);
#define NS_CONFIG_HOME_MISSING_MSG                                                                 \
    "Please set the ROCKETMQ_HOME variable in your environment to match the location of the "      \
    "RocketMQ installation\n"
#define NS_CONFIG_CTL_HOME_MISSING_MSG                                                             \
    "Please set the ROCKETMQ_HOME or rocketmq.home.dir variable in your environment!\n"

/* Appends every property in Java's `-p` order, one "key=value\n" per line (no timestamp):
 * NamesrvConfig fields, NettyServerConfig fields, NettyClientConfig fields, by Java field name;
 * null strings as empty. Our extensions are not printed (Java does not know them). */
void ns_config_dump_java_order(ns_config_t *cfg, ns_buf_t *out);

/* Appends every mqnamesrv extension key (Java has no such field) with its current value, one
 * "key=value\n" per line, in table order. */
void ns_config_dump_extensions(ns_config_t *cfg, ns_buf_t *out);

/* Writes what `mqnamesrv -p` prints: each ns_config_dump_java_order() line, then each
 * ns_config_dump_extensions() line (after Java's, so a script reading Java's lines still finds
 * them first and in order), prefixed with
 * "yyyy-MM-dd HH:mm:ss INFO main - ", the time in GMT+8 as Java's console logback pattern
 * renders it. */
void ns_config_print(ns_config_t *cfg, FILE *fp);

/* Appends the 319 GET_NAMESRV_CONFIG body: every non-null NamesrvConfig and NettyServerConfig
 * property (current value), the extensions that were set, and every extra key (raw text), sorted
 * by key (byte order), "key=value\n" each, no escaping, as Java sends it (so a value holding a
 * line break shows as two lines; U+0000 is a 0x00 byte). Takes cfg->lock. */
void ns_config_dump_sorted(ns_config_t *cfg, ns_buf_t *out);

/* Appends what 318 writes to configStorePath: the pairs of ns_config_dump_sorted(), each key
 * and value escaped as java.util.Properties.store escapes them (ns_properties_escape), so that
 * ns_config_load_file() reads back exactly the configuration in memory, whatever a value holds
 * (Java writes the 319 text instead, see docs/config.md). Takes cfg->lock. */
void ns_config_dump_file(ns_config_t *cfg, ns_buf_t *out);

/* Applies a 318 UPDATE_NAMESRV_CONFIG body (properties text, as received) with Java's
 * semantics: body decoded as UTF-8 (ns_utf8_decode_java) then parsed as ISO-8859-1; any key in
 * the blacklist
 * (configBlackList, configStorePath, kvConfigPath, rocketmqHome, plus the ';'-separated
 * configBlackList entries) refuses the whole update; so does a key that 318 may never set (a
 * file, a directory or a protection switch) or a number outside the range 318 may set (the
 * option table's remote class and range, see docs/config.md); otherwise each known key is applied
 * with strict=false (bad numbers ignored), extra keys already present get their new text, unknown
 * keys are dropped; then ns_config_dump_file() is written to configStorePath atomically (temp
 * file in the same directory, fsync, rename, directory fsync; the previous file is first copied
 * to <path>.bak, as Java keeps one). A value 318 would persist as text that the -c loader
 * refuses (logLevel=LOUD) is refused like a key that is not remote, so that the file always
 * loads at the next start, and so is a value with a CR or LF for a key the update would store
 * (319 would show it as two lines, the second one a forged key; Java takes it). Takes cfg->lock
 * (not across the file write).
 *
 * An applied update is in force at once, as in Java; it is acknowledged once the file holding
 * it is on disk. A write that fails keeps it in force (as Java does), answers its request with
 * the error, logs once (ERROR) until a write succeeds again (WARN), counts
 * mqnamesrv_persist_failures_total{store="config"}, and the file is written again after a
 * growing pause (0.5 s doubling to 30 s) until the disk takes it. */
typedef enum ns_config_update_result {
    NS_CONFIG_UPDATE_OK = 0,
    NS_CONFIG_UPDATE_BLACKLISTED = 1,    /* 16 "Can not update config in black list." */
    NS_CONFIG_UPDATE_BAD_TEXT = 2,       /* 1 "string2Properties error"; nothing applied */
    NS_CONFIG_UPDATE_PERSIST_FAILED = 3, /* in force, file not written yet (logged, retried);
                                            the reason in `why` */
    NS_CONFIG_UPDATE_NOT_REMOTE = 4,     /* 16 with the reason in `why`; nothing applied */
} ns_config_update_result_t;
ns_config_update_result_t ns_config_update(ns_config_t *cfg, const char *text, size_t len,
                                           char *why, size_t whylen);

/* The 1010 GET_CONTROLLER_CONFIG body, as Java's controller Configuration gives it: the -c
 * file's keys (their text) overlaid with every ControllerConfig and NettyServerConfig field
 * (current values; the JraftConfig keys in the place of Java's jraftConfig object), sorted by
 * key, "key=value\n" each. Takes cfg->lock. */
void ns_config_dump_controller(ns_config_t *cfg, ns_buf_t *out);

/* Applies a 1009 UPDATE_CONTROLLER_CONFIG body (properties text): a blacklisted key (Java's:
 * configBlackList, configStorePath, rocketmqHome and the controller's configBlackList entries)
 * refuses the whole update (NS_CONFIG_UPDATE_BLACKLISTED); a known key that is not one of the
 * controller's run-time keys (electMasterMaxRetryCount, enableElectUncleanMaster,
 * notifyBrokerRoleChanged) refuses it too (NS_CONFIG_UPDATE_NOT_REMOTE, reason in why); else
 * the run-time keys apply at once and unknown keys are ignored. Nothing is persisted: a change
 * lasts until the process stops (put it in the -c file to keep it). Takes cfg->lock. */
ns_config_update_result_t ns_config_update_controller(ns_config_t *cfg, const char *text,
                                                      size_t len, char *why, size_t whylen);

/* ns_config_update without waiting for the disk: on NS_CONFIG_UPDATE_OK, done(arg, rc) (may be
 * NULL) runs once a write of the file holding the update ended (rc 0, or the write's -errno),
 * on the persister's thread (before the call returns without one). Never
 * NS_CONFIG_UPDATE_PERSIST_FAILED; any other result changed nothing and done is not called. */
ns_config_update_result_t ns_config_update_async(ns_config_t *cfg, const char *text, size_t len,
                                                 char *why, size_t whylen, ns_persist_done_fn *done,
                                                 void *arg);

/* Has the config file's later writes run on `persister`'s thread (NULL, the default: on the
 * updating thread). Call once, before the first update. */
void ns_config_use_persister(ns_config_t *cfg, ns_persister_t *persister);

/* ---- the option table, for the key reference ------------------------------------------ */

/* What 318 UPDATE_NAMESRV_CONFIG does with a key. */
typedef enum ns_config_key_class {
    NS_KEY_RUNTIME,    /* applies it at once */
    NS_KEY_NEXT_START, /* stores and persists it; it takes effect at the next start */
    NS_KEY_NEVER,      /* refuses the whole update (a file, a directory or a protection) */
    NS_KEY_CLIENT,     /* NettyClientConfig: not applied; the text of one the -c file gave is
                          rewritten as it is */
} ns_config_key_class_t;

/* One row of the option table as the reference shows it. */
typedef struct ns_config_key {
    const char *key;     /* the property name */
    const char *section; /* "NamesrvConfig", "NettyServerConfig", "NettyClientConfig",
                            "ControllerConfig", "JraftConfig" or "mqnamesrv" (ours) */
    const char *type;    /* "string", "boolean", "int" or "long" */
    ns_config_key_class_t remote;
    const char *def;        /* the default as text ("" for empty); NULL: unset */
    const char *def_prefix; /* written before def: "$HOME" (a path in the home directory),
                               "$" (def names an environment variable), else "" */
    bool cpus;              /* the default is the number of usable CPUs (def is NULL) */
    bool number;            /* int or long: the ranges below apply */
    int64_t min, max;       /* numbers: what -c and --set accept */
    int64_t rmin, rmax;     /* numbers: what 318 may set */
    bool secret;            /* printed masked by -p, the boot log and 319 */
    const char *help;       /* what it does (NULL only for NettyClientConfig keys) */
} ns_config_key_t;

/* Rows in the option table, in its order (the -p order within each section). */
size_t ns_config_key_count(void);

/* Row i (< ns_config_key_count()). The strings are static. */
void ns_config_key_at(size_t i, ns_config_key_t *out);

#endif
