/* Internals of the route module shared by its files: route.c (tables, registration,
 * unregistration), route_query.c (JSON answers), route_notify.c, route_logq.c and
 * route_stats.c. Everything here is protected by ns_route.lock. */
#ifndef NS_ROUTE_INT_H
#define NS_ROUTE_INT_H

#include <pthread.h>

#include "ns_route.h"
#include "ns_common.h"
#include "ns_hmap.h"
#include "ns_log.h"

/* PermName bits. */
#define NS_PERM_WRITE 2
#define NS_PERM_READ 4

/* One brokerAddrs entry. */
typedef struct ns__route_addr {
    int64_t id; /* broker id */
    char *addr; /* owned "ip:port" */
} ns__route_addr_t;

/* The parts of route answers that depend on one broker name only, in one JSON mode. Route
 * reads copy these bytes instead of escaping and formatting the same strings again. */
typedef struct ns__route_bname_json {
    char *broker_data;      /* owned: the BrokerData object as answers list it; NULL = !has_bd */
    size_t broker_data_len; /* bytes at broker_data */
    char *qd_head;          /* owned: {"brokerName":<name>,"perm":  (every QueueData starts so) */
    size_t qd_head_len;     /* bytes at qd_head */
} ns__route_bname_json_t;

typedef struct ns__route_topic ns__route_topic_t;

/* Everything known under one broker name: its BrokerData (when has_bd) and the index of the
 * topics holding a QueueData of this name, so that per-broker operations cost O(its topics).
 * Lives while has_bd or ntopics > 0. QueueDatas refer to it by pointer, so a broker name is
 * stored once however many topics it serves. */
typedef struct ns__route_bname {
    char *name;              /* owned; the key in ns_route.bnames */
    bool has_bd;             /* present in brokerAddrTable */
    char *cluster;           /* BrokerData.cluster (set at creation), owned */
    char *zone;              /* BrokerData.zoneName, owned, NULL = null */
    bool acting_master;      /* BrokerData.enableActingMaster */
    ns__route_addr_t *addrs; /* brokerAddrs, sorted by id, naddrs entries */
    size_t naddrs;
    size_t addrs_cap;
    ns__route_topic_t **topics; /* the topics holding a QueueData of this name, unordered; a
                                   QueueData's bidx is its topic's position here */
    uint32_t ntopics;           /* entries in topics */
    uint32_t topics_cap;        /* entries allocated */
    /* Encoded pieces, indexed by ns_json_mode_t. qd_head is set at creation (the name never
     * changes); broker_data is re-encoded by ns__route_bname_encode_locked() after every change
     * of the BrokerData fields above. */
    ns__route_bname_json_t json[2];
    uint32_t snap_idx; /* route_snapshot.c: this record's index in the snapshot being written
                          (only under write_mutex) */
    uint64_t changes;  /* bumped by every change of this name's BrokerData, topics or
                          QueueDatas: a repeated registration may skip its work only while this
                          stayed as it was (ns_route_register_repeat) */
    uint64_t astamp;   /* answer stamp: a fresh ns__route_next_stamp() at creation and whenever
                          json[*].broker_data changes (ns__route_bname_encode_locked), so that
                          cached answers of its topics stop matching (ns_route_cache.h) */
} ns__route_bname_t;

/* One QueueData (32 bytes). */
typedef struct ns__route_qd {
    ns__route_bname_t *b; /* its broker name */
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_sys_flag;
    uint32_t bidx; /* position of this topic in b->topics */
} ns__route_qd_t;

/* One topicQueueTable entry, in one allocation: this header, the name, then (8-byte aligned)
 * qd_cap QueueDatas sorted by broker name (binary search, and the order in which answers list
 * them). Never empty while in the table. Growing it may move it: route.c then updates the map
 * and the broker names' topic vectors. */
struct ns__route_topic {
    uint64_t astamp;   /* answer stamp: a fresh ns__route_next_stamp() at creation and after
                          every change of its QueueDatas (ns__route_topic_touch) */
    uint32_t nqd;      /* QueueDatas in use */
    uint32_t qd_cap;   /* QueueDatas allocated */
    uint32_t stamp;    /* registration pass marker (deleteTopicWithBrokerRegistration) */
    uint32_t name_len; /* bytes of name without the NUL */
    char name[];       /* NUL-terminated; the key in ns_route.topics */
};

/* Where a topic's QueueDatas start: after the name, rounded up to 8 bytes. */
static inline size_t ns__route_topic_qd_offset(size_t name_len)
{
    return (sizeof(ns__route_topic_t) + name_len + 1 + 7) & ~(size_t)7;
}

static inline ns__route_qd_t *ns__route_topic_qds(const ns__route_topic_t *t)
{
    return (ns__route_qd_t *)(void *)((char *)(uintptr_t)t +
                                      ns__route_topic_qd_offset(t->name_len));
}

/* clusterAddrTable entry: the set of broker names (keys are owned copies, value = key). */
typedef struct ns__route_cluster {
    char *name; /* owned */
    ns_hmap_t names;
} ns__route_cluster_t;

/* brokerLiveTable entry, keyed by "cluster\0addr". */
typedef struct ns__route_live {
    char *key;               /* owned cluster '\0' addr '\0' */
    size_t klen;             /* bytes of the key without the final NUL */
    const char *cluster;     /* view into key */
    const char *addr;        /* view into key */
    uint64_t last_update_ms; /* atomic: refreshed under the read lock by heartbeats */
    int64_t timeout_ms;      /* heartbeatTimeoutMillis */
    ns_data_version_t dv;    /* DataVersion of the latest registration */
    uint64_t conn_id;        /* connection the entry is bound to (route.md, Fencing): the newest
                                that carried a registration of it; 0 = none (restored) */
    uint64_t gen;            /* registration generation: ns_route.gen when last registered or
                                restored; expiry removes only the generation it judged */
    bool restored;           /* restored from a snapshot and not registered since */
    uint64_t rep_id;         /* body_id of the last full registration, 0 = none */
    uint64_t rep_bchanges;   /* its broker name's `changes` right after it */
    uint32_t rep_left;       /* repeats it may still stand for before a full one is due */
    char *ha_addr;           /* owned, NULL = null */
} ns__route_live_t;

/* filterServerTable entry, keyed like the live table. */
typedef struct ns__route_filter {
    char *key; /* owned, as in the live entry */
    size_t klen;
    char **servers; /* owned array of owned strings */
    size_t n;
} ns__route_filter_t;

/* topicQueueMappingInfoTable entry: infos sorted by bname, currIdMap sorted by logical id. */
typedef struct ns__route_mapping {
    char *topic; /* owned key */
    ns_mapping_info_t *infos;
    size_t n;
} ns__route_mapping_t;

/* A connection that carried a registration, from its first one until it closes: closing a
 * client connection that registered nothing costs one lookup, and the unregister fence tells a
 * broker's old connection from an admin tool's (route.md, Fencing). */
typedef struct ns__route_conn {
    uint64_t id; /* the key (its 8 bytes) */
    size_t refs; /* live entries whose conn_id is id (0: it registered, its brokers moved on) */
} ns__route_conn_t;

/* A copy of s, or NULL for NULL (Java's null fields). */
static inline char *ns__route_dup_or_null(const char *s)
{
    return s ? ns_xstrdup(s) : NULL;
}

/* Log lines queued while the lock is held and written after it is released (route.c): each is
 * one level byte, the text and a NUL. */
typedef struct logq {
    ns_buf_t buf;
} logq_t;
void ns__route_logq_add(logq_t *q, ns_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ns__route_logq_flush(logq_t *q);

struct ns_route {
    const ns_config_t *cfg;
    pthread_rwlock_t lock;       /* writer-preferring: registrations must not starve */
    pthread_mutex_t write_mutex; /* held by a writer for its whole operation (route.c) */
    uint32_t slice_left;         /* steps until the current writer lets readers in */
    ns_hmap_t topics;            /* topic -> ns__route_topic_t */
    ns_hmap_t bnames;            /* broker name -> ns__route_bname_t */
    ns_hmap_t clusters;          /* cluster -> ns__route_cluster_t */
    ns_hmap_t live;              /* "cluster\0addr" -> ns__route_live_t */
    ns_hmap_t filters;           /* "cluster\0addr" -> ns__route_filter_t */
    ns_hmap_t mappings;          /* topic -> ns__route_mapping_t */
    ns_hmap_t conns;             /* 8-byte conn id -> ns__route_conn_t */
    uint32_t stamp;              /* last registration pass marker */
    uint64_t gen;                /* last registration generation handed out (live entries) */
    uint64_t changes;            /* atomic: bumped by every change of persistent state, see
                                    ns_route_changes() */
    uint64_t broker_changes;     /* atomic: bumped when a BrokerData's brokers changed, see
                                    ns_route_broker_changes() */
    bool sealed;                 /* atomic: ns_route_seal() was called */
    uint64_t topic_gen;          /* moved whenever a topic record is freed or moved (under the
                                    write lock): while it stays, a record seen under the read lock
                                    is still there, under its name (the answer cache's entries
                                    hold records by pointer, ns_route_cache.h) */
    uint64_t answer_seq;         /* last answer stamp handed out (writers only, under the write
                                    lock, or before the table is shared) */
    bool writing;                /* a write operation is under way (set and cleared under the
                                    write lock): readers that see it between two of its slices
                                    do not fill the answer cache from a half-applied change */
    pthread_mutex_t notice_lock; /* guards the notice queue (route_notify.c) */
    ns_route_notice_t *notices;  /* queued NOTIFY_MIN_BROKER_ID_CHANGE notices */
    size_t notice_count;         /* entries in notices (read unlocked as a hint) */
    size_t notice_cap;
};

/* The read side of the table's lock, for the readers of every route*.c file, and its release
 * (either side). A failing lock call is a broken invariant. */
static inline void ns__route_rdlock(ns_route_t *r)
{
    NS_ASSERT(pthread_rwlock_rdlock(&r->lock) == 0);
}

static inline void ns__route_unlock(ns_route_t *r)
{
    NS_ASSERT(pthread_rwlock_unlock(&r->lock) == 0);
}

/* route_notify.c: queues the notices for group b after its smallest id changed
 * (docs/protocol.md, section NOTIFY_MIN_BROKER_ID_CHANGE (905)): to every member when
 * offline_addr is set or the group has one member, else to every member but the smallest. Logs
 * Java's "min broker id changed" line into lq. Caller holds the write lock; does nothing when
 * the group is empty. */
void ns__route_notice_min_id_locked(ns_route_t *r, const ns__route_bname_t *b,
                                    const char *offline_addr, const char *ha_addr, logq_t *lq);
void ns__route_notices_init(ns_route_t *r);
void ns__route_notices_destroy(ns_route_t *r);

/* route_query.c: the encoded pieces of a broker name. encode_head fills json[*].qd_head of a
 * new record; encode_locked re-encodes json[*].broker_data from the BrokerData fields (frees it
 * when !has_bd) and returns whether the bytes changed; json_free releases both. */
void ns__route_bname_encode_head(ns__route_bname_t *b);
bool ns__route_bname_encode_locked(ns_route_t *r, ns__route_bname_t *b);
void ns__route_bname_json_free(ns__route_bname_t *b);

/* Throws every encoded piece away and encodes it again from the tables, under the write lock.
 * Tests call it to check that no encoded piece is ever stale: an answer must not change. */
void ns__route_reencode_all(ns_route_t *r);

/* Checks the table's internal links (topic map keys, sorted QueueDatas, the broker names'
 * topic vectors and positions, encoded pieces present). Returns NULL when they hold, else what
 * is broken. Takes the read lock. For tests and fuzzers. */
const char *ns__route_check_consistency(ns_route_t *r);

/* Builders for route_snapshot.c's decoder, which fills an empty table that no other thread
 * uses yet (no lock needed; every link is kept as route.c keeps it). */
ns__route_bname_t *ns__route_bname_get_or_create(ns_route_t *r, const char *name);
/* brokerAddrs.put(id, addr); false when the id was already there (nothing changed). */
bool ns__route_addrs_put_new(ns__route_bname_t *b, int64_t id, const char *addr);
bool ns__route_cluster_add_name(ns_route_t *r, const char *cluster, const char *name);
/* A QueueData of b in topic `name` (the topic created if needed); false when b already has
 * one there (nothing changed). */
bool ns__route_topic_add_qd(ns_route_t *r, const char *name, ns__route_bname_t *b,
                            int32_t read_queue_nums, int32_t write_queue_nums, int32_t perm,
                            int32_t topic_sys_flag);
/* A new live entry (timeout, DataVersion and HA address to be filled by the caller), or NULL
 * when (cluster, addr) has one already. Bound to no connection. */
ns__route_live_t *ns__route_live_add(ns_route_t *r, const char *cluster, const char *addr);
void ns__route_filter_put(ns_route_t *r, const char *cluster, const char *addr,
                          char *const *servers, size_t n);
void ns__route_mapping_put(ns_route_t *r, const ns_mapping_info_t *info, const char *topic);
/* Empties every table (a snapshot that failed half-way). Caller owns the table exclusively. */
void ns__route_clear(ns_route_t *r);
/* A fresh answer stamp (never handed out before, so a freed topic or broker name whose memory is
 * reused can never match an old cache entry). Caller is the writer. */
static inline uint64_t ns__route_next_stamp(ns_route_t *r)
{
    return ++r->answer_seq;
}

/* A topic record is about to be freed or moved (ns_route.topic_gen). Caller is the writer. */
static inline void ns__route_topic_gone(ns_route_t *r)
{
    r->topic_gen++;
}

/* A topic's QueueDatas changed: its cached answers are stale. */
static inline void ns__route_topic_touch(ns_route_t *r, ns__route_topic_t *t)
{
    t->astamp = ns__route_next_stamp(r);
}

/* Marks a change (ns_route_changes) and hands out a registration generation. */
void ns__route_mark_changed(ns_route_t *r);
uint64_t ns__route_next_gen(ns_route_t *r);
/* The writer mutex alone (no rwlock): while held, no writer runs, so the tables may be read
 * without the read lock and readers are never held up. For the snapshot encoder. */
void ns__route_writers_pause(ns_route_t *r);
void ns__route_writers_resume(ns_route_t *r);

/* Calls hook(arg) in every expiry scan that found an expired broker, between its read phase
 * and its write phase, with no lock held (NULL removes it). Tests use it to register between
 * the two. */
void ns__route_set_scan_hook(void (*hook)(void *), void *arg);

/* Lookups, caller holds the lock. */
ns__route_qd_t *ns__route_find_qd_locked(const ns__route_topic_t *t, const char *bname,
                                         size_t *pos);
static inline ns__route_live_t *ns__route_live_get_locked(const ns_route_t *r, const char *cluster,
                                                          const char *addr)
{
    return ns_hmap_get_pair(&r->live, cluster, addr);
}
static inline ns__route_filter_t *ns__route_filter_get_locked(const ns_route_t *r,
                                                              const char *cluster, const char *addr)
{
    return ns_hmap_get_pair(&r->filters, cluster, addr);
}

#endif
