#!/usr/bin/env python3
"""A recording TCP relay for RocketMQ remoting frames: what a client sends a NameServer and
what the NameServer answers, one JSON line per frame.

    wiretap.py <listen-port> <upstream-host:port> <record.jsonl> [<port-file>]

Listens on 127.0.0.1:<listen-port> (0: any free port, written to <port-file> once listening),
connects each accepted connection to the upstream server and copies bytes both ways unchanged.
On the side it cuts the byte streams into frames (4-byte total length, 4-byte header length
whose top byte is the header encoding: 0 JSON, 1 ROCKETMQ binary) and appends to
<record.jsonl>:

    {"conn": 1, "dir": "request"|"response", "encoding": "JSON"|"ROCKETMQ",
     "header": {... the decoded header ...}, "body": "<text>"|null, "body_len": n}

The body is kept as text when it is UTF-8 (route answers are JSON), else only its length. A
binary header's language byte is recorded by its LanguageCode name, as a JSON header spells it.
Runs until killed; a frame it cannot decode is recorded as {"error": ...} and the relay keeps
copying bytes, so the client never notices the tap. Used by run_cpp.sh and run_rust.sh to see
what a client sends and to compare every exchange between mqnamesrv and the Java NameServer."""
import json
import os
import socket
import struct
import sys
import threading

LOCK = threading.Lock()
# RemotingCommand's LanguageCode, in ordinal order (the byte of a ROCKETMQ binary header).
LANGUAGES = ["JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP",
             "GO", "PHP", "OMS", "RUST", "NODE_JS"]


def decode_binary_header(h):
    """The ROCKETMQ header: code(2) language(1) version(2) opaque(4) flag(4) remark(len+bytes)
    extFields(len + repeated (keylen(2) key vallen(4) val))."""
    code, language, version, opaque, flag = struct.unpack_from(">hbhii", h, 0)
    pos = 13
    (rlen,) = struct.unpack_from(">i", h, pos)
    pos += 4
    remark = h[pos:pos + rlen].decode("utf-8", "replace") if rlen > 0 else None
    pos += max(rlen, 0)
    (elen,) = struct.unpack_from(">i", h, pos)
    pos += 4
    end = pos + elen
    ext = {}
    while pos < end:
        (klen,) = struct.unpack_from(">h", h, pos)
        pos += 2
        key = h[pos:pos + klen].decode("utf-8", "replace")
        pos += klen
        (vlen,) = struct.unpack_from(">i", h, pos)
        pos += 4
        ext[key] = h[pos:pos + vlen].decode("utf-8", "replace")
        pos += vlen
    if 0 <= language < len(LANGUAGES):
        language = LANGUAGES[language]
    out = {"code": code, "language": language, "version": version, "opaque": opaque,
           "flag": flag, "extFields": ext}
    if remark is not None:
        out["remark"] = remark
    return out


def record(out, conn, direction, frame):
    (hword,) = struct.unpack_from(">I", frame, 0)
    encoding, hlen = hword >> 24, hword & 0xFFFFFF
    raw_header, body = frame[4:4 + hlen], frame[4 + hlen:]
    entry = {"conn": conn, "dir": direction}
    try:
        if encoding == 0:
            entry["encoding"] = "JSON"
            entry["header"] = json.loads(raw_header.decode("utf-8"))
        elif encoding == 1:
            entry["encoding"] = "ROCKETMQ"
            entry["header"] = decode_binary_header(raw_header)
        else:
            entry["encoding"] = "unknown %d" % encoding
    except (ValueError, struct.error) as e:
        entry["error"] = "header not decoded: %s" % e
    entry["body_len"] = len(body)
    try:
        entry["body"] = body.decode("utf-8") if body else None
    except UnicodeDecodeError:
        entry["body"] = None
    with LOCK:
        out.write(json.dumps(entry) + "\n")
        out.flush()


def pump(src, dst, on_frame=None):
    """Copies bytes from src to dst until either side closes; with on_frame, also calls it with
    each complete frame (without its 4-byte length) before the bytes that end it go on, so a
    request is recorded before its reply can be."""
    buf = bytearray()
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if on_frame is not None:
                buf += data
                while len(buf) >= 4:
                    (total,) = struct.unpack_from(">I", buf, 0)
                    if len(buf) < 4 + total:
                        break
                    on_frame(bytes(buf[4:4 + total]))
                    del buf[:4 + total]
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    listen_port = int(sys.argv[1])
    host, port = sys.argv[2].rsplit(":", 1)
    out = open(sys.argv[3], "a", encoding="utf-8")
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    if len(sys.argv) > 4:
        with open(sys.argv[4] + ".tmp", "w", encoding="utf-8") as f:
            f.write("%d\n" % server.getsockname()[1])
        os.rename(sys.argv[4] + ".tmp", sys.argv[4])
    conn = 0
    while True:
        client, _ = server.accept()
        conn += 1
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        for a, b, d in ((client, upstream, "request"), (upstream, client, "response")):
            def on_frame(frame, conn=conn, d=d):
                record(out, conn, d, frame)
            threading.Thread(target=pump, args=(a, b, on_frame), daemon=True).start()


if __name__ == "__main__":
    main()
