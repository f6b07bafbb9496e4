/* compareNamesrv's comparison: pure, over snapshots (snapshot.h). One line of text per
 * difference, so that a line is also the difference's identity (--watch prints the lines that
 * appear and disappear between rounds):
 *   broker <cluster>/<name> id <id> (<addr>): missing on <ns>[, <ns>...]
 *   broker <cluster>/<name> id <id>: address differs: <addr> on <ns>; <addr> on <ns>
 *   topic <t>: missing on <ns>...
 *   topic <t>: no route on <ns>...                      (listed, but 17 for its route)
 *   topic <t>: <ns> answered code <c>: <remark>         (another error for its route)
 *   topic <t>: no queue data of broker <b> on <ns>...
 *   topic <t> on broker <b>: perm differs: <p> on <ns>; <p> on <ns>
 *   topic <t> on broker <b>: queue data differs: read=<r> write=<w> sysflag=<f> on <ns>; ...
 *   topic <t>: orderTopicConf differs: "<conf>" on <ns>; (none) on <ns>
 *   kv <namespace>/<key>: missing on <ns>...
 *   kv <namespace>/<key>: value differs: "<v>" on <ns>; "<v>" on <ns>
 * Snapshots that are not ok are left out (the caller reports them). */
#ifndef NSA_DIFF_H
#define NSA_DIFF_H

#include <stddef.h>

#include "model.h"
#include "snapshot.h"

typedef struct nsa_diff_counts {
    size_t nameservers; /* snapshots compared */
    size_t clusters;    /* distinct cluster names */
    size_t brokers;     /* distinct cluster/name/id */
    size_t topics;      /* distinct topics */
    size_t kv_entries;  /* distinct namespace/key */
} nsa_diff_counts_t;

/* Appends the differences among snaps[0..n) that are ok to lines (sorted), and what was
 * compared to *counts. */
void nsa_diff(const nsa_snapshot_t *snaps, size_t n, nsa_strlist_t *lines,
              nsa_diff_counts_t *counts);

#endif
