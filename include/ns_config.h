/* Configuration: the Java NamesrvConfig, NettyServerConfig and NettyClientConfig property sets
 * (same keys, defaults and `-p` order), a few mqnamesrv extensions, the Java-properties file
 * loader and the command line.
 *
 * One table of {name, type, default, field, help} drives the file parser, `-p`, 319
 * GET_NAMESRV_CONFIG and 318 UPDATE_NAMESRV_CONFIG. Fields marked RUNTIME may be changed by
 * 318 while the server runs: read them with NS_CFG_GET(), which is a relaxed atomic load. */
#ifndef NS_CONFIG_H
#define NS_CONFIG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

#define NS_CFG_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define NS_CFG_SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

typedef struct ns_config {
    /* NamesrvConfig */
    char *rocketmq_home;                       /* rocketmqHome; NULL = unset */
    char *kv_config_path;                      /* kvConfigPath */
    char *config_store_path;                   /* configStorePath (the -c file when given) */
    char *product_env_name;                    /* productEnvName */
    bool cluster_test;                         /* clusterTest */
    bool order_message_enable;                 /* orderMessageEnable, RUNTIME */
    bool return_order_topic_config_to_broker;  /* returnOrderTopicConfigToBroker, RUNTIME */
    int32_t client_request_thread_pool_nums;   /* clientRequestThreadPoolNums */
    int32_t default_thread_pool_nums;          /* defaultThreadPoolNums */
    int32_t client_request_thread_pool_queue_capacity;
    int32_t default_thread_pool_queue_capacity;
    int64_t scan_not_active_broker_interval;   /* scanNotActiveBrokerInterval, ms */
    int32_t unregister_broker_queue_capacity;  /* unRegisterBrokerQueueCapacity */
    bool support_acting_master;                /* supportActingMaster, RUNTIME */
    bool enable_all_topic_list;                /* enableAllTopicList, RUNTIME */
    bool enable_topic_list;                    /* enableTopicList, RUNTIME */
    bool notify_min_broker_id_changed;         /* notifyMinBrokerIdChanged, RUNTIME */
    bool enable_controller_in_namesrv;         /* enableControllerInNamesrv */
    bool need_wait_for_service;                /* needWaitForService, RUNTIME */
    int32_t wait_seconds_for_service;          /* waitSecondsForService, RUNTIME */
    bool delete_topic_with_broker_registration; /* deleteTopicWithBrokerRegistration, RUNTIME */
    char *config_black_list;                   /* configBlackList, ';'-separated */

    /* NettyServerConfig */
    char *bind_address;                          /* bindAddress */
    int32_t listen_port;                         /* listenPort (9876; 0 = ephemeral) */
    int32_t server_worker_threads;               /* serverWorkerThreads */
    int32_t server_callback_executor_threads;    /* serverCallbackExecutorThreads */
    int32_t server_selector_threads;             /* serverSelectorThreads */
    int32_t server_oneway_semaphore_value;       /* serverOnewaySemaphoreValue */
    int32_t server_async_semaphore_value;        /* serverAsyncSemaphoreValue */
    int32_t server_channel_max_idle_time_seconds; /* serverChannelMaxIdleTimeSeconds */
    int32_t server_socket_snd_buf_size;          /* serverSocketSndBufSize, 0 = OS */
    int32_t server_socket_rcv_buf_size;          /* serverSocketRcvBufSize, 0 = OS */
    int32_t write_buffer_high_water_mark;        /* writeBufferHighWaterMark */
    int32_t write_buffer_low_water_mark;         /* writeBufferLowWaterMark */
    int32_t server_socket_backlog;               /* serverSocketBacklog */
    bool server_netty_worker_group_enable;       /* serverNettyWorkerGroupEnable */
    bool server_pooled_byte_buf_allocator_enable; /* serverPooledByteBufAllocatorEnable */
    bool enable_shutdown_gracefully;             /* enableShutdownGracefully */
    int32_t shutdown_wait_time_seconds;          /* shutdownWaitTimeSeconds */
    bool use_epoll_native_selector;              /* useEpollNativeSelector */

    /* mqnamesrv extensions (not Java keys; see docs/operations.md) */
    int64_t frame_max_length;    /* frameMaxLength: max frame, Java -Dcom.rocketmq.remoting.frameMaxLength */
    int64_t max_conn_output_bytes; /* connectionMaxPendingWriteBytes: unsent reply bytes before a
                                      peer that does not read is cut off */
    char *log_path;              /* logPath: log file ("" = none) */
    char *log_level;             /* logLevel: ERROR, WARN, INFO or DEBUG */
    char *port_file;             /* portFile: write the bound port here once listening */
    int32_t io_threads;          /* ioThreads: I/O event loops (0 = one per CPU) */

    /* Bookkeeping, not properties. */
    char *config_file;  /* the -c path, or NULL */
    bool print_config;  /* -p given */
    /* Every key=value read from the -c file and set by 318, unknown keys included (Java keeps
     * them and shows them in 319). Owned parallel arrays. */
    char **extra_keys;
    char **extra_values;
    size_t extra_count;
    pthread_mutex_t lock; /* serialises 318/319 against each other */
} ns_config_t;

/* Fills every field with its Java default (HOME-derived paths, ROCKETMQ_HOME from the
 * environment). Free with ns_config_free(). */
void ns_config_init_defaults(ns_config_t *cfg);
void ns_config_free(ns_config_t *cfg);

/* Applies one property the way Java's MixAll.properties2Object does: String trimmed, boolean
 * true only for "true" (any case), numbers with Java's parsers. Returns 1 when the key is a
 * known property, 0 for an unknown key (remembered in extra_* nonetheless), or NS_ECONFIG with
 * a reason in err when `strict` is set and the value does not parse (Java would ignore it
 * silently; our file loader refuses it). */
int ns_config_set(ns_config_t *cfg, const char *key, const char *value, bool strict, char *err,
                  size_t errlen);

/* Parses Java .properties text (ISO-8859-1 semantics: '#'/'!' comments, '=', ':' or blank as
 * separator, line continuations, \uXXXX and other escapes). Calls fn for each pair with the
 * 1-based line the pair starts on; stops and returns fn's result when it is non-zero. */
typedef int ns_properties_fn(void *arg, const char *key, const char *value, int line);
int ns_properties_parse(const char *text, size_t len, ns_properties_fn *fn, void *arg);

/* Loads a -c file: unknown keys are warned about, bad values are reported as "file:line: ..."
 * in err. Returns 0, -errno (unreadable file) or NS_ECONFIG. */
int ns_config_load_file(ns_config_t *cfg, const char *path, char *err, size_t errlen);

/* Parses the command line (-c, -p, -h, -n and mqnamesrv's long options). Returns 0 to go on,
 * or an exit status >= 0 + 1 encoded as -(status + 1) when the process should exit now
 * (help printed: exit 0; usage error: exit 1; unreadable -c file: 255; bad value: 1). */
int ns_config_parse_cli(ns_config_t *cfg, int argc, char **argv);

/* Appends every property in Java's `-p` order, one "key=value" per line (no timestamp). */
void ns_config_dump_java_order(ns_config_t *cfg, ns_buf_t *out);

/* Appends the 319 GET_NAMESRV_CONFIG body: NamesrvConfig + NettyServerConfig properties plus
 * every remembered extra key, sorted by key, "key=value\n" each. Takes cfg->lock. */
void ns_config_dump_sorted(ns_config_t *cfg, ns_buf_t *out);

/* Applies a 318 UPDATE_NAMESRV_CONFIG body (properties text). Returns 0 when applied and
 * persisted to configStorePath, NS_EPROTO when the text does not parse, or -16 (NO_PERMISSION)
 * ... see ns_config_update_result_t. Takes cfg->lock. */
typedef enum ns_config_update_result {
    NS_CONFIG_UPDATE_OK = 0,
    NS_CONFIG_UPDATE_BLACKLISTED = 1, /* 16 "Can not update config in black list." */
    NS_CONFIG_UPDATE_BAD_TEXT = 2,    /* 1 "string2Properties error" */
    NS_CONFIG_UPDATE_PERSIST_FAILED = 3,
} ns_config_update_result_t;
ns_config_update_result_t ns_config_update(ns_config_t *cfg, const char *text, size_t len);

#endif
