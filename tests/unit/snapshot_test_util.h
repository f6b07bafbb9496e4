/* A canonical text of everything a route table holds that a snapshot keeps, for the snapshot
 * tests and fuzzer: two tables with equal texts answer every query alike. Header-only (static);
 * reads route internals (route_int.h), takes no lock: for tables no other thread uses. */
#ifndef SNAPSHOT_TEST_UTIL_H
#define SNAPSHOT_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "route/route_int.h"

static int st_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the keys of m sorted, or (values) each value as a string. */
static const char **st_sorted_keys(const ns_hmap_t *m, size_t *n)
{
    const char **v = calloc(m->count + 1, sizeof(*v));
    size_t k = 0;
    NS_HMAP_FOREACH(m, e)
        v[k++] = e->key;
    qsort(v, k, sizeof(*v), st_cmp_str);
    *n = k;
    return v;
}

static void st_dump(ns_route_t *r, ns_buf_t *out)
{
    ns_route_get_cluster_info(r, out);
    ns_buf_append_char(out, '\n');
    size_t n;
    const char **topics = st_sorted_keys(&r->topics, &n);
    for (size_t i = 0; i < n; i++) {
        for (int mode = 0; mode < 2; mode++) {
            ns_buf_appendf(out, "%s/%d: ", topics[i], mode);
            ns_route_get_topic_route(r, topics[i], (ns_json_mode_t)mode, NULL, NULL, out);
            ns_buf_append_char(out, '\n');
        }
    }
    free(topics);
    /* live entries: the key has a NUL between cluster and address */
    const char **lines = calloc(r->live.count + 1, sizeof(*lines));
    size_t k = 0;
    NS_HMAP_FOREACH(&r->live, e) {
        const ns__route_live_t *l = e->val;
        char *line = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&line, &len);
        fprintf(fp, "live %s|%s timeout=%lld dv=%lld/%lld/%lld ha=%s", l->cluster, l->addr,
                (long long)l->timeout_ms, (long long)l->dv.counter, (long long)l->dv.state_version,
                (long long)l->dv.timestamp, l->ha_addr ? l->ha_addr : "(null)");
        fclose(fp);
        lines[k++] = line;
    }
    qsort(lines, k, sizeof(*lines), st_cmp_str);
    for (size_t i = 0; i < k; i++) {
        ns_buf_appendf(out, "%s\n", lines[i]);
        free((void *)(uintptr_t)lines[i]);
    }
    free(lines);
    /* broker names kept for their topics only, and their BrokerData */
    const char **names = st_sorted_keys(&r->bnames, &n);
    for (size_t i = 0; i < n; i++) {
        const ns__route_bname_t *b = ns_hmap_gets(&r->bnames, names[i]);
        ns_buf_appendf(out, "bname %s bd=%d topics=%u\n", b->name, b->has_bd, b->ntopics);
    }
    free(names);
}

#endif
