#!/usr/bin/env python3
"""Differential replayer: sends the same recorded request traces to two RocketMQ NameServers
(the reference, normally the Java NameServer, and the candidate, mqnamesrv) and compares every
reply. It has its own remoting codec (Python stdlib only), so mqnamesrv's C codec is never used
to judge itself.

    replay.py run --ref 127.0.0.1:P1 --cand 127.0.0.1:P2 trace.jsonl [--verbose] [--tls]
                  [--no-settle]
    replay.py record --upstream 127.0.0.1:P --listen LABEL:PORTFILE ... --out trace.jsonl
    replay.py selftest

Exit status of `run`: 0 every reply matched, 1 a mismatch, 2 a broken trace or harness error.
With --tls every connection to both servers is a TLS session (no certificate check, as a Java
client in test mode) and "raw" bytes travel inside it.

TRACE FORMAT
============
A trace is a text file of JSON objects, one step each. An object may span several lines; lines
whose first non-blank character is '#' are comments. Steps run in order, each first against the
reference, then against the candidate, on that server's own connections.

Common keys
  "op"      "req" (default), "poll", "close", "await_close", "raw", "sleep"
  "name"    label shown in reports (default: the line number)
  "conn"    connection name (default "main"); a connection opens on first use; every server
            has its own set. Brokers own their registrations through their connection, so a
            master and its slave use different names.

"req": one request, one reply (none if oneway)
  "code"      request code (int)
  "ext"       extFields, an object (values are normally strings; anything JSON is sent as
              written); absent: no extFields at all
  "version"   request version (default 479); "language" (default "JAVA"); "remark" (default none)
  "flag"      extra flag bits (default 0); "oneway": true sets bit 1 and expects no reply
  "wait"      seconds to wait for the reply (default 10); its absence ("timeout") is compared
  "binary"    true: ROCKETMQ binary header instead of JSON (docs/protocol.md, section ROCKETMQ
              binary header)
  "header"    raw JSON header text, sent verbatim instead of one built from the keys above
              ("opaque" inside it is replaced by the replayer's counter); for odd headers
  "header_hex"  raw JSON header bytes (hex), sent exactly as given, for bytes that are not
              UTF-8; the bytes "opaque":0 in it become "opaque":<the replayer's counter>
  "ext_raw"   with "binary": extFields as [key hex, value hex] pairs, sent as those bytes
              (a NUL or malformed UTF-8 in a binary header), after the "ext" entries
  body, at most one of:
    "body"       text, sent as UTF-8
    "body_json"  a JSON value, sent compact (keys in the order written)
    "body_b64"   base64 bytes; "body_hex" hex bytes
    "body_zlib"  the compressed RegisterBrokerBody (docs/protocol.md, section Compressed
                 register body), built here:
                 {"dataVersion": <text or object>, "topics": ["T 8 8 6 SINGLE_TAG {}", ...],
                  "filter": "[]", "mappings": [<TopicQueueMappingInfo text>, ...]}
                 "mappings" absent: no mapping section (what a version < 413 broker sends)
  "crc"       "auto": set extFields bodyCrc32 to the masked CRC32 of the body; "bad": a wrong
              non-zero value; an int: that value
  "cmp"       body comparison: "auto" (default), "json", "bytes", "text", "none" (see below)
  "unordered" paths of containers Java fills from a HashMap/HashSet, overriding the defaults
              of the request code (UNORDERED below); "a.b" member b of a, "*" any member, "[]"
              every array element, e.g. "clusterAddrTable.*"
  "norm"      normalisation rules applied to both replies before comparing (NORMALISE below)
  "allow"     deliberate differences tolerated for this step (ALLOW below)
  "expect"    sanity check on the reference's reply, so a trace cannot silently stop testing
              what it says: {"code": 0, "remark": "...", "ext": {...}, "body_contains": "...",
              "body_lacks": "...", "no_reply": true, "closed": true}
"poll": a "req" repeated every 100 ms until its "until" condition holds on that server (same
        keys as "expect", plus "no_broker_addrs": true for a GET_BROKER_CLUSTER_INFO body
        without any broker address), at most "timeout" seconds (default 10); the last replies are
        compared. For asynchronous effects: Java 5.x unregisters brokers in a background batch.
        The condition must hold on two replies in a row with the same body (a reply read in the
        middle of Java's batch is not the end state).
        A poll of GET_BROKER_CLUSTER_INFO also waits until its two tables agree (every name in
        clusterAddrTable has a BrokerData and the reverse): Java reads them without its lock,
        so mid-batch a reply can show a name whose BrokerData is already gone.
        "poll_ref_only": true polls the reference only and then asks the candidate once: for a
        deliberate difference where the candidate never reaches the reference's state; then
        "expect_cand" (keys as "expect") checks the candidate's reply.
"close": closes the connection "conn" from the client side.
"await_close": waits up to "timeout" s (default 3) for the server to close "conn"; the outcome
        ("closed", "frame", "open") is compared.
"raw": sends "hex" bytes on "conn" as they are (broken frames), then behaves like
        "await_close" when "await": "close", else reads nothing.
"sleep": waits "ms" milliseconds (used only where a server must see time pass).

After the last step every connection is closed, unsolicited frames (a reply to a oneway
request, a reply with a wrong opaque) are reported, and the replayer waits (bounded) until
both servers have no broker left, so the next trace starts from an empty route table.

COMPARISON
==========
Each reply: presence (oneway / closed), code, remark, extFields (as a map), language, body.
The candidate's opaque must echo the request and flag bit 0 must be set (checked per server).
The response header's "version" is not compared (Java sends its own release ordinal).
Body modes ("auto" picks "bytes" for GET_ROUTEINFO_BY_TOPIC, "text" for GET_NAMESRV_CONFIG,
"json" for other bodies that parse as JSON, "bytes-exact" (raw bytes equal) otherwise):
  "json"   both parsed with a lenient fastjson-output parser (bare integer keys allowed);
           equal as values, object key order ignored, arrays listed as unordered compared as
           multisets. If they are equal as JSON but not as bytes, a NOTE is printed.
  "bytes"  byte-identical except that the members of the unordered containers may be
           permuted: quoting of keys, escaping, property order, number spelling all count.
  "text"   byte-identical after the normalisations.

NORMALISE (each rule is inherently run-dependent, nothing else is normalised)
  namesrv_config_paths  GET_NAMESRV_CONFIG text: the values of rocketmqHome, kvConfigPath,
            configStorePath, listenPort, logPath and portFile become "<run-dependent>". Each
            server runs from its own work directory on a port picked at run time; the keys,
            their order and every other value stay byte-compared.

RECORDING
=========
`record` is a TCP proxy in front of a NameServer (tests/interop/record_broker.sh puts it
between real brokers and mqadmin and a Java NameServer). It writes every request frame it
forwards as a "req" step (its header fields and body as sent; "conn" = LABEL-n, the n-th
connection accepted on that listener), a "close" step when the peer closes, the reply's code
and remark as a "# ..." comment, and probe steps on the connection "probe": cluster info and
all topics after each REGISTER_BROKER, a poll until the broker is gone after each
UNREGISTER_BROKER and close. It adds the rules those requests always need: "norm" for
GET_NAMESRV_CONFIG, "allow" map_order_pick for GET_SYSTEM_TOPIC_LIST_FROM_NS and
reply_encoding for a binary request. The recording ends when --stop-file appears.

ALLOW (deliberate differences of docs/compatibility.md; the comparator prints the reason)
  reply_encoding  a binary request gets a JSON reply from Java, a binary one from mqnamesrv
  map_order_pick  GET_SYSTEM_TOPIC_LIST_FROM_NS: brokerAddr is one address picked in map order
  exception_remark  the text of a code 1 exception remark (JDK 17 NPE message, fastjson2)
  config_line_break  a 318 value with a CR or LF: Java answers 0, mqnamesrv 16; the 319 after
                  it shows the value (Java) or not (mqnamesrv; "expect_cand" says what it holds)
  fenced_unregister  after a late unregister or close of a broker's old connection Java has
                  lost the registration made since on a new connection (code 17), mqnamesrv
                  kept it (code 0; "expect_cand" says what it must hold)
  (REASONS below has the full text of each.)
"""

import argparse
import base64
import difflib
import json
import os
import re
import socket
import ssl
import struct
import sys
import threading
import time
import zlib

LANGUAGES = ["JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP",
             "GO", "PHP", "OMS", "RUST", "NODE_JS"]

# Containers that Java builds from a HashMap or HashSet, so their member order is arbitrary.
# Keyed by request code; paths as for "unordered".
UNORDERED = {
    103: ["table"],                                     # KVTable: HashMap
    105: ["queueDatas", "brokerDatas", "filterServerTable", "topicQueueMappingByBroker"],
    106: ["brokerAddrTable", "clusterAddrTable", "clusterAddrTable.*"],
    206: ["topicList"], 224: ["topicList"], 304: ["topicList"],
    311: ["topicList"], 312: ["topicList"], 313: ["topicList"],
    219: ["table"],
}

REASONS = {
    "map_order_pick": "docs/compatibility.md, Deliberate differences, 'Map order': for "
                      "GET_SYSTEM_TOPIC_LIST_FROM_NS Java returns the address of the first broker "
                      "of its HashMap brokerAddrTable, mqnamesrv of the first in sorted order; the "
                      "client only asks that broker for its system topics (code 305), any "
                      "registered broker answers. Checked: each server's brokerAddr is an address "
                      "in its own GET_BROKER_CLUSTER_INFO; the rest of the body is compared",
    "exception_remark": "docs/compatibility.md, Deliberate differences, 'Exception remarks': "
                        "mqnamesrv writes Java's exceptionSimpleDesc as JDK 8 printed it; JDK 17 "
                        "adds a 'helpful NullPointerException' message, and Java 5.5.0 decodes "
                        "bodies with fastjson2, whose JSONException messages quote offsets and "
                        "the input. Checked: same code; an NPE remark equals Java's without the "
                        "helpful message; a JSON remark names a (fastjson or fastjson2) "
                        "JSONException on both sides",
    "config_line_break": "docs/compatibility.md, Deliberate differences, 'Line breaks in 318 "
                         "values' ('318 and the config file'): a 318 value "
                         "holding a line break (CR or LF) is refused by mqnamesrv (16, the "
                         "remark says why), so that 319 never shows it as two lines; Java "
                         "answers 0 and its 319 shows a forged line. Checked: the reference "
                         "answers 0, the candidate 16 (and its 319 what expect_cand asks)",
    "fenced_unregister": "docs/compatibility.md, Deliberate differences, 'Fenced unregistration' "
                         "(apache/rocketmq #11043): an UNREGISTER_BROKER sent on, or the close "
                         "of, a connection older than the one a broker registered on last is "
                         "not applied by mqnamesrv; Java deletes the newer registration. "
                         "Checked: the reference answers 17, the candidate 0 and what "
                         "expect_cand asks",
    "reply_encoding": "docs/compatibility.md, Deliberate differences, 'Reply encoding mirrors the "
                      "request': Java 5.x answers a ROCKETMQ binary request with a JSON header, "
                      "mqnamesrv with a binary one (4.x behaviour); a binary header cannot tell "
                      "an empty extFields map or remark from an absent one, so those compare "
                      "equal when one reply is binary",
}

CONFIG_RUN_DEPENDENT = ("rocketmqHome", "kvConfigPath", "configStorePath", "listenPort",
                        "logPath", "portFile")

REPLY_TIMEOUT = 10.0


class TraceError(Exception):
    pass


# ---- lenient JSON (fastjson output: bare integer keys) -----------------------------------------

class Node:
    """A parsed JSON value that keeps the exact source text of every key and scalar."""
    __slots__ = ("kind", "items", "raw", "val")

    def __init__(self, kind, items=None, raw=None, val=None):
        self.kind, self.items, self.raw, self.val = kind, items, raw, val


_NUM = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_BARE = re.compile(r"[A-Za-z0-9_$\-]+")
_STR = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')


class Lenient:
    def __init__(self, text):
        self.t, self.i, self.ws = text, 0, 0

    def fail(self, what):
        raise ValueError("%s at offset %d" % (what, self.i))

    def skip(self):
        while self.i < len(self.t) and self.t[self.i] in " \t\r\n":
            self.i += 1
            self.ws += 1

    def parse(self):
        self.skip()
        v = self.value()
        self.skip()
        if self.i != len(self.t):
            self.fail("trailing text")
        return v

    def string(self):
        m = _STR.match(self.t, self.i)
        if not m:
            self.fail("bad string")
        self.i = m.end()
        return m.group(0), json.loads(m.group(0))

    def value(self):
        if self.i >= len(self.t):
            self.fail("unexpected end")
        c = self.t[self.i]
        if c == "{":
            self.i += 1
            items = []
            self.skip()
            if self.t.startswith("}", self.i):
                self.i += 1
                return Node("o", items)
            while True:
                self.skip()
                if self.t.startswith('"', self.i):
                    raw, key = self.string()
                else:
                    m = _BARE.match(self.t, self.i)
                    if not m:
                        self.fail("bad key")
                    self.i = m.end()
                    raw = key = m.group(0)
                self.skip()
                if not self.t.startswith(":", self.i):
                    self.fail("':' expected")
                self.i += 1
                self.skip()
                items.append((raw, key, self.value()))
                self.skip()
                if self.t.startswith(",", self.i):
                    self.i += 1
                    continue
                if self.t.startswith("}", self.i):
                    self.i += 1
                    return Node("o", items)
                self.fail("',' or '}' expected")
        if c == "[":
            self.i += 1
            items = []
            self.skip()
            if self.t.startswith("]", self.i):
                self.i += 1
                return Node("a", items)
            while True:
                self.skip()
                items.append(self.value())
                self.skip()
                if self.t.startswith(",", self.i):
                    self.i += 1
                    continue
                if self.t.startswith("]", self.i):
                    self.i += 1
                    return Node("a", items)
                self.fail("',' or ']' expected")
        if c == '"':
            raw, val = self.string()
            return Node("s", raw=raw, val=val)
        for lit, val in (("true", True), ("false", False), ("null", None)):
            if self.t.startswith(lit, self.i):
                self.i += len(lit)
                return Node("s", raw=lit, val=val)
        m = _NUM.match(self.t, self.i)
        if m and m.end() > self.i:
            self.i = m.end()
            raw = m.group(0)
            return Node("s", raw=raw, val=float(raw) if ("." in raw or "e" in raw.lower())
                        else int(raw))
        self.fail("bad value")


def parse_lenient(data):
    """(Node, whitespace count) or None when the bytes are not (lenient) JSON."""
    try:
        p = Lenient(data.decode("utf-8"))
        return p.parse(), p.ws
    except (ValueError, UnicodeDecodeError):
        return None


def _pattern(p):
    segs = []
    for part in p.split("."):
        arrays = 0
        while part.endswith("[]"):
            part, arrays = part[:-2], arrays + 1
        if part:
            segs.append(part)
        segs += ["[]"] * arrays
    return segs


def _unordered_at(path, patterns):
    for pat in patterns:
        if len(pat) == len(path) and all(a == "*" or a == b for a, b in zip(pat, path)):
            return True
    return False


def canon(node, patterns, mode, path=()):
    """Canonical text of a node. mode "bytes": source tokens, member order kept except in
    unordered containers (sorted). mode "json": decoded values, keys always sorted."""
    if node.kind == "s":
        return node.raw if mode == "bytes" else json.dumps(node.val, ensure_ascii=False)
    unordered = _unordered_at(path, patterns)
    if node.kind == "a":
        parts = [canon(v, patterns, mode, path + ("[]",)) for v in node.items]
        if unordered:
            parts.sort()
        return "[" + ",".join(parts) + "]"
    if mode == "bytes":
        parts = [raw + ":" + canon(v, patterns, mode, path + (key,)) for raw, key, v in node.items]
        if unordered:
            parts.sort()
    else:
        parts = sorted(json.dumps(key, ensure_ascii=False) + ":" +
                       canon(v, patterns, mode, path + (key,)) for raw, key, v in node.items)
    return "{" + ",".join(parts) + "}"


def flatten(node, patterns, mode, path=(), shown="", out=None):
    """One line per leaf ("path = value"), in canonical order: readable diffs."""
    if out is None:
        out = []
    if node.kind == "s":
        out.append("%s = %s" % (shown or "$", node.raw if mode == "bytes" else
                                json.dumps(node.val, ensure_ascii=False)))
        return out
    unordered = _unordered_at(path, patterns)
    if node.kind == "a":
        kids = [(canon(v, patterns, mode, path + ("[]",)), v) for v in node.items]
        if unordered:
            kids.sort(key=lambda kv: kv[0])
        if not kids:
            out.append("%s = []" % (shown or "$"))
        for i, (_, v) in enumerate(kids):
            flatten(v, patterns, mode, path + ("[]",), "%s[%d]" % (shown, i), out)
        return out
    kids = [(raw if mode == "bytes" else key, key, v) for raw, key, v in node.items]
    if unordered or mode == "json":
        kids.sort(key=lambda k: k[0])
    if not kids:
        out.append("%s = {}" % (shown or "$"))
    for label, key, v in kids:
        flatten(v, patterns, mode, path + (key,), "%s.%s" % (shown, label) if shown else label,
                out)
    return out


# ---- remoting codec ---------------------------------------------------------------------------

class Reply:
    def __init__(self):
        self.stype = self.code = self.flag = self.opaque = self.version = None
        self.language = self.remark = self.ext = None
        self.header = b""
        self.body = b""

    def summary(self):
        s = "code=%s remark=%r ext=%s" % (self.code, self.remark, json.dumps(self.ext))
        if self.body:
            b = self.body[:300].decode("utf-8", "replace")
            s += " body=%s%s" % (b, "..." if len(self.body) > 300 else "")
        return s


def encode_binary_header(code, language, version, opaque, flag, remark, ext, ext_raw=()):
    lang = LANGUAGES.index(language) if language in LANGUAGES else 7
    out = struct.pack(">hbhii", code, lang, version, opaque, flag)
    r = remark.encode() if remark else b""
    out += struct.pack(">i", len(r)) + r
    area = b""
    pairs = [(str(k).encode(), str(v).encode()) for k, v in (ext or {}).items()]
    pairs += [(bytes.fromhex(k), bytes.fromhex(v)) for k, v in ext_raw]
    for kb, vb in pairs:
        area += struct.pack(">h", len(kb)) + kb + struct.pack(">i", len(vb)) + vb
    return out + struct.pack(">i", len(area)) + area


def encode_frame(stype, header, body):
    return struct.pack(">ii", 4 + len(header) + len(body), (stype << 24) | len(header)) + header + body


def decode_binary_header(h):
    def s(b):
        try:
            return b.decode("utf-8") if b else None   # Java: a zero length string is null
        except UnicodeDecodeError as e:
            raise ValueError("a binary header string that is not UTF-8 (%s): %r" % (e, b[:200]))
    code, lang, version, opaque, flag = struct.unpack(">hbhii", h[:13])
    rl = struct.unpack(">i", h[13:17])[0]
    remark = s(h[17:17 + rl])
    p = 17 + rl
    el = struct.unpack(">i", h[p:p + 4])[0]
    p += 4
    end = p + el
    ext = {} if el else None
    while p < end:
        kl = struct.unpack(">h", h[p:p + 2])[0]
        k = h[p + 2:p + 2 + kl]
        p += 2 + kl
        vl = struct.unpack(">i", h[p:p + 4])[0]
        v = h[p + 4:p + 4 + vl]
        p += 4 + vl
        if s(k) is not None and s(v) is not None:
            ext[s(k)] = s(v)
    lang_name = LANGUAGES[lang] if 0 <= lang < len(LANGUAGES) else lang
    return code, lang_name, version, opaque, flag, remark, ext


def decode_frame(buf):
    """(Reply, bytes consumed) or (None, 0) when buf holds no whole frame yet."""
    if len(buf) < 4:
        return None, 0
    total = struct.unpack(">i", buf[:4])[0]
    if len(buf) < 4 + total:
        return None, 0
    hw = struct.unpack(">I", buf[4:8])[0]
    r = Reply()
    r.stype, hl = hw >> 24, hw & 0xFFFFFF
    r.header, r.body = buf[8:8 + hl], buf[8 + hl:4 + total]
    if r.stype == 0:
        try:
            text = r.header.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError("a JSON header that is not UTF-8 (%s): %r" % (e, r.header[:200]))
        h = json.loads(text)
        r.code, r.flag, r.opaque = h.get("code"), h.get("flag"), h.get("opaque")
        r.version, r.language = h.get("version"), h.get("language")
        r.remark, r.ext = h.get("remark"), h.get("extFields")
    elif r.stype == 1:
        (r.code, r.language, r.version, r.opaque, r.flag, r.remark,
         r.ext) = decode_binary_header(r.header)
    else:
        raise ValueError("serialize type %d" % r.stype)
    return r, 4 + total


def build_zlib_body(spec):
    def block(b):
        return struct.pack(">i", len(b)) + b

    def text(v):
        return (v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))).encode()
    raw = block(text(spec["dataVersion"]))
    raw += struct.pack(">i", len(spec["topics"]))
    for t in spec["topics"]:
        raw += block(t.encode())
    raw += block(text(spec.get("filter", "[]")))
    if "mappings" in spec:
        raw += struct.pack(">i", len(spec["mappings"]))
        for m in spec["mappings"]:
            raw += block(text(m))
    return zlib.compress(raw, 9)


def step_body(step):
    keys = [k for k in ("body", "body_json", "body_b64", "body_hex", "body_zlib") if k in step]
    if len(keys) > 1:
        raise TraceError("more than one body key")
    if not keys:
        return b""
    k = keys[0]
    v = step[k]
    if k == "body":
        return v.encode("utf-8")
    if k == "body_json":
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if k == "body_b64":
        return base64.b64decode(v)
    if k == "body_hex":
        return bytes.fromhex(v)
    return build_zlib_body(v)


def masked_crc(body):
    return zlib.crc32(body) & 0x7FFFFFFF


def build_request(step, opaque):
    """Frame bytes of a "req"/"poll" step with this opaque."""
    body = step_body(step)
    ext = step.get("ext")
    ext = dict(ext) if ext is not None else None
    crc = step.get("crc")
    if crc is not None:
        ext = ext if ext is not None else {}
        good = masked_crc(body)
        if crc == "auto":
            value = good
        elif crc == "bad":
            value = (good ^ 0x1234) or 1
        else:
            value = int(crc)
        ext["bodyCrc32"] = str(value)
    flag = int(step.get("flag", 0)) | (2 if step.get("oneway") else 0)
    if "header_hex" in step:
        raw = bytes.fromhex(step["header_hex"])
        if b'"opaque":0' not in raw:
            raise TraceError("%s: header_hex without \"opaque\":0" % step["name"])
        return encode_frame(0, raw.replace(b'"opaque":0', b'"opaque":%d' % opaque, 1), body)
    if "header" in step:
        h = json.loads(step["header"])
        if "opaque" in h:
            h["opaque"] = opaque
        return encode_frame(0, json.dumps(h, separators=(",", ":")).encode(), body)
    code = step["code"]
    version = step.get("version", 479)
    language = step.get("language", "JAVA")
    remark = step.get("remark")
    if step.get("binary"):
        return encode_frame(1, encode_binary_header(code, language, version, opaque, flag, remark,
                                                    ext, step.get("ext_raw", ())), body)
    h = {"code": code}
    if ext is not None:
        h["extFields"] = ext
    h.update(flag=flag, language=language, opaque=opaque)
    if remark is not None:
        h["remark"] = remark
    h.update(serializeTypeCurrentRPC="JSON", version=version)
    return encode_frame(0, json.dumps(h, separators=(",", ":"), ensure_ascii=False).encode(), body)


# ---- connections and servers ------------------------------------------------------------------

# run --tls: the client context every connection is wrapped in (None: plaintext).
TLS_CONTEXT = None


class Conn:
    def __init__(self, addr):
        self.sock = socket.create_connection(addr, timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if TLS_CONTEXT is not None:
            self.sock = TLS_CONTEXT.wrap_socket(self.sock)
        self.buf = b""
        self.closed_by_peer = False
        self.strays = []
        self.sent_oneway = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            chunk = b""  # an alert ends a TLS session as a reset ends a connection
        if not chunk:
            self.closed_by_peer = True
            return False
        self.buf += chunk
        return True

    def next_frame(self, deadline):
        while True:
            r, n = decode_frame(self.buf)
            if r is not None:
                self.buf = self.buf[n:]
                return r
            if self.closed_by_peer or not self._fill(deadline):
                return None

    def read_reply(self, opaque, timeout=REPLY_TIMEOUT):
        """("reply", Reply) | ("closed", None) | ("timeout", None)"""
        deadline = time.monotonic() + timeout
        while True:
            r = self.next_frame(deadline)
            if r is None:
                return ("closed", None) if self.closed_by_peer else ("timeout", None)
            if r.opaque == opaque and (r.flag or 0) & 1:
                return "reply", r
            self.strays.append(r)

    def await_close(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            r = self.next_frame(deadline)
            if r is not None:
                return "frame"
            return "closed" if self.closed_by_peer else "open"

    def drain(self, timeout=0.15):
        deadline = time.monotonic() + timeout
        while not self.closed_by_peer:
            r = self.next_frame(deadline)
            if r is None:
                break
            self.strays.append(r)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Server:
    def __init__(self, label, addr):
        self.label = label
        host, port = addr.rsplit(":", 1)
        self.addr = (host, int(port))
        self.conns = {}
        self.opaque = 0
        self.strays = []

    def conn(self, name):
        if name not in self.conns:
            self.conns[name] = Conn(self.addr)
        return self.conns[name]

    def drop(self, name):
        c = self.conns.pop(name, None)
        if c is not None:
            # A reply to a oneway request would be a stray frame: give it time to arrive.
            c.drain(0.3 if c.sent_oneway else 0.01)
            self.strays += [(name, r) for r in c.strays]
            c.close()

    def request(self, step):
        """Sends one request; returns (outcome, Reply or None, opaque)."""
        self.opaque += 1
        c = self.conn(step.get("conn", "main"))
        data = build_request(step, self.opaque)
        try:
            c.send(data)
        except OSError:
            return "closed", None, self.opaque
        if step.get("oneway"):
            c.sent_oneway = True
            return "none", None, self.opaque
        out, r = c.read_reply(self.opaque, float(step.get("wait", REPLY_TIMEOUT)))
        return out, r, self.opaque


# ---- checks and comparison --------------------------------------------------------------------

def satisfies(cond, outcome, r):
    """None when the condition holds, else the reason."""
    if cond.get("no_reply"):
        return None if outcome == "none" else "a reply came"
    if cond.get("closed"):
        return None if outcome == "closed" else "not closed (%s)" % outcome
    if outcome != "reply":
        return "no reply (%s)" % outcome
    if "code" in cond and r.code != cond["code"]:
        return "code %s, wanted %s" % (r.code, cond["code"])
    if "remark" in cond and r.remark != cond["remark"]:
        return "remark %r, wanted %r" % (r.remark, cond["remark"])
    for k, v in cond.get("ext", {}).items():
        if (r.ext or {}).get(k) != v:
            return "extFields %s=%r, wanted %r" % (k, (r.ext or {}).get(k), v)
    if cond.get("no_broker_addrs"):
        p = parse_lenient(r.body)
        table = p and [v for raw, k, v in p[0].items if k == "brokerAddrTable"]
        if not table:
            return "no brokerAddrTable in the body"
        for _, name, bd in table[0].items:
            for _, k, addrs in bd.items:
                if k == "brokerAddrs" and addrs.items:
                    return "broker %s still has addresses" % name
    if "body_contains" in cond:
        needles = cond["body_contains"]
        for n in [needles] if isinstance(needles, str) else needles:
            if n.encode() not in r.body:
                return "body lacks %r" % n
    if "body_lacks" in cond:
        needles = cond["body_lacks"]
        for n in [needles] if isinstance(needles, str) else needles:
            if n.encode() in r.body:
                return "body contains %r" % n
    return None


def cluster_tables_disagree(body):
    """None when every broker name of clusterAddrTable has a BrokerData and every BrokerData is
    in a cluster, else the first name that is not. Java reads both tables without its lock, so
    while an unregistration batch runs a reply can hold one and not the other."""
    p = parse_lenient(body)
    if p is None or p[0].kind != "o":
        return "not a cluster info body"
    tables = {k: v for _, k, v in p[0].items}
    brokers = {k for _, k, _ in tables["brokerAddrTable"].items} \
        if "brokerAddrTable" in tables else set()
    members = set()
    for _, _, names in (tables["clusterAddrTable"].items if "clusterAddrTable" in tables else []):
        members |= {n.val for n in names.items}
    odd = sorted(str(x) for x in brokers ^ members)
    return "broker %s only in one of the two tables" % odd[0] if odd else None


def normalise_config(body):
    lines = body.decode("utf-8", "replace").split("\n")
    out = []
    for line in lines:
        k, sep, _ = line.partition("=")
        out.append(k + "=<run-dependent>" if sep and k in CONFIG_RUN_DEPENDENT else line)
    return "\n".join(out).encode()


def body_mode(step, rr, cr):
    mode = step.get("cmp", "auto")
    if mode != "auto":
        return mode
    code = step.get("code")
    if code == 319:
        return "text"
    if parse_lenient(rr.body) and parse_lenient(cr.body):
        return "bytes" if code == 105 else "json"
    return "bytes-exact"


def compare_bodies(step, rr, cr, notes):
    """List of difference lines (empty when equal)."""
    rb, cb = rr.body, cr.body
    if "namesrv_config_paths" in step.get("norm", []):
        rb, cb = normalise_config(rb), normalise_config(cb)
    if rb == cb:
        return []
    mode = body_mode(step, rr, cr)
    if mode == "none":
        return []
    patterns = [_pattern(p) for p in step.get("unordered", UNORDERED.get(step.get("code"), []))]
    if mode in ("json", "bytes"):
        pr, pc = parse_lenient(rb), parse_lenient(cb)
        if pr is None or pc is None:
            return ["body: %s is not JSON" % ("reference" if pr is None else "candidate")] + \
                text_diff(rb, cb)
        sem_r, sem_c = canon(pr[0], patterns, "json"), canon(pc[0], patterns, "json")
        if sem_r != sem_c:
            return ["body differs as JSON (reference -, candidate +):"] + \
                line_diff(flatten(pr[0], patterns, "json"), flatten(pc[0], patterns, "json"))
        byt_r, byt_c = canon(pr[0], patterns, "bytes"), canon(pc[0], patterns, "bytes")
        if byt_r != byt_c or pr[1] != pc[1]:
            detail = ["body equal as JSON but not as bytes (reference -, candidate +):"] + \
                line_diff(flatten(pr[0], patterns, "bytes"), flatten(pc[0], patterns, "bytes"))
            if pr[1] != pc[1]:
                detail.append("whitespace outside strings: reference %d, candidate %d" %
                              (pr[1], pc[1]))
            if mode == "bytes":
                return detail
            notes.extend(detail)
        return []
    return ["body differs (%s; reference -, candidate +):" % mode] + text_diff(rb, cb)


def text_diff(a, b):
    return line_diff(a.decode("utf-8", "replace").split("\n"),
                     b.decode("utf-8", "replace").split("\n"))


def line_diff(a, b, limit=30):
    d = list(difflib.unified_diff(a, b, "reference", "candidate", n=1, lineterm=""))[2:]
    if len(d) > limit:
        d = d[:limit] + ["... (%d more diff lines)" % (len(d) - limit)]
    return ["    " + x for x in d]


def compare_replies(step, ro, rr, co, cr, notes):
    diffs = []
    if ro != co:
        return ["outcome: reference %s, candidate %s" % (ro, co)]
    if ro != "reply":
        return []
    allow = step.get("allow", [])
    if "fenced_unregister" in allow and rr.code == 17 and cr.code == 0:
        notes.append("allowed: code 17 vs 0: %s" % REASONS["fenced_unregister"])
        return []
    if "config_line_break" in allow and "expect_cand" in step and (
            (step.get("code") == 318 and rr.code == 0 and cr.code == 16) or
            (step.get("code") == 319 and rr.code == 0 and cr.code == 0)):
        notes.append("allowed: %s" % REASONS["config_line_break"])
        return []
    binary = rr.stype == 1 or cr.stype == 1
    if rr.stype != cr.stype:
        if "reply_encoding" in allow and step.get("binary"):
            notes.append("allowed: reply serialize type %d vs %d: %s" %
                         (rr.stype, cr.stype, REASONS["reply_encoding"]))
        else:
            diffs.append("reply serialize type: reference %d, candidate %d" %
                         (rr.stype, cr.stype))
    if rr.code != cr.code:
        diffs.append("code: reference %s, candidate %s" % (rr.code, cr.code))
    r_rem, c_rem = rr.remark, cr.remark
    if binary:
        r_rem, c_rem = r_rem or None, c_rem or None
    if r_rem != c_rem:
        why = exception_remark_ok(rr.code, cr.code, r_rem, c_rem)
        if "exception_remark" in allow and why is None:
            notes.append("allowed: remark %r vs %r: %s" % (r_rem, c_rem,
                                                           REASONS["exception_remark"]))
        else:
            diffs.append("remark: reference %r, candidate %r%s" %
                         (r_rem, c_rem, " (%s)" % why if "exception_remark" in allow else ""))
    r_ext, c_ext = rr.ext, cr.ext
    if binary:
        r_ext, c_ext = r_ext or None, c_ext or None
    if r_ext != c_ext:
        diffs.append("extFields: reference %s, candidate %s" %
                     (json.dumps(r_ext, sort_keys=True), json.dumps(c_ext, sort_keys=True)))
    if rr.language != cr.language:
        diffs.append("language: reference %r, candidate %r" % (rr.language, cr.language))
    diffs += compare_bodies(step, rr, cr, notes)
    return diffs


_NPE = re.compile(r"^java\.lang\.NullPointerException: .*, ([\w$.<>]+\([\w$]+\.java:\d+\))$", re.S)
_JSONEX = re.compile(r"^com\.alibaba\.fastjson2?\.JSON(Valid)?Exception\b")


def exception_remark_ok(rcode, ccode, ref, cand):
    """None when two exception remarks differ only as the exception_remark allowance permits,
    else why not."""
    if rcode != 1 or ccode != 1 or ref is None or cand is None:
        return "not two code 1 exception remarks"
    m = _NPE.match(ref)
    if m:
        want = "java.lang.NullPointerException, " + m.group(1)
        return None if cand == want else "an NPE remark should read %r" % want
    if _JSONEX.match(ref) and _JSONEX.match(cand):
        return None
    return "not an NPE or JSONException remark"


def own_checks(label, outcome, r, opaque):
    if outcome != "reply":
        return []
    out = []
    if r.opaque != opaque:
        out.append("%s: opaque %s not echoed (%s)" % (label, r.opaque, opaque))
    if not (r.flag or 0) & 1:
        out.append("%s: response flag bit not set (flag %s)" % (label, r.flag))
    return out


# ---- trace loading and running -----------------------------------------------------------------

def load_trace(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    text = "\n".join("" if l.lstrip().startswith("#") else l for l in lines)
    dec = json.JSONDecoder()
    steps, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return steps
        try:
            obj, j = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise TraceError("%s:%d: %s" % (path, text.count("\n", 0, e.pos) + 1, e.msg))
        if not isinstance(obj, dict):
            raise TraceError("%s:%d: a step must be an object" % (path, text.count("\n", 0, i) + 1))
        obj.setdefault("name", "line %d" % (text.count("\n", 0, i) + 1))
        steps.append(obj)
        i = j


class Runner:
    def __init__(self, ref, cand, verbose, max_shown):
        self.ref, self.cand = ref, cand
        self.verbose = verbose
        self.max_shown = max_shown
        self.mismatches = 0
        self.compared = 0
        self.settle = True

    def report(self, step, lines):
        self.mismatches += 1
        if self.mismatches <= self.max_shown:
            print("MISMATCH %s (code %s, conn %s):" % (step["name"], step.get("code", "-"),
                                                       step.get("conn", "main")))
            for l in lines:
                print("  " + l)
        elif self.mismatches == self.max_shown + 1:
            print("(further mismatches counted, not shown)")

    def poll(self, server, step):
        until = step.get("until")
        if not isinstance(until, dict):
            raise TraceError("%s: poll needs an \"until\" object" % step["name"])
        deadline = time.monotonic() + float(step.get("timeout", 10))
        held = None  # the body of the previous reply, when it met the condition
        while True:
            out, r, op = server.request(step)
            why = satisfies(until, out, r)
            if why is None and step.get("code") == 106 and out == "reply" and r.code == 0:
                why = cluster_tables_disagree(r.body)
            if why is not None or out != "reply":
                held = None
            elif held is None or held != r.body:
                # Met once: ask again. Java 5.x applies a batch of unregistrations while readers
                # read without its lock, so one reply can catch a broker half removed (its last
                # address gone, its BrokerData not yet); two equal replies in a row cannot.
                held, why = r.body, "not yet the same on two replies in a row"
            if why is None or time.monotonic() > deadline:
                return out, r, op, why
            time.sleep(0.05 if held is not None else 0.1)

    def run_req(self, step):
        if "code" not in step and "header" not in step and "header_hex" not in step:
            raise TraceError("%s: no code" % step["name"])
        results = []
        for server in (self.ref, self.cand):
            if step.get("op") == "poll" and (server is self.ref or not step.get("poll_ref_only")):
                out, r, op, why = self.poll(server, step)
            else:
                (out, r, op), why = server.request(step), None
                if out == "closed":  # the next step on this name opens a new connection
                    server.drop(step.get("conn", "main"))
            results.append((out, r, op, why))
        (ro, rr, rop, rwhy), (co, cr, cop, cwhy) = results
        diffs = own_checks("reference", ro, rr, rop) + own_checks("candidate", co, cr, cop)
        if rwhy:
            diffs.append("reference never reached the poll condition: %s" % rwhy)
        if cwhy:
            diffs.append("candidate never reached the poll condition: %s" % cwhy)
        if "expect" in step:
            why = satisfies(step["expect"], ro, rr)
            if why:
                diffs.append("trace expectation not met by the reference: %s" % why)
        if "expect_cand" in step:
            why = satisfies(step["expect_cand"], co, cr)
            if why:
                diffs.append("trace expectation not met by the candidate: %s" % why)
        notes = []
        if "map_order_pick" in step.get("allow", []) and rr is not None and cr is not None:
            diffs += self.unpick(step, rr, cr, notes)
        diffs += compare_replies(step, ro, rr, co, cr, notes)
        self.compared += 1
        if self.verbose:
            print("-- %s code %s" % (step["name"], step.get("code")))
            print("   ref : %s" % (rr.summary() if rr else ro))
            print("   cand: %s" % (cr.summary() if cr else co))
        for n in notes:
            print("NOTE %s: %s" % (step["name"], n))
        if diffs:
            if rr is not None and cr is not None:
                diffs.append("reference reply: " + rr.summary())
                diffs.append("candidate reply: " + cr.summary())
            self.report(step, diffs)

    def unpick(self, step, rr, cr, notes):
        """map_order_pick: each server's brokerAddr must be one of its own broker addresses;
        then it is taken out of both bodies."""
        diffs, picks = [], []
        for server, r in ((self.ref, rr), (self.cand, cr)):
            body = json.loads(r.body) if r.body else {}
            pick = body.pop("brokerAddr", None)
            picks.append(pick)
            probe = {"code": 106, "conn": "__check__"}
            out, info, _ = server.request(probe)
            server.drop("__check__")
            if pick is not None and (out != "reply" or ('"%s"' % pick).encode() not in info.body):
                diffs.append("%s: brokerAddr %s is not a registered broker address" %
                             (server.label, pick))
            r.body = json.dumps(body, separators=(",", ":")).encode()
        if (picks[0] is None) != (picks[1] is None):
            diffs.append("brokerAddr: reference %s, candidate %s" % tuple(picks))
        elif picks[0] != picks[1]:
            notes.append("allowed: brokerAddr %s vs %s: %s" % (picks[0], picks[1],
                                                                 REASONS["map_order_pick"]))
        return diffs

    def run_step(self, step):
        op = step.get("op", "req")
        name = step.get("conn", "main")
        if op in ("req", "poll"):
            self.run_req(step)
        elif op == "close":
            for s in (self.ref, self.cand):
                s.drop(name)
        elif op in ("await_close", "raw"):
            outs = []
            for s in (self.ref, self.cand):
                c = s.conn(name)
                if op == "raw":
                    try:
                        c.send(bytes.fromhex(step["hex"]))
                    except OSError:
                        pass
                    if step.get("await") != "close":
                        outs.append("sent")
                        continue
                outs.append(c.await_close(float(step.get("timeout", 3))))
            self.compared += 1
            if "expect" in step and outs[0] != step["expect"]:
                self.report(step, ["trace expectation not met by the reference: %s, wanted %s" %
                                   (outs[0], step["expect"])])
            elif outs[0] != outs[1]:
                self.report(step, ["connection: reference %s, candidate %s" % tuple(outs)])
            for s in (self.ref, self.cand):
                if s.conns[name].closed_by_peer:
                    s.drop(name)
        elif op == "sleep":
            time.sleep(float(step["ms"]) / 1000)
        else:
            raise TraceError("%s: unknown op %r" % (step["name"], op))

    def finish(self):
        for s in (self.ref, self.cand):
            for name in list(s.conns):
                s.drop(name)
        for s in (self.ref, self.cand):
            for name, r in s.strays:
                self.report({"name": "end of trace", "conn": name},
                            ["%s sent an unsolicited frame: opaque %s flag %s %s" %
                             (s.label, r.opaque, r.flag, r.summary())])
        if not self.settle:  # --no-settle: the servers are shutting down, no next trace
            return
        # Start the next trace without brokers: closed connections unregister their brokers
        # (asynchronously in Java), so wait until no broker address is left on either server.
        # (A BrokerData without addresses can stay behind, in both: a refused registration
        # leaves one. Traces remove those with UNREGISTER_BROKER.)
        settle = {"op": "poll", "name": "end of trace: every broker unregistered", "code": 106,
                  "conn": "__settle__", "until": {"no_broker_addrs": True}, "timeout": 15}
        self.run_req(settle)
        for s in (self.ref, self.cand):
            s.drop("__settle__")


def cmd_run(args):
    global TLS_CONTEXT
    if args.tls:
        TLS_CONTEXT = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        TLS_CONTEXT.check_hostname = False
        TLS_CONTEXT.verify_mode = ssl.CERT_NONE
    try:
        steps = load_trace(args.trace)
    except (OSError, TraceError) as e:
        print("trace error: %s" % e)
        return 2
    runner = Runner(Server("reference", args.ref), Server("candidate", args.cand), args.verbose,
                    args.max_shown)
    runner.settle = not args.no_settle
    t0 = time.monotonic()
    try:
        for step in steps:
            t1 = time.monotonic()
            runner.run_step(step)
            if args.verbose and time.monotonic() - t1 > 0.3:
                print("   (%s took %.1f s)" % (step["name"], time.monotonic() - t1))
        runner.finish()
    except TraceError as e:
        print("trace error: %s" % e)
        return 2
    except (OSError, ValueError, struct.error) as e:
        print("harness error: %s: %s" % (type(e).__name__, e))
        return 2
    print("%s: %d steps, %d compared, %d mismatch(es), %.1f s" %
          (os.path.basename(args.trace), len(steps), runner.compared, runner.mismatches,
           time.monotonic() - t0))
    return 1 if runner.mismatches else 0


# ---- recording proxy --------------------------------------------------------------------------

class Recorder:
    """A TCP proxy in front of a NameServer that writes every request frame it forwards as a
    trace step (and the reply's code and remark as a comment)."""

    def __init__(self, upstream, out, probes):
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.out = out
        self.probes = probes
        self.lock = threading.Lock()
        self.counts = {}
        self.pending = {}

    def write(self, text):
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    def step_of(self, frame, conn):
        r, _ = decode_frame(frame)
        step = {"conn": conn, "code": r.code}
        if r.ext is not None:
            step["ext"] = r.ext
        step["version"] = r.version
        if r.language != "JAVA":
            step["language"] = r.language
        if r.remark:
            step["remark"] = r.remark
        if r.flag & 2:
            step["oneway"] = True
        if r.flag & ~2:
            step["flag"] = r.flag & ~2
        if r.stype == 1:
            step["binary"] = True
            step["allow"] = ["reply_encoding"]
        # The comparison rules these requests always need (documented in the module header).
        if r.code == 319:
            step["norm"] = ["namesrv_config_paths"]
        if r.code == 304:
            step["allow"] = step.get("allow", []) + ["map_order_pick"]
        if r.body:
            try:
                step["body"] = r.body.decode("utf-8")
                if step["body"].encode("utf-8") != r.body:
                    raise UnicodeError
            except UnicodeError:
                step.pop("body", None)
                step["body_b64"] = base64.b64encode(r.body).decode()
        return r, step

    def pump_requests(self, client, server, conn):
        buf = b""
        try:
            while True:
                chunk = client.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
                while True:
                    r, n = decode_frame(buf)
                    if r is None:
                        break
                    frame, buf = buf[:n], buf[n:]
                    r, step = self.step_of(frame, conn)
                    with self.lock:
                        self.pending[(conn, r.opaque)] = step
                        self.out.write(json.dumps(step, ensure_ascii=False) + "\n")
                        if r.code in (103, 104) and self.probes:
                            self.write_probes(r.code == 104, step)
                        self.out.flush()
                    server.sendall(frame)
        except OSError:
            pass
        finally:
            self.write(json.dumps({"op": "close", "conn": conn}))
            probe = self.gone_probe(conn) if self.probes else None
            if probe is not None:
                self.write(json.dumps(probe))
            for s in (client, server):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def write_probes(self, unregister, step):
        addr = (step.get("ext") or {}).get("brokerAddr", "")
        if unregister:
            self.out.write(json.dumps({"op": "poll", "conn": "probe", "code": 106,
                                       "until": {"body_lacks": '"%s"' % addr}}) + "\n")
        else:
            self.out.write(json.dumps({"conn": "probe", "code": 106}) + "\n")
        self.out.write(json.dumps({"conn": "probe", "code": 206}) + "\n")

    def gone_probe(self, conn):
        # A broker's registrations die with its connection (asynchronously in Java): the
        # replayer polls until the addresses this connection registered are gone.
        addrs = sorted({s.get("ext", {}).get("brokerAddr") for (c, _), s in self.pending.items()
                        if c == conn and s.get("code") == 103 and s.get("ext")} - {None})
        if not addrs:
            return None
        return {"op": "poll", "conn": "probe", "code": 106,
                "until": {"body_lacks": ['"%s"' % a for a in addrs]}}

    def pump_replies(self, server, client, conn):
        buf = b""
        try:
            while True:
                chunk = server.recv(1 << 16)
                if not chunk:
                    break
                client.sendall(chunk)
                buf += chunk
                while True:
                    r, n = decode_frame(buf)
                    if r is None:
                        break
                    buf = buf[n:]
                    with self.lock:
                        self.out.write("# %s opaque %s: reply code %s remark %s\n" %
                                       (conn, r.opaque, r.code, json.dumps(r.remark)))
        except OSError:
            pass
        finally:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def serve(self, label, lsock):
        while True:
            client, _ = lsock.accept()
            with self.lock:
                self.counts[label] = self.counts.get(label, 0) + 1
                conn = "%s-%d" % (label, self.counts[label])
            server = socket.create_connection(self.upstream)
            for target, a, b in ((self.pump_requests, client, server),
                                 (self.pump_replies, server, client)):
                threading.Thread(target=target, args=(a, b, conn), daemon=True).start()


def cmd_record(args):
    out = open(args.out, "a", encoding="utf-8")
    rec = Recorder(args.upstream, out, not args.no_probes)
    for spec in args.listen:
        label, portfile = spec.split(":", 1)
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", 0))
        ls.listen(64)
        with open(portfile + ".tmp", "w") as f:
            f.write(str(ls.getsockname()[1]))
        os.rename(portfile + ".tmp", portfile)
        threading.Thread(target=rec.serve, args=(label, ls), daemon=True).start()
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline and not os.path.exists(args.stop_file):
        time.sleep(0.2)
    time.sleep(0.5)
    out.close()
    return 0


# ---- self test of the comparator ----------------------------------------------------------------

def cmd_selftest(_args):
    """The comparator must be able to fail: known-equal and known-different pairs."""
    cases = [
        # (code, cmp, reference body, candidate body, should match)
        (105, "bytes", '{"a":{0:"x",1:"y"},"b":1}', '{"a":{0:"x",1:"y"},"b":1}', True),
        (105, "bytes", '{"a":{0:"x"}}', '{"a":{"0":"x"}}', False),          # key quoting
        (105, "json", '{"a":{0:"x"}}', '{"a":{"0":"x"}}', True),
        (105, "bytes", '{"b":1,"a":2}', '{"a":2,"b":1}', False),            # property order
        (105, "bytes", '{"queueDatas":[{"n":1},{"n":2}]}', '{"queueDatas":[{"n":2},{"n":1}]}',
         True),                                                             # hash order
        (105, "bytes", '{"x":[1,2]}', '{"x":[2,1]}', False),                # list order
        (106, "json", '{"clusterAddrTable":{"c":["a","b"]}}', '{"clusterAddrTable":{"c":["b","a"]}}',
         True),
        (106, "json", '{"clusterAddrTable":{"c":["a","b"]}}', '{"clusterAddrTable":{"c":["a"]}}',
         False),
        (105, "bytes", '{"a":"x/y"}', '{"a":"x\\/y"}', False),              # escaping
        (105, "bytes", '{"a":1}', '{"a": 1}', False),                       # whitespace
        (219, "json", '{"table":{"k":"v"}}', '{"table":{"k":"w"}}', False),
        (319, "text", "a=1\nb=2\n", "a=1\nb=3\n", False),
    ]
    bad = 0
    for code, mode, a, b, same in cases:
        r, c = Reply(), Reply()
        r.body, c.body = a.encode(), b.encode()
        got = not compare_bodies({"code": code, "cmp": mode}, r, c, [])
        if got != same:
            bad += 1
            print("selftest FAILED: %s %s %r vs %r: match=%s, wanted %s" % (code, mode, a, b, got,
                                                                          same))
    # The exception_remark allowance: only the JDK 17 NPE message and fastjson2's text.
    frame = "org.apache.rocketmq.namesrv.routeinfo.BrokerAddrInfo.hashCode(RouteInfoManager.java:1161)"
    remarks = [
        (1, 1, 'java.lang.NullPointerException: Cannot invoke "String.length()", ' + frame,
         "java.lang.NullPointerException, " + frame, True),
        (1, 1, 'java.lang.NullPointerException: x, ' + frame,
         "java.lang.NullPointerException, " + frame.replace("1161", "1162"), False),
        (1, 1, "com.alibaba.fastjson2.JSONException: illegal input, offset 1",
         "com.alibaba.fastjson.JSONException: syntax error", True),
        (1, 1, "com.alibaba.fastjson2.JSONException: x", "java.lang.NullPointerException, " + frame,
         False),
        (0, 0, "com.alibaba.fastjson2.JSONException: x", "com.alibaba.fastjson.JSONException: y",
         False),
        (1, 1, "crc32 not match", "register broker failed", False),
    ]
    for rc, cc, ref, cand, ok in remarks:
        if (exception_remark_ok(rc, cc, ref, cand) is None) != ok:
            bad += 1
            print("selftest FAILED: exception_remark %r vs %r, wanted %s" % (ref, cand, ok))
    cases += remarks
    mid = b'{"brokerAddrTable":{},"clusterAddrTable":{"C":["b"]}}'
    done = b'{"brokerAddrTable":{"b":{"brokerAddrs":{}}},"clusterAddrTable":{"C":["b"]}}'
    if cluster_tables_disagree(mid) is None or cluster_tables_disagree(done) is not None:
        bad += 1
        print("selftest FAILED: cluster table agreement")
    # The codec: a binary header round trip, and a frame split across reads.
    h = encode_binary_header(105, "GO", 317, 9, 0, None, {"topic": "T", "empty": ""})
    code, lang, ver, opq, flag, rem, ext = decode_binary_header(h)
    if (code, lang, ver, opq, flag, rem, ext) != (105, "GO", 317, 9, 0, None, {"topic": "T"}):
        bad += 1
        print("selftest FAILED: binary header round trip: %r" % ((code, lang, ver, opq, ext),))
    # ext_raw puts its bytes on the wire as they are; a reply holding them would be refused
    raw = encode_binary_header(105, "JAVA", 479, 1, 0, None, {}, [("746f706963", "5200ff")])
    if b"\x00\x05topic\x00\x00\x00\x03R\x00\xff" not in raw:
        bad += 1
        print("selftest FAILED: ext_raw bytes")
    try:
        decode_binary_header(raw)
        bad += 1
        print("selftest FAILED: a binary string that is not UTF-8 was accepted")
    except ValueError:
        pass
    req = build_request({"name": "x", "header_hex": b'{"code":105,"opaque":0}'.hex()}, 7)
    if b'"opaque":7' not in req:
        bad += 1
        print("selftest FAILED: header_hex opaque")
    frame = encode_frame(1, h, b"xyz")
    if decode_frame(frame[:-1])[0] is not None or decode_frame(frame)[0].body != b"xyz":
        bad += 1
        print("selftest FAILED: frame decoding")
    # docs/protocol.md, section CRC32 check: the masked CRC of {"filterServerList":[]} is
    # 2053024402.
    if masked_crc(b'{"filterServerList":[]}') != 2053024402:
        bad += 1
        print("selftest FAILED: masked CRC32")
    print("selftest: %d cases, %d failed" % (len(cases) + 4, bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--ref", required=True, help="host:port of the reference (Java) NameServer")
    r.add_argument("--cand", required=True, help="host:port of the candidate (mqnamesrv)")
    r.add_argument("--verbose", action="store_true", help="print both replies of every step")
    r.add_argument("--max-shown", type=int, default=8, help="mismatches shown in full")
    r.add_argument("--tls", action="store_true", help="talk TLS to both servers")
    r.add_argument("--no-settle", action="store_true",
                   help="do not wait for the brokers to go at the end (servers shutting down)")
    r.add_argument("trace")
    rec = sub.add_parser("record")
    rec.add_argument("--upstream", required=True)
    rec.add_argument("--listen", action="append", required=True, help="LABEL:PORTFILE")
    rec.add_argument("--out", required=True)
    rec.add_argument("--stop-file", required=True, help="recording ends when this file appears")
    rec.add_argument("--max-seconds", type=float, default=600)
    rec.add_argument("--no-probes", action="store_true")
    sub.add_parser("selftest")
    args = ap.parse_args()
    return {"run": cmd_run, "record": cmd_record, "selftest": cmd_selftest}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
