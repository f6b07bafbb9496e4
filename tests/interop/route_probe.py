"""Asks a NameServer for the routes of many topics at once (issue 14's large brokers).

    route_probe.py HOST:PORT PREFIX N BROKER   GET_ROUTEINFO_BY_TOPIC of PREFIX-0 .. PREFIX-(N-1),
                                               pipelined 512 deep; every answer must be code 0
                                               and name BROKER. Prints one summary line; exit 1
                                               when a route is missing.
    route_probe.py HOST:PORT --count PREFIX    prints how many topics of GET_ALL_TOPIC_LIST_FROM_
                                               NAMESERVER start with PREFIX-
"""
import json
import socket
import struct
import sys
import time

WINDOW = 512


def frame(code, opaque, ext):
    header = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": opaque,
                         "serializeTypeCurrentRPC": "JSON", "version": 479,
                         "extFields": ext}).encode()
    return struct.pack(">II", 4 + len(header), len(header)) + header


class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def reply(self):
        self.need(4)
        total = struct.unpack(">I", self.buf[:4])[0]
        self.need(4 + total)
        data = bytes(self.buf[4:4 + total])
        del self.buf[:4 + total]
        hlen = struct.unpack(">I", data[:4])[0] & 0xFFFFFF
        return json.loads(data[4:4 + hlen]), data[4 + hlen:]


def connect(addr):
    host, port = addr.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def count(addr, prefix):
    sock = connect(addr)
    sock.sendall(frame(206, 1, {}))
    head, body = Reader(sock).reply()
    if head["code"] != 0:
        print("206 answered %s %s" % (head["code"], head.get("remark")))
        return 1
    topics = json.loads(body)["topicList"]
    print(sum(1 for t in topics if t.startswith(prefix + "-")))
    return 0


def probe(addr, prefix, n, broker):
    sock = connect(addr)
    rd = Reader(sock)
    needle = ('"brokerName":"%s"' % broker).encode()
    sent = got = ok = 0
    first_bad = None
    t0 = time.time()
    while got < n:
        batch = []
        while sent < n and sent - got < WINDOW:
            batch.append(frame(105, sent, {"topic": "%s-%d" % (prefix, sent)}))
            sent += 1
        if batch:
            sock.sendall(b"".join(batch))
        head, body = rd.reply()
        got += 1
        if head["code"] == 0 and needle in body:
            ok += 1
        elif first_bad is None:
            first_bad = "opaque %s: code %s %s" % (head.get("opaque"), head["code"],
                                                   head.get("remark", "")[:80])
    secs = time.time() - t0
    print("routes %d/%d of %s-* name %s in %.1f s%s" %
          (ok, n, prefix, broker, secs, "" if first_bad is None else "; first bad: " + first_bad))
    return 0 if ok == n else 1


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "--count":
        return count(sys.argv[1], sys.argv[3])
    return probe(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])


sys.exit(main())
