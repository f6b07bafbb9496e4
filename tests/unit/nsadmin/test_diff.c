/* compareNamesrv's comparison over hand-made snapshots: agreement, and each kind of
 * difference it reports (brokers missing or moved, topics missing, no route, queue data and
 * permission differences, orderTopicConf, KV entries), with three NameServers where it
 * matters, and snapshots that could not be taken left out. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "ns_common.h"

#define BROKER(name, id, addr)                                                                     \
    "\"" name "\":{\"brokerAddrs\":{\"" #id "\":\"" addr "\"},\"brokerName\":\"" name              \
    "\",\"cluster\":\"C\"}"

static const char cluster_ab[] = "{\"brokerAddrTable\":{" BROKER("a", 0, "h:1") "," BROKER(
    "b", 0, "h:2") "},\"clusterAddrTable\":{\"C\":[\"a\",\"b\"]}}";
static const char cluster_a[] =
    "{\"brokerAddrTable\":{" BROKER("a", 0, "h:1") "},\"clusterAddrTable\":{\"C\":[\"a\"]}}";
static const char cluster_ab_moved[] = "{\"brokerAddrTable\":{" BROKER("a", 0, "h:1") "," BROKER(
    "b", 0, "h:9") "},\"clusterAddrTable\":{\"C\":[\"a\",\"b\"]}}";

/* A route with queue data on broker a (and b when given). */
static char *route(int perm, int queues, const char *order_conf, bool on_b)
{
    char *s = ns_xmalloc(1024);
    snprintf(s, 1024,
             "{%s%s%s\"queueDatas\":[{\"brokerName\":\"a\",\"perm\":%d,\"readQueueNums\":%d,"
             "\"writeQueueNums\":%d,\"topicSysFlag\":0}%s],\"brokerDatas\":[]}",
             order_conf ? "\"orderTopicConf\":\"" : "", order_conf ? order_conf : "",
             order_conf ? "\"," : "", perm, queues, queues,
             on_b ? ",{\"brokerName\":\"b\",\"perm\":6,\"readQueueNums\":4,\"writeQueueNums\":4}"
                  : "");
    return s;
}

static void make(nsa_snapshot_t *s, const char *addr, const char *cluster)
{
    memset(s, 0, sizeof(*s));
    s->addr = ns_xstrdup(addr);
    s->ok = true;
    char err[200];
    if (nsa_decode_cluster_info((const uint8_t *)cluster, strlen(cluster), &s->cluster, err,
                                sizeof(err)) != 0)
        fail_msg("cluster: %s", err);
}

/* Adds a topic (kept sorted by the caller's order of calls); route NULL: code 17. */
static void add_topic(nsa_snapshot_t *s, const char *topic, char *route_json)
{
    nsa_strlist_push(&s->topics, topic);
    s->routes = ns_xrealloc(s->routes, s->topics.len * sizeof(nsa_topic_state_t));
    nsa_topic_state_t *t = &s->routes[s->topics.len - 1];
    memset(t, 0, sizeof(*t));
    if (route_json == NULL) {
        t->code = 17;
        t->remark = ns_xstrdup("No topic route info in name server for the topic: x");
        return;
    }
    char err[200];
    if (nsa_decode_route((const uint8_t *)route_json, strlen(route_json), &t->route, err,
                         sizeof(err)) != 0)
        fail_msg("route: %s", err);
    t->has_route = true;
    free(route_json);
}

static void add_kv(nsa_snapshot_t *s, const char *ns, ...)
{
    s->kv = ns_xrealloc(s->kv, (s->nkv + 1) * sizeof(nsa_kv_namespace_t));
    nsa_kv_namespace_t *n = &s->kv[s->nkv++];
    memset(n, 0, sizeof(*n));
    n->name = ns_xstrdup(ns);
    va_list ap;
    va_start(ap, ns);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;)
        nsa_kvlist_put(&n->kv, k, va_arg(ap, const char *));
    va_end(ap);
}

/* Runs the diff and checks its lines are exactly `want` (NULL-terminated, sorted). */
static void expect_lines(nsa_snapshot_t *s, size_t n, nsa_diff_counts_t *counts, ...)
{
    nsa_strlist_t lines = {0};
    nsa_diff(s, n, &lines, counts);
    va_list ap;
    va_start(ap, counts);
    size_t i = 0;
    for (const char *want; (want = va_arg(ap, const char *)) != NULL; i++) {
        if (i >= lines.len)
            fail_msg("line %zu missing: want '%s'", i, want);
        if (strcmp(lines.items[i], want) != 0)
            fail_msg("line %zu: '%s', want '%s'", i, lines.items[i], want);
    }
    va_end(ap);
    if (i != lines.len)
        fail_msg("%zu more lines than expected, first: '%s'", lines.len - i, lines.items[i]);
    nsa_strlist_free(&lines);
}

static void free_all(nsa_snapshot_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nsa_snapshot_free(&s[i]);
}

static void test_agree(void **state)
{
    (void)state;
    nsa_snapshot_t s[3];
    nsa_diff_counts_t k;
    for (int i = 0; i < 3; i++) {
        char addr[16];
        snprintf(addr, sizeof(addr), "ns%d:9876", i);
        make(&s[i], addr, cluster_ab);
        add_topic(&s[i], "T1", route(6, 8, NULL, true));
        add_topic(&s[i], "T2", route(6, 8, "a:8", false));
        add_kv(&s[i], "ORDER_TOPIC_CONFIG", "T2", "a:8", NULL);
    }
    expect_lines(s, 3, &k, NULL);
    assert_int_equal(k.nameservers, 3);
    assert_int_equal(k.clusters, 1);
    assert_int_equal(k.brokers, 2);
    assert_int_equal(k.topics, 2);
    assert_int_equal(k.kv_entries, 1);
    free_all(s, 3);
}

static void test_brokers(void **state)
{
    (void)state;
    nsa_snapshot_t s[3];
    nsa_diff_counts_t k;
    make(&s[0], "A", cluster_ab);
    make(&s[1], "B", cluster_a);
    make(&s[2], "C", cluster_ab_moved);
    expect_lines(s, 3, &k, "broker C/b id 0 (h:2): missing on B",
                 "broker C/b id 0: address differs: h:2 on A; h:9 on C", NULL);
    assert_int_equal(k.brokers, 2);
    free_all(s, 3);
}

static void test_topics_and_routes(void **state)
{
    (void)state;
    nsa_snapshot_t s[3];
    nsa_diff_counts_t k;
    make(&s[0], "A", cluster_ab);
    make(&s[1], "B", cluster_ab);
    make(&s[2], "C", cluster_ab);
    /* T1: perm wiped on B; T2: fewer queues on C and no queue data of b on B;
     * T3: only on A; T4: listed but no route on C; T5: orderTopicConf only on A */
    add_topic(&s[0], "T1", route(6, 8, NULL, true));
    add_topic(&s[1], "T1", route(4, 8, NULL, true));
    add_topic(&s[2], "T1", route(6, 8, NULL, true));
    add_topic(&s[0], "T2", route(6, 8, NULL, true));
    add_topic(&s[1], "T2", route(6, 8, NULL, false));
    add_topic(&s[2], "T2", route(6, 4, NULL, true));
    add_topic(&s[0], "T3", route(6, 8, NULL, false));
    add_topic(&s[0], "T4", route(6, 8, NULL, false));
    add_topic(&s[1], "T4", route(6, 8, NULL, false));
    add_topic(&s[2], "T4", NULL);
    add_topic(&s[0], "T5", route(6, 8, "a:8", false));
    add_topic(&s[1], "T5", route(6, 8, NULL, false));
    expect_lines(s, 3, &k, "topic T1 on broker a: perm differs: 6 on A; 4 on B; 6 on C",
                 "topic T2 on broker a: queue data differs: read=8 write=8 sysflag=0 on A; "
                 "read=8 write=8 sysflag=0 on B; read=4 write=4 sysflag=0 on C",
                 "topic T2: no queue data of broker b on B", "topic T3: missing on B, C",
                 "topic T4: no route on C", "topic T5: missing on C",
                 "topic T5: orderTopicConf differs: \"a:8\" on A; (none) on B", NULL);
    assert_int_equal(k.topics, 5);
    free_all(s, 3);
}

static void test_kv(void **state)
{
    (void)state;
    nsa_snapshot_t s[2];
    nsa_diff_counts_t k;
    make(&s[0], "A", cluster_a);
    make(&s[1], "B", cluster_a);
    add_kv(&s[0], "ORDER_TOPIC_CONFIG", "T1", "a:8", "T2", "a:4", NULL);
    add_kv(&s[1], "ORDER_TOPIC_CONFIG", "T1", "a:4", "T3", "a:2", NULL);
    add_kv(&s[0], "NS2", NULL);
    add_kv(&s[1], "NS2", "k", "v", NULL);
    expect_lines(s, 2, &k, "kv NS2/k: missing on A",
                 "kv ORDER_TOPIC_CONFIG/T1: value differs: "
                 "\"a:8\" on A; \"a:4\" on B",
                 "kv ORDER_TOPIC_CONFIG/T2: missing on B", "kv ORDER_TOPIC_CONFIG/T3: missing on A",
                 NULL);
    assert_int_equal(k.kv_entries, 4);
    free_all(s, 2);
}

static void test_failed_snapshots_left_out(void **state)
{
    (void)state;
    nsa_snapshot_t s[3];
    nsa_diff_counts_t k;
    make(&s[0], "A", cluster_ab);
    make(&s[1], "B", cluster_a);
    make(&s[2], "C", cluster_ab);
    s[1].ok = false; /* B could not be read: its (stale) content is not compared */
    expect_lines(s, 3, &k, NULL);
    assert_int_equal(k.nameservers, 2);
    s[2].ok = false; /* one left: nothing to compare */
    expect_lines(s, 3, &k, NULL);
    assert_int_equal(k.nameservers, 1);
    assert_int_equal(k.brokers, 0);
    free_all(s, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_brokers),
        cmocka_unit_test(test_topics_and_routes),
        cmocka_unit_test(test_kv),
        cmocka_unit_test(test_failed_snapshots_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
