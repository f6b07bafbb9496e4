"""A tiny RocketMQ remoting client for the package and container tests. Exit status 0 when every
step answers as it should.

    remoting_probe.py HOST PORT          GET_NAMESRV_CONFIG (319) must answer 0 with the config
                                         text, PUT_KV_CONFIG (100) pkg/k=v must answer 0
    remoting_probe.py HOST PORT route    REGISTER_BROKER (103) of broker ProbeBroker (cluster
                                         ProbeCluster, 127.0.0.1:10911) with topics ProbeTopic
                                         and ProbeTopic2, then, on a second connection while
                                         the first stays open, GET_ROUTEINFO_BY_TOPIC (105) of
                                         ProbeTopic must name that broker's address; prints
                                         the route
"""
import json
import socket
import struct
import sys
import time
import zlib


def call(sock, code, opaque, ext=None, body=b""):
    header = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": opaque,
                         "serializeTypeCurrentRPC": "JSON", "version": 479,
                         "extFields": ext or {}}).encode()
    sock.sendall(struct.pack(">II", 4 + len(header) + len(body), len(header)) + header + body)
    total = struct.unpack(">I", recv_n(sock, 4))[0]
    frame = recv_n(sock, total)
    hlen = struct.unpack(">I", frame[:4])[0] & 0xFFFFFF
    return json.loads(frame[4:4 + hlen]), frame[4 + hlen:]


def recv_n(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError("connection closed")
        out += chunk
    return out


BROKER_ADDR = "127.0.0.1:10911"


def register_and_route(host, port):
    now = int(time.time() * 1000)
    # Two topics: a broker's first registration with a single topic is refused, as in Java
    # (RouteInfoManager: that is how enableSingleTopicRegister registers a topic).
    topics = {name: {"attributes": {}, "order": False, "perm": 6, "readQueueNums": 4,
                     "topicFilterType": "SINGLE_TAG", "topicName": name, "topicSysFlag": 0,
                     "writeQueueNums": 4} for name in ("ProbeTopic", "ProbeTopic2")}
    body = json.dumps({"filterServerList": [], "topicConfigSerializeWrapper": {
        "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": now},
        "topicConfigTable": topics}}).encode()
    broker = socket.create_connection((host, port), timeout=10)
    head, _ = call(broker, 103, 1, {
        "brokerAddr": BROKER_ADDR, "brokerId": "0", "brokerName": "ProbeBroker",
        "clusterName": "ProbeCluster", "haServerAddr": "127.0.0.1:10912", "compressed": "false",
        "enableActingMaster": "false",
        "bodyCrc32": str(zlib.crc32(body) & 0x7FFFFFFF)}, body)
    if head["code"] != 0:
        print("103 answered", head)
        return 1
    client = socket.create_connection((host, port), timeout=10)
    head, route = call(client, 105, 1, {"topic": "ProbeTopic"})
    broker.close()
    client.close()
    if head["code"] != 0 or BROKER_ADDR.encode() not in route:
        print("105 answered", head, route[:300])
        return 1
    print(route.decode())
    return 0


def main():
    if len(sys.argv) > 3 and sys.argv[3] == "route":
        return register_and_route(sys.argv[1], int(sys.argv[2]))
    sock = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
    head, body = call(sock, 319, 1)
    if head["code"] != 0 or b"listenPort=" not in body:
        print("319 answered", head, body[:200])
        return 1
    head, _ = call(sock, 100, 2, {"namespace": "pkg", "key": "k", "value": "v"})
    if head["code"] != 0:
        print("100 answered", head)
        return 1
    return 0


sys.exit(main())
