/* The route snapshot's file format: encoding the route table into bytes and loading those bytes
 * into an empty table (docs/route.md, Snapshot). Pure: no file, no thread (snapshot.c writes
 * and reads the file, and runs the periodic writes).
 *
 * Layout, every integer little-endian:
 *   header   magic "MQNSRTSN" (8 bytes), u32 format version (NS_ROUTE_SNAPSHOT_FORMAT), u32
 *            header length (this header with the version text), i64 write time (wall clock,
 *            ms since the epoch), u64 content length, u32 CRC32 (zlib's) of the content, u16
 *            length + the text of the mqnamesrv version that wrote it
 *   content  the broker names (BrokerData: cluster, zone, acting master, brokerAddrs), the
 *            cluster sets, the live entries (cluster, address, heartbeat timeout, DataVersion,
 *            HA address; not the connection, not the last heartbeat), the filter servers, the
 *            topics with their QueueDatas (broker names by index), the static-topic mappings.
 *   strings  u32 length + bytes (no NUL inside), 0xFFFFFFFF for Java's null.
 * A reader refuses anything it does not fully understand: another magic or format version, a
 * CRC32 or length that does not match, a string or count that runs past the end, a duplicate
 * entry, a QueueData of an unknown broker name, trailing bytes. */
#ifndef NS_ROUTE_SNAPSHOT_H
#define NS_ROUTE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_route.h"

#define NS_ROUTE_SNAPSHOT_MAGIC "MQNSRTSN"
#define NS_ROUTE_SNAPSHOT_FORMAT 1

/* What a snapshot holds, for the log line and the tests. */
typedef struct ns_route_snapshot_info {
    uint32_t format;     /* format version */
    int64_t written_ms;  /* wall clock of the write */
    char version[64];    /* mqnamesrv version text that wrote it (cut to fit) */
    size_t broker_names; /* BrokerData records */
    size_t live_brokers; /* live entries (broker addresses) */
    size_t topics;       /* topics */
    size_t queue_datas;  /* QueueDatas over all topics */
} ns_route_snapshot_info_t;

/* Appends a snapshot of the table to out, stamped with written_ms and version (the version
 * text is cut at 255 bytes). Holds the table's writer mutex for the whole encoding (no writer
 * runs meanwhile; readers are never held up: route reads, heartbeats and the read side go on),
 * so it sees one consistent table. Returns how long the mutex was held, in microseconds.
 * Any thread but a writer's. */
uint64_t ns_route_snapshot_encode(ns_route_t *route, int64_t written_ms, const char *version,
                                  ns_buf_t *out);

/* Reads only the header of data[0..len): 0 and *info's format, written_ms and version filled,
 * or NS_EPROTO with a reason in err (not a snapshot, another format version, a length that
 * does not match; the CRC32 is checked by ns_route_snapshot_load). */
int ns_route_snapshot_header(const uint8_t *data, size_t len, ns_route_snapshot_info_t *info,
                             char *err, size_t errlen);

/* Loads data[0..len) into route, which must be empty and used by no other thread yet (at
 * start, before listening). Every restored live entry counts as registered at now_ms (its own
 * heartbeat timeout from then), bound to no connection, and is marked restored (see
 * ns_route_query_data_version); its first registration replaces it. Returns 0 (*info filled,
 * may be NULL), or NS_EPROTO with a reason in err and the table left empty. */
int ns_route_snapshot_load(ns_route_t *route, const uint8_t *data, size_t len, uint64_t now_ms,
                           ns_route_snapshot_info_t *info, char *err, size_t errlen);

#endif
