/* The default elect policy (Java's DefaultElectPolicy): who becomes master of a broker set.
 *
 * Candidates are tried in two rounds: the SyncStateSet, then (unclean election) every member.
 * In a round only the members the liveness predicate accepts count; among them the old master
 * is kept unless an admin prefers someone else; a preferred id wins if it counts and nobody
 * else may then win; otherwise the best by the live info of the last heartbeat: higher epoch,
 * then higher max offset, then lower electionPriority. Java sorts with a TreeSet whose
 * comparator subtracts in int arithmetic (the offset difference is cut to 32 bits); the
 * comparison below does the same, so the same broker wins. Ties: the lowest id (the first
 * that Java's HashSet of small Longs iterates, and that its TreeSet keeps). */
#include "ctl_int.h"

/* The comparator of DefaultElectPolicy: < 0 when a goes before b (a is the better master). */
static int32_t compare(const ns_ctl_live_info_t *a, const ns_ctl_live_info_t *b)
{
    if (a->epoch == b->epoch) {
        if (a->max_offset == b->max_offset)
            return (int32_t)((uint32_t)a->priority - (uint32_t)b->priority);
        return (int32_t)(uint32_t)((uint64_t)b->max_offset - (uint64_t)a->max_offset);
    }
    return (int32_t)((uint32_t)b->epoch - (uint32_t)a->epoch);
}

static bool valid(const ns_ctl_alive_t *alive, const char *cluster, const char *broker, int64_t id)
{
    return alive == NULL || alive->alive == NULL || alive->alive(alive->arg, cluster, broker, id);
}

/* One round (tryElect) over ids[0..n), ascending. */
static bool try_elect(const ns_ctl_alive_t *alive, const char *cluster, const char *broker,
                      const int64_t *ids, size_t n, const int64_t *old_master,
                      const int64_t *prefer, int64_t *out)
{
    bool any = false, has_old = false, has_prefer = false;
    int64_t first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!valid(alive, cluster, broker, ids[i]))
            continue;
        if (!any)
            first = ids[i];
        any = true;
        has_old |= old_master != NULL && ids[i] == *old_master;
        has_prefer |= prefer != NULL && ids[i] == *prefer;
    }
    if (!any)
        return false;
    if (has_old && (prefer == NULL || *prefer == *old_master)) {
        *out = *old_master;
        return true;
    }
    if (prefer != NULL) {
        if (!has_prefer)
            return false;
        *out = *prefer;
        return true;
    }
    if (alive != NULL && alive->info != NULL) {
        const ns_ctl_live_info_t *best = NULL;
        for (size_t i = 0; i < n; i++) {
            if (!valid(alive, cluster, broker, ids[i]))
                continue;
            const ns_ctl_live_info_t *li = alive->info(alive->arg, cluster, broker, ids[i]);
            /* a valid broker without live info cannot happen with the heartbeat table as the
             * predicate; Java would throw, we pass it over */
            if (li != NULL && (best == NULL || compare(li, best) < 0))
                best = li;
        }
        if (best != NULL) {
            *out = best->id;
            return true;
        }
    }
    *out = first;
    return true;
}

bool ns__ctl_elect(const ns_ctl_alive_t *alive, const char *cluster, const char *broker,
                   const int64_t *sss, size_t nsss, const int64_t *all, size_t nall,
                   const int64_t *old_master, const int64_t *prefer, int64_t *out)
{
    if (try_elect(alive, cluster, broker, sss, nsss, old_master, prefer, out))
        return true;
    return all != NULL && try_elect(alive, cluster, broker, all, nall, old_master, prefer, out);
}
