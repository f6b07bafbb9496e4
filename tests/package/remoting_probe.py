"""A tiny RocketMQ remoting client for the package test: GET_NAMESRV_CONFIG (319) must answer 0
with the config text, PUT_KV_CONFIG (100) must answer 0. Exit status 0 when both do."""
import json
import socket
import struct
import sys


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


def main():
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
