/* The request table (proc.c) as data: every row decides what the server needs to know of its
 * code, so that no list elsewhere (worker.c, conn.c) has to, and a new row cannot leave a
 * decision out silently. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "ns_common.h"
#include "ns_proc.h"
#include "proc_test_util.h"

#define CLOSE_DECISION (NS_PROC_OUTLIVES_CONN | NS_PROC_ENDS_WITH_CONN)
#define KNOWN_FLAGS                                                                                \
    (CLOSE_DECISION | NS_PROC_PROVES_ALIVE | NS_PROC_REGISTERS | NS_PROC_CONTROLLER |              \
     NS_PROC_ADMIN_WHEN_DESIGNATED | NS_PROC_ANSWERS_LATER)

static size_t table_size(void)
{
    size_t n = 0;
    while (ns_proc_entry_at(n) != NULL)
        n++;
    return n;
}

/* Any row may wait at the worker when its connection closes (LOOP rows too, behind an earlier
 * request of their connection): each must say whether it then runs or comes back unrun. */
static void test_every_row_decides_what_a_close_does(void **state)
{
    (void)state;
    size_t n = table_size();
    assert_true(n >= 23);
    for (size_t i = 0; i < n; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        unsigned decision = e->flags & CLOSE_DECISION;
        if (decision != NS_PROC_OUTLIVES_CONN && decision != NS_PROC_ENDS_WITH_CONN) {
            print_error("%s (%d) %s: give it exactly one of NS_PROC_OUTLIVES_CONN (a write that "
                        "still runs when its connection closed) and NS_PROC_ENDS_WITH_CONN (comes "
                        "back unrun)\n",
                        e->name, (int)e->code, e->on_loop ? "(LOOP)" : "(worker)");
            fail();
        }
        if ((e->flags & ~(unsigned)KNOWN_FLAGS) != 0) {
            print_error("%s: unknown flag bits 0x%x\n", e->name, e->flags & ~(unsigned)KNOWN_FLAGS);
            fail();
        }
    }
}

/* A registration's effect is bound to its connection (the close unregisters it), so it never
 * runs after the close; it runs on the worker, where the answer moves the connection's lane,
 * and it proves its broker alive. */
static void test_registrations(void **state)
{
    (void)state;
    size_t registers = 0;
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        if (!(e->flags & NS_PROC_REGISTERS))
            continue;
        registers++;
        assert_false(e->on_loop);
        assert_true(e->flags & NS_PROC_ENDS_WITH_CONN);
        assert_true(e->flags & NS_PROC_PROVES_ALIVE);
    }
    assert_int_equal(registers, 1);
    assert_true(ns_proc_lookup(NS_REQ_REGISTER_BROKER)->flags & NS_PROC_REGISTERS);
}

/* The decisions the server made before they were columns (worker.c's two lists): the writes
 * that outlive their connection and the requests that prove a broker alive. */
static void test_rows_keep_the_decisions(void **state)
{
    (void)state;
    const int32_t outlive[] = {
        NS_REQ_PUT_KV_CONFIG,           NS_REQ_DELETE_KV_CONFIG,
        NS_REQ_UNREGISTER_BROKER,       NS_REQ_WIPE_WRITE_PERM_OF_BROKER,
        NS_REQ_DELETE_TOPIC_IN_NAMESRV, NS_REQ_REGISTER_TOPIC_IN_NAMESRV,
        NS_REQ_UPDATE_NAMESRV_CONFIG,   NS_REQ_ADD_WRITE_PERM_OF_BROKER,
    };
    const int32_t alive[] = {NS_REQ_REGISTER_BROKER, NS_REQ_BROKER_HEARTBEAT,
                             NS_REQ_QUERY_DATA_VERSION};
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        bool want_outlive = false, want_alive = false;
        for (size_t k = 0; k < NS_ARRAY_SIZE(outlive); k++)
            want_outlive |= e->code == outlive[k];
        for (size_t k = 0; k < NS_ARRAY_SIZE(alive); k++)
            want_alive |= e->code == alive[k];
        if (want_outlive != ((e->flags & NS_PROC_OUTLIVES_CONN) != 0) ||
            want_alive != ((e->flags & NS_PROC_PROVES_ALIVE) != 0)) {
            print_error("%s: flags 0x%x\n", e->name, e->flags);
            fail();
        }
    }
}

/* The writes whose answers wait for the disk: the KV writes run on the loops with a later
 * answer (a busy worker never holds them), the config update on the worker with one; each
 * outlives its connection (a write acknowledged or not, it is not undone by a close). */
static void test_answers_later(void **state)
{
    (void)state;
    const int32_t later[] = {NS_REQ_PUT_KV_CONFIG, NS_REQ_DELETE_KV_CONFIG,
                             NS_REQ_UPDATE_NAMESRV_CONFIG};
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        bool want = false;
        for (size_t k = 0; k < NS_ARRAY_SIZE(later); k++)
            want |= e->code == later[k];
        assert_int_equal(want, (e->flags & NS_PROC_ANSWERS_LATER) != 0);
        if (want) {
            assert_int_equal(e->on_loop, e->code != NS_REQ_UPDATE_NAMESRV_CONFIG);
            assert_true(e->flags & NS_PROC_OUTLIVES_CONN);
        }
    }
}

/* Sorted by code without duplicates: ns_proc_lookup is a binary search. */
static void test_sorted_and_found(void **state)
{
    (void)state;
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        if (i > 0)
            assert_true(ns_proc_entry_at(i - 1)->code < e->code);
        assert_ptr_equal(ns_proc_lookup(e->code), e);
        assert_non_null(e->fn);
        assert_non_null(e->name);
    }
    assert_null(ns_proc_lookup(0));
    assert_null(ns_proc_lookup(NS_REQ_NOTIFY_MIN_BROKER_ID_CHANGE)); /* we send it, never serve */
}

/* A code that is not served: answered on the loop with a fixed error, nothing to keep. */
static void test_code_not_served(void **state)
{
    pt_t *t = *state;
    assert_true(ns_proc_runs_on_loop(NULL));
    assert_int_equal(ns_proc_flags(NULL), NS_PROC_ENDS_WITH_CONN);
    assert_false(ns_proc_runs_on_loop(ns_proc_lookup(NS_REQ_REGISTER_BROKER)));
    assert_true(ns_proc_runs_on_loop(ns_proc_lookup(NS_REQ_GET_ROUTEINFO_BY_TOPIC)));

    ns_cmd_t req;
    pt_req(&req, 4242, 0, NULL, 0, NULL);
    req.opaque = 9;
    assert_true(ns_proc_dispatch_entry(&t->ctx, NULL, &req, &t->resp));
    assert_int_equal(t->resp.code, NS_RES_REQUEST_CODE_NOT_SUPPORTED);
    assert_int_equal(t->resp.opaque, 9);
    assert_string_equal(t->resp.remark, " request type 4242 not supported");
    ns_cmd_free(&req);
}

/* The entry a caller looked up runs the same handler as ns_proc_dispatch. */
static void test_dispatch_entry_runs_the_row(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "NoSuchTopic", NULL);
    assert_true(ns_proc_dispatch_entry(&t->ctx, ns_proc_lookup(req.code), &req, &t->resp));
    assert_int_equal(t->resp.code, NS_RES_TOPIC_NOT_EXIST);
    ns_cmd_free(&t->resp);
    assert_true(ns_proc_dispatch(&t->ctx, &req, &t->resp));
    assert_int_equal(t->resp.code, NS_RES_TOPIC_NOT_EXIST);
    ns_cmd_free(&req);
}

/* The controller's rows: handed to the controller (no handler here), sorted, each with its close
 * decision and its access class; 904 is a row of both services and each finds its own. */
static void test_controller_rows(void **state)
{
    (void)state;
    const int32_t codes[] = {904, 1001, 1002, 1003, 1004, 1005, 1006, 1009, 1010, 1011, 1012, 1013};
    size_t n = 0;
    for (; ns_proc_controller_entry_at(n) != NULL; n++) {
        const ns_proc_entry_t *e = ns_proc_controller_entry_at(n);
        assert_true(n < NS_ARRAY_SIZE(codes));
        assert_int_equal(e->code, codes[n]);
        assert_null(e->fn);
        assert_false(e->on_loop);
        assert_true(e->flags & NS_PROC_CONTROLLER);
        unsigned decision = e->flags & CLOSE_DECISION;
        assert_true(decision == NS_PROC_OUTLIVES_CONN || decision == NS_PROC_ENDS_WITH_CONN);
        assert_false(e->flags & (NS_PROC_PROVES_ALIVE | NS_PROC_REGISTERS));
        assert_ptr_equal(ns_proc_lookup_service(NS_SERVICE_CONTROLLER, e->code), e);
    }
    assert_int_equal(n, NS_ARRAY_SIZE(codes));
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(i);
        assert_false(e->flags & NS_PROC_CONTROLLER);
        assert_ptr_equal(ns_proc_lookup_service(NS_SERVICE_NAMESRV, e->code), e);
    }
    /* one code, two services */
    const ns_proc_entry_t *ns = ns_proc_lookup_service(NS_SERVICE_NAMESRV, 904);
    const ns_proc_entry_t *ctl = ns_proc_lookup_service(NS_SERVICE_CONTROLLER, 904);
    assert_non_null(ns);
    assert_non_null(ctl);
    assert_ptr_not_equal(ns, ctl);
    assert_null(ns_proc_lookup_service(NS_SERVICE_CONTROLLER, NS_REQ_GET_ROUTEINFO_BY_TOPIC));
    assert_null(ns_proc_lookup_service(NS_SERVICE_NAMESRV, NS_CTL_REQ_ELECT_MASTER));
    assert_null(ns_proc_lookup_service(NS_SERVICE_CONTROLLER, 1008)); /* we send it */
}

/* Who may send the controller's codes: brokers' with any account, an admin's writes with an
 * admin's, reads with none (docs/controller.md, "Authentication"). 1002 is an admin's when it
 * designates the master (mqadmin electMaster), a broker's otherwise. */
static void test_controller_access_classes(void **state)
{
    (void)state;
    const struct {
        int32_t code;
        ns_acl_class_t cls;
    } want[] = {
        {904, NS_ACL_BROKER},  {1001, NS_ACL_BROKER}, {1002, NS_ACL_BROKER}, {1003, NS_ACL_BROKER},
        {1004, NS_ACL_BROKER}, {1005, NS_ACL_READ},   {1006, NS_ACL_READ},   {1009, NS_ACL_ADMIN},
        {1010, NS_ACL_READ},   {1011, NS_ACL_ADMIN},  {1012, NS_ACL_BROKER}, {1013, NS_ACL_BROKER},
    };
    ns_cmd_t req;
    for (size_t i = 0; i < NS_ARRAY_SIZE(want); i++) {
        pt_req(&req, want[i].code, 0, NULL, 0, "brokerName", "b", NULL);
        const ns_proc_entry_t *e = ns_proc_lookup_service(NS_SERVICE_CONTROLLER, want[i].code);
        assert_int_equal(ns_proc_acl_class(e, &req), want[i].cls);
        ns_cmd_free(&req);
    }
    const ns_proc_entry_t *elect = ns_proc_lookup_service(NS_SERVICE_CONTROLLER, 1002);
    pt_req(&req, 1002, 0, NULL, 0, "designateElect", "true", "brokerId", "2", NULL);
    assert_int_equal(ns_proc_acl_class(elect, &req), NS_ACL_ADMIN);
    ns_cmd_free(&req);
    pt_req(&req, 1002, 0, NULL, 0, "designateElect", "false", NULL);
    assert_int_equal(ns_proc_acl_class(elect, &req), NS_ACL_BROKER);
    ns_cmd_free(&req);
}

/* The gate the controller's requests pass on the loop: a code the controller does not serve
 * answers 3 with Java's remark; a served one passes (no ACL in this fixture). */
static void test_admit(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "T", NULL);
    req.opaque = 77;
    assert_false(ns_proc_admit(&t->ctx, ns_proc_lookup_service(NS_SERVICE_CONTROLLER, req.code),
                               &req, &t->resp));
    assert_int_equal(t->resp.code, NS_RES_REQUEST_CODE_NOT_SUPPORTED);
    assert_int_equal(t->resp.opaque, 77);
    assert_int_equal(t->resp.flag & NS_FLAG_RESPONSE, NS_FLAG_RESPONSE);
    assert_string_equal(t->resp.remark, " request type 105 not supported");
    ns_cmd_free(&t->resp);
    ns_cmd_init(&t->resp);
    ns_cmd_free(&req);
    pt_req(&req, NS_CTL_REQ_GET_METADATA_INFO, 0, NULL, 0, NULL);
    assert_true(ns_proc_admit(&t->ctx, ns_proc_lookup_service(NS_SERVICE_CONTROLLER, req.code),
                              &req, &t->resp));
    ns_cmd_free(&t->resp);
    ns_cmd_init(&t->resp);
    ns_cmd_free(&req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_decides_what_a_close_does),
        cmocka_unit_test(test_registrations),
        cmocka_unit_test(test_rows_keep_the_decisions),
        cmocka_unit_test(test_answers_later),
        cmocka_unit_test(test_sorted_and_found),
        cmocka_unit_test_setup_teardown(test_code_not_served, pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_entry_runs_the_row, pt_setup, pt_teardown),
        cmocka_unit_test(test_controller_rows),
        cmocka_unit_test(test_controller_access_classes),
        cmocka_unit_test_setup_teardown(test_admit, pt_setup, pt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
