#!/usr/bin/env python3
"""The Python gRPC client (PyPI rocketmq-python-client, pinned in requirements.txt) through a
RocketMQ 5.x Proxy in cluster mode (tests/interop/run_proxy.sh).

    client.py <proxy host:port> <normal topic> <fifo topic> <normal group> <fifo group> <n>

Prints "RESULT pass|fail <check>" lines (one check each in the suite) and, like the Java gRPC
client, the Proxy's route answer for both topics as normalized "ROUTE ..." lines (a raw QueryRoute
through the package's generated stubs; the Proxy's own address becomes "proxy"), which the suite
compares between the run against mqnamesrv and the one against the Java NameServer. Producing and
consuming use the package's Producer and SimpleConsumer.
"""
import sys
import time
import uuid

import grpc
from rocketmq import (ClientConfiguration, Credentials, FilterExpression, Message, Producer,
                      SimpleConsumer)
from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc


def result(ok, what):
    print("RESULT %s %s" % ("pass" if ok else "fail", what), flush=True)


def route_lines(endpoint, topics):
    host, port = endpoint.rsplit(":", 1)
    meta = [("x-mq-client-id", "it-py-raw-" + str(uuid.uuid4())), ("x-mq-language", "PYTHON"),
            ("x-mq-protocol", "v2"), ("x-mq-client-version", "5.1.2"),
            ("x-mq-request-id", str(uuid.uuid4()))]
    with grpc.insecure_channel(endpoint) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        for topic in topics:
            req = service_pb2.QueryRouteRequest(
                topic=definition_pb2.Resource(name=topic),
                endpoints=definition_pb2.Endpoints(
                    scheme=definition_pb2.IPv4,
                    addresses=[definition_pb2.Address(host=host, port=int(port))]))
            resp = stub.QueryRoute(req, metadata=meta, timeout=10)
            code = definition_pb2.Code.Name(resp.status.code)
            print("ROUTE %s status=%s queues=%d" % (topic, code, len(resp.message_queues)))
            lines = []
            for q in resp.message_queues:
                addrs = sorted("proxy" if "%s:%d" % (a.host, a.port) == endpoint else
                               "%s:%d" % (a.host, a.port) for a in q.broker.endpoints.addresses)
                types = sorted(definition_pb2.MessageType.Name(t) for t in q.accept_message_types)
                lines.append("ROUTE %s queue=%d perm=%s broker=%s brokerId=%d endpoints=%s/%s accepts=%s" % (
                    topic, q.id, definition_pb2.Permission.Name(q.permission), q.broker.name, q.broker.id,
                    definition_pb2.AddressScheme.Name(q.broker.endpoints.scheme), ",".join(addrs),
                    ",".join(types)))
            for line in sorted(lines):
                print(line)
            result(code == "OK" and len(resp.message_queues) > 0,
                   "QueryRoute %s answers OK with queues (got %s, %d queues)" % (
                       topic, code, len(resp.message_queues)))


def receive_all(consumer, expected, deadline):
    got, missing = [], set(expected)
    while missing and time.time() < deadline:
        for m in consumer.receive(16, 30) or []:
            body = m.body.decode()
            got.append(body)
            missing.discard(body)
            consumer.ack(m)
    return got


def send_all(producer, topic, bodies_groups):
    sent = []
    for body, group in bodies_groups:
        msg = Message()
        msg.topic = topic
        msg.body = body.encode()
        if group:
            msg.message_group = group
        else:
            msg.tag = "it"
            msg.keys = "k-" + body
        try:
            producer.send(msg)
            sent.append(body)
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            print("send %s failed: %s" % (body, e), file=sys.stderr)
    return sent


def main():
    endpoint, normal_topic, fifo_topic, normal_group, fifo_group, n = sys.argv[1:7]
    n = int(n)
    deadline = time.time() + 90
    route_lines(endpoint, [normal_topic, fifo_topic])

    config = ClientConfiguration(endpoint, Credentials(), request_timeout=10)
    normal_consumer = SimpleConsumer(config, normal_group, {normal_topic: FilterExpression()}, await_duration=2)
    fifo_consumer = SimpleConsumer(config, fifo_group, {fifo_topic: FilterExpression()}, await_duration=2)
    producer = Producer(config, (normal_topic, fifo_topic))
    for c in (normal_consumer, fifo_consumer, producer):
        c.startup()
    try:
        bodies = ["py-normal-%d" % i for i in range(n)]
        sent = send_all(producer, normal_topic, [(b, None) for b in bodies])
        result(len(sent) == n, "producer sends %d NORMAL messages to %s (%d ok)" % (n, normal_topic, len(sent)))
        got = receive_all(normal_consumer, sent, deadline)
        missing = sorted(set(sent) - set(got))
        result(not missing, "simple consumer %s receives every NORMAL body (%d received, missing %s)" % (
            normal_group, len(got), missing))
        unexpected = sorted(set(got) - set(bodies))
        result(not unexpected, "no NORMAL body that was not sent (%s)" % unexpected)

        groups = ["g0", "g1", "g2"]
        fifo = [("py-fifo-%s-%d" % (groups[i % 3], i // 3), groups[i % 3]) for i in range(n)]
        sent = send_all(producer, fifo_topic, fifo)
        result(len(sent) == n, "producer sends %d FIFO messages in 3 message groups to %s (%d ok)" % (
            n, fifo_topic, len(sent)))
        got = receive_all(fifo_consumer, sent, deadline)
        missing = sorted(set(sent) - set(got))
        result(not missing, "FIFO consumer %s receives every FIFO body (%d received, missing %s)" % (
            fifo_group, len(got), missing))
        last, seen, out_of_order = {}, set(), []
        for body in got:
            if body in seen:
                continue  # a redelivery: order is about first deliveries
            seen.add(body)
            _, _, group, seq = body.split("-")
            prev = last.get(group, -1)
            if int(seq) != prev + 1:
                out_of_order.append("%s after %s-%d" % (body, group, prev))
            last[group] = int(seq)
        result(not out_of_order, "FIFO bodies arrive in send order per message group (%s)" % out_of_order)
    finally:
        for c in (producer, normal_consumer, fifo_consumer):
            try:
                c.shutdown()
            except Exception as e:  # noqa: BLE001 - shutdown problems are not the test
                print("shutdown: %s" % e, file=sys.stderr)


if __name__ == "__main__":
    main()
