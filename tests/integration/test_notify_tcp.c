/* Integration: NOTIFY_MIN_BROKER_ID_CHANGE (905) against the real binary, with
 * notifyMinBrokerIdChanged=true. Two fake brokers of one acting-master group listen on their
 * own ports. When the master (id 0) registers after the slave (id 1), the server connects to the
 * slave's address and sends it a oneway 905 naming the master and its HA address; when the
 * master's connection closes, the slave gets a second 905 (minBrokerId 1, offlineBrokerAddr the
 * master) over the same connection. The master itself is never contacted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns_cmd_codec.h"
#include "rmq_client.h"

static ns_testsrv_t srv;

static void expect_notice(int fd, const char *min_id, const char *min_addr, const char *offline,
                          const char *ha)
{
    ns_cmd_t cmd;
    ns_buf_t holder = NS_BUF_INIT;
    assert_int_equal(rmq_recv(fd, &cmd, &holder, 10000), 0);
    assert_int_equal(cmd.code, 905);
    assert_true(cmd.flag & NS_FLAG_ONEWAY);
    assert_false(cmd.flag & NS_FLAG_RESPONSE);
    assert_int_equal(cmd.serialize_type, NS_SERIALIZE_JSON);
    assert_string_equal(ns_cmd_ext_get(&cmd, "minBrokerId"), min_id);
    assert_string_equal(ns_cmd_ext_get(&cmd, "minBrokerAddr"), min_addr);
    if (offline)
        assert_string_equal(ns_cmd_ext_get(&cmd, "offlineBrokerAddr"), offline);
    else
        assert_null(ns_cmd_ext_get(&cmd, "offlineBrokerAddr"));
    if (ha)
        assert_string_equal(ns_cmd_ext_get(&cmd, "haBrokerAddr"), ha);
    else
        assert_null(ns_cmd_ext_get(&cmd, "haBrokerAddr"));
    ns_cmd_free(&cmd);
    ns_buf_free(&holder);
}

static void test_min_broker_id_change_is_sent(void **state)
{
    (void)state;
    int master_port, slave_port;
    int master_l = rmq_listen_any(&master_port), slave_l = rmq_listen_any(&slave_port);
    char master[32], slave[32], master_ha[32];
    snprintf(master, sizeof(master), "127.0.0.1:%d", master_port);
    snprintf(slave, sizeof(slave), "127.0.0.1:%d", slave_port);
    snprintf(master_ha, sizeof(master_ha), "127.0.0.1:%d", master_port + 1);

    int slave_conn = rmq_connect(srv.port), master_conn = rmq_connect(srv.port);
    assert_true(slave_conn >= 0 && master_conn >= 0);
    assert_int_equal(
        rmq_register_broker(slave_conn, "NotifyCluster", "broker-n", slave, "127.0.0.1:1", "1"), 0);
    assert_int_equal(
        rmq_register_broker(master_conn, "NotifyCluster", "broker-n", master, master_ha, "0"), 0);

    int to_slave = rmq_accept_within(slave_l, 10000);
    assert_true(to_slave >= 0);
    expect_notice(to_slave, "0", master, NULL, master_ha);

    close(master_conn); /* the master goes away: the slave is the group's smallest id now */
    expect_notice(to_slave, "1", slave, master, NULL);

    /* nobody ever connected to the master's address */
    assert_int_equal(accept(master_l, NULL, NULL), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);

    close(to_slave);
    close(slave_conn);
    close(master_l);
    close(slave_l);
}

/* A slave nobody listens for: the notice fails to connect, is logged and dropped, and the
 * server goes on serving. */
static void test_unreachable_broker_is_logged(void **state)
{
    (void)state;
    int gone_port;
    int l = rmq_listen_any(&gone_port);
    close(l); /* the port is free now: connecting to it is refused */
    char gone[32];
    snprintf(gone, sizeof(gone), "127.0.0.1:%d", gone_port);
    int a = rmq_connect(srv.port), b = rmq_connect(srv.port);
    assert_int_equal(rmq_register_broker(a, "NotifyCluster", "broker-x", gone, "127.0.0.1:1", "1"),
                     0);
    assert_int_equal(
        rmq_register_broker(b, "NotifyCluster", "broker-x", "127.0.0.1:9", "127.0.0.1:10", "0"), 0);
    char needle[96];
    snprintf(needle, sizeof(needle), "notify connection to broker %s closed", gone);
    assert_true(ns_testsrv_wait_output(&srv, needle, 5000, NULL, 0));
    assert_int_equal(rmq_register_broker(a, "NotifyCluster", "broker-x", gone, "127.0.0.1:1", "1"),
                     0); /* still served */
    close(a);
    close(b);
}

static int setup(void **state)
{
    (void)state;
    const char *extra[] = {"--set", "notifyMinBrokerIdChanged=true", NULL};
    return ns_testsrv_start(&srv, extra);
}

static int teardown(void **state)
{
    (void)state;
    int rc = ns_testsrv_stop(&srv);
    ns_testsrv_cleanup(&srv);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_min_broker_id_change_is_sent),
        cmocka_unit_test(test_unreachable_broker_is_logged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
