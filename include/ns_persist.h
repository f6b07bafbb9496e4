/* The persister: one thread that writes the server's small stores (kvConfig.json, the 318
 * config file) to disk, so that no request thread waits for a write or an fsync. A store that
 * changed kicks its slot; the thread calls the store's flush function, which writes everything
 * changed so far in one file write (changes that arrive during a write go together into the
 * next one: writes coalesce), answers the requests waiting for what it wrote, and says whether
 * it wants another try (a failed write that the store keeps in memory is retried, with a
 * growing pause, until the disk takes it).
 *
 * The stores own their state, their locks and their waiting requests (kv.c, config.c); this
 * module only decides when each flush runs. Threads: ns_persister_kick from any thread; flush
 * functions run on the persister thread, one at a time, holding no lock of this module. */
#ifndef NS_PERSIST_H
#define NS_PERSIST_H

#include <stdint.h>

/* What a waiting request is told once a write holding its change ended: 0 (on disk) or the
 * write's -errno. Runs on the thread that wrote (the persister's, or the caller's when a store
 * has no persister), holding no lock of the store. */
typedef void ns_persist_done_fn(void *arg, int rc);

/* A store's flush: writes what changed since its last good write and answers the requests it
 * covered. Returns 0 when nothing is left to write, NS_PERSIST_AGAIN to be called again at once
 * (more changed meanwhile), or the milliseconds to wait before the next try (a failed write it
 * keeps). */
typedef uint64_t ns_persist_flush_fn(void *store);
#define NS_PERSIST_AGAIN UINT64_MAX

typedef struct ns_persister ns_persister_t;

/* Starts the thread (named NSPersist), with no store yet. */
ns_persister_t *ns_persister_start(void);

/* Adds a store (before it kicks): returns its slot. At most NS_PERSIST_MAX_STORES. */
#define NS_PERSIST_MAX_STORES 4
int ns_persister_add(ns_persister_t *p, ns_persist_flush_fn *flush, void *store);

/* The store of `slot` has something to write (any thread): its flush runs as soon as the thread
 * is free, even while a retry pause is under way. */
void ns_persister_kick(ns_persister_t *p, int slot);

/* Stops the thread after one more flush of every store that has something to write (no retry
 * pause is waited for: what still fails stays unwritten, as the stores' logs say), then frees
 * it. NULL is a no-op. Call once nothing kicks any more. */
void ns_persister_stop(ns_persister_t *p);

#endif
