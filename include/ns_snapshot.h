/* The route snapshot service (docs/route.md, Snapshot): the warm restart. At start the snapshot
 * file is loaded into the empty route table before the server listens; while the server runs,
 * a thread of its own writes the table to the file when it changed, every
 * routeSnapshotIntervalMillis; at shutdown a last write, bounded in time.
 *
 * The format is ns_route_snapshot.h's; the file is replaced atomically (ns_atomic_file.h), so
 * a crash at any moment leaves the previous snapshot or the new one. Encoding holds the route
 * table's writer mutex (registrations wait, route reads do not); the file write holds nothing.
 * A snapshot that is missing, unreadable, corrupt, of another format version or older than
 * routeSnapshotMaxAgeMillis is ignored with a WARN line: never a failed start.
 *
 * Threads: restore and start/stop on the main thread; the writer on its own thread. */
#ifndef NS_SNAPSHOT_H
#define NS_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "ns_config.h"
#include "ns_route.h"

typedef struct ns_snapshot ns_snapshot_t;

/* The snapshot file: routeSnapshotPath, or routeSnapshot.bin in kvConfigPath's directory when
 * that is empty. Malloc'd. */
char *ns_snapshot_path(const ns_config_t *cfg);

/* At start, before listening (route empty, no other thread): with routeSnapshotEnable, loads
 * the snapshot. Returns true when the table now holds it (INFO line), false otherwise (nothing
 * there: INFO; unusable: WARN with the reason, the table stays empty). now_ms (monotonic) is
 * the restored brokers' last heartbeat, wall_ms the clock the age is judged by. */
bool ns_snapshot_restore(const ns_config_t *cfg, ns_route_t *route, uint64_t now_ms,
                         int64_t wall_ms);

/* Starts the writer thread; NULL when routeSnapshotEnable is off. The table's state at the
 * start counts as written (a restored snapshot is not written back until something changes). */
ns_snapshot_t *ns_snapshot_start(const ns_config_t *cfg, ns_route_t *route);

/* Writes the snapshot now if the table changed since the last write (always when `force`), on
 * the calling thread. Returns 0 (written or nothing to write) or -errno (logged, counted in
 * mqnamesrv_persist_failures_total{store="route_snapshot"}). For the writer thread and tests. */
int ns_snapshot_write(ns_snapshot_t *s, bool force);

/* Stops the thread. With `final`, first writes the table if it changed since the last write;
 * the wait for that write is bounded by timeout_ms once the table is encoded (a disk that does
 * not answer does not hold the exit: the previous snapshot then stays, a WARN says so). Frees
 * s, or leaves it to the still-writing thread. NULL is a no-op. */
void ns_snapshot_stop(ns_snapshot_t *s, bool final, uint64_t timeout_ms);

#endif
