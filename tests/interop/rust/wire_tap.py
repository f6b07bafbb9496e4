#!/usr/bin/env python3
"""A TCP relay that writes down the RocketMQ remoting requests passing through it, so that
run_rust.sh can say (and check) what the Rust client sends to a NameServer.

    wire_tap.py <listen-port> <upstream-port> <log-file>

Listens on 127.0.0.1:<listen-port>, connects each accepted connection to
127.0.0.1:<upstream-port> and copies bytes both ways. Every complete frame from the client is
decoded and appended to <log-file> as one JSON line: {"code", "language", "version", "flag",
"serialize", "ext": [field names]}; an undecodable frame is logged as {"error": ...} (and the
bytes still go through). A reply from the server is logged as {"reply": its code, "to": the
code of the request with the same opaque}. Runs until killed."""
import json
import socket
import struct
import sys
import threading

LANGUAGES = ["JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP",
             "GO", "PHP", "OMS", "RUST", "NODE_JS", "UNKNOWN"]
LOCK = threading.Lock()


def decode(frame):
    """Decodes one frame (without its 4-byte length) into a dict."""
    mark = struct.unpack(">I", frame[:4])[0]
    kind, hlen = mark >> 24, mark & 0xFFFFFF
    header = frame[4:4 + hlen]
    if kind == 0:
        h = json.loads(header)
        return {"code": h.get("code"), "language": h.get("language"), "version": h.get("version"),
                "flag": h.get("flag"), "opaque": h.get("opaque"), "serialize": "JSON",
                "ext": sorted((h.get("extFields") or {}).keys())}
    if kind == 1:
        # ROCKETMQ binary header: code(2) language(1) version(2) opaque(4) flag(4)
        # remark(len 4 + bytes) extFields(len 4 + (klen 2, key, vlen 4, value)*)
        code, lang, version, opaque, flag = struct.unpack(">hbhii", header[:13])
        pos = 13
        rlen = struct.unpack(">i", header[pos:pos + 4])[0]
        pos += 4 + max(rlen, 0)
        elen = struct.unpack(">i", header[pos:pos + 4])[0]
        pos += 4
        end, keys = pos + elen, []
        while pos < end:
            klen = struct.unpack(">h", header[pos:pos + 2])[0]
            keys.append(header[pos + 2:pos + 2 + klen].decode())
            pos += 2 + klen
            vlen = struct.unpack(">i", header[pos:pos + 4])[0]
            pos += 4 + vlen
        name = LANGUAGES[lang] if 0 <= lang < len(LANGUAGES) else lang
        return {"code": code, "language": name, "version": version, "flag": flag,
                "opaque": opaque, "serialize": "ROCKETMQ", "ext": sorted(keys)}
    return {"error": "serialize type %d" % kind}


def log(path, record):
    with LOCK, open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def pump(src, dst, path, from_client, pending):
    """Copies src to dst; pending maps a request's opaque to its code (one map per connection,
    shared by its two directions)."""
    buf = bytearray()
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            buf += data
            while len(buf) >= 4:
                total = struct.unpack(">I", buf[:4])[0]
                if len(buf) < 4 + total:
                    break
                frame = bytes(buf[4:4 + total])
                del buf[:4 + total]
                try:
                    record = decode(frame)
                except (ValueError, struct.error, UnicodeDecodeError) as e:
                    record = {"error": str(e)}
                opaque = record.pop("opaque", None)
                if from_client:
                    pending[opaque] = record.get("code")
                    log(path, record)
                elif "code" in record:
                    log(path, {"reply": record["code"], "to": pending.pop(opaque, None)})
            # Forwarded after the requests in it are noted, so that a reply finds its request.
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
    listen_port, upstream_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    while True:
        client, _ = server.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", upstream_port))
        except OSError:
            client.close()
            continue
        pending = {}
        threading.Thread(target=pump, args=(client, upstream, path, True, pending), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, path, False, pending), daemon=True).start()


if __name__ == "__main__":
    main()
