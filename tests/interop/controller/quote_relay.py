#!/usr/bin/env python3
"""A relay in front of a Java 5.5.0 controller that quotes the bare integer map keys of its
reply bodies, so that mqadmin's electMaster, which fails on Java's own bare keys
({1:"addr"}: fastjson2's "not support unquoted name"), can be watched succeeding: what it then
prints is what nsadmin must print (tests/interop/run_nsadmin_ctl.sh, docs/compatibility.md).

    quote_relay.py <listen-port> <controller ip:port> <port-file>

Listens on 127.0.0.1:<listen-port> and writes "127.0.0.1:<port>" to <port-file> once it does.
Requests pass unchanged; in each reply a JSON body has its bare keys quoted, and a 1005 reply
naming the controller itself as leader names the relay instead, so that the request mqadmin
then sends to the leader comes through the relay too. Nothing else changes. Runs until
killed."""
import json
import re
import socket
import sys
import threading

from os.path import abspath, dirname, join

sys.path.insert(0, join(dirname(abspath(__file__)), ".."))
from replay import decode_frame, encode_frame  # noqa: E402  (the interop codec)

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
BARE_KEY = re.compile(r'([{,]\s*)(-?\d+)(\s*:)')


def quote_keys(text):
    """Quotes {1:...} and ,2:... outside string literals."""
    out, pos = [], 0
    for m in STRING.finditer(text):
        out.append(BARE_KEY.sub(r'\1"\2"\3', text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(BARE_KEY.sub(r'\1"\2"\3', text[pos:]))
    return "".join(out)


def rewrite(frame, upstream, me):
    header = json.loads(frame.header.decode("utf-8"))
    ext = header.get("extFields") or {}
    if ext.get("controllerLeaderAddress") == upstream:
        ext["controllerLeaderAddress"] = me
    body = frame.body
    if body[:1] in (b"{", b"["):
        body = quote_keys(body.decode("utf-8")).encode("utf-8")
    return encode_frame(0, json.dumps(header, separators=(",", ":")).encode("utf-8"), body)


def pump_requests(client, server):
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            server.sendall(data)
    except OSError:
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def pump_replies(server, client, upstream, me):
    buf = b""
    try:
        while True:
            data = server.recv(65536)
            if not data:
                break
            buf += data
            while True:
                frame, n = decode_frame(buf)
                if frame is None:
                    break
                raw, buf = buf[:n], buf[n:]
                client.sendall(rewrite(frame, upstream, me) if frame.stype == 0 else raw)
    except (OSError, ValueError):
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    port, upstream, port_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    host, uport = upstream.rsplit(":", 1)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    me = "127.0.0.1:%d" % listener.getsockname()[1]
    with open(port_file, "w") as f:
        f.write(me + "\n")
    while True:
        client, _ = listener.accept()
        try:
            server = socket.create_connection((host, int(uport)), timeout=10)
            server.settimeout(None)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pump_requests, args=(client, server), daemon=True).start()
        threading.Thread(target=pump_replies, args=(server, client, upstream, me),
                         daemon=True).start()


if __name__ == "__main__":
    main()
