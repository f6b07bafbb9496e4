#!/usr/bin/env python3
"""Replays the golden answers of the Java 5.5.0 embedded controller (golden_*.jsonl, recorded by
record.sh) against any controller group and compares every reply with Java's.

    ctl_replay.py --node n0=127.0.0.1:P0 [--node n1=... --node n2=...] [--pid n0=PID ...]
                  [--strict] golden_one.jsonl

The nodes are the controller addresses (controllerDLegerPeers), named as in the recording (the
group needs as many). --pid lets a "kill" step kill the leader's process (SIGKILL). Fake
brokers (${L1}, ${L2}, ${L3}) are sockets of this script: they record what the controller
sends them (1008). Exit status: 0 all steps matched (allowed differences are listed), 1 a
mismatch, 2 a harness error.

Comparison, per reply: the code; the remark; the ext fields (placeholders resolved: ${n0} the
node addresses, ${L1} the fake brokers, ${leader} and ${leader_id} the leader at that step,
isLeader true only from the leader); the body as JSON when both are (a bare integer map key and
its quoted form are the same key, a difference listed as "quoted_keys"), else as text; 1010's
properties body by its keys (paths, ports and Java's jraftConfig@hash differ by run; our
JraftConfig keys stand in its place). Allowed without --strict: the remark of a code 1 reply
(Java's exception texts name JDK classes and offsets: "exception_remark"); a poll's reply that
meets the poll's condition with the code Java answered, whose other fields show another moment
of the same transitions ("poll_moment": later steps check where they end).
Step kinds: see record.sh and CtlGolden.java.
"""
import argparse
import json
import os
import select
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from replay import Conn, decode_frame, encode_frame  # noqa: E402  (the interop codec)


class Harness(Exception):
    pass


class Listener:
    """A fake broker: accepts connections and records every frame sent to it."""

    def __init__(self, label):
        self.label = label
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.frames = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c):
        buf = b""
        while True:
            try:
                chunk = c.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while True:
                r, n = decode_frame(buf)
                if r is None:
                    break
                buf = buf[n:]
                with self.lock:
                    self.frames.append(r)

    def take(self):
        with self.lock:
            f, self.frames = self.frames, []
        return f

    def await_count(self, n, secs):
        """Waits (at most secs) until n frames have arrived."""
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.frames) >= n:
                    return
            time.sleep(0.05)


class Replayer:
    def __init__(self, nodes, pids, strict):
        self.nodes = dict(nodes)  # n0 -> ip:port
        self.pids = dict(pids)
        self.dead = set()
        self.strict = strict
        self.listeners = {l: Listener(l) for l in ("L1", "L2", "L3")}
        self.conns = {}
        self.keepalives = {}
        self.leader = None
        self.opaque = 1000
        self.fails = 0
        self.allowed = 0
        self.steps = 0

    # ---- placeholders ------------------------------------------------------------------
    def sub(self, s):
        if not isinstance(s, str):
            return s
        for n, a in self.nodes.items():
            s = s.replace("${%s}" % n, a)
        for l, ls in self.listeners.items():
            s = s.replace("${%s}" % l, ls.addr)
        if self.leader is not None:
            s = s.replace("${leader_id}", self.leader).replace("${leader}", self.nodes[self.leader])
        return s

    # ---- connections -----------------------------------------------------------------
    @staticmethod
    def peer_closed(c):
        """Whether the server closed c (a broker's expired channel): a client reconnects, as
        Java's NettyRemotingClient does, rather than write into a closed socket."""
        if c.closed_by_peer:
            return True
        if select.select([c.sock], [], [], 0)[0]:
            try:
                if c.sock.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
        return False

    def conn(self, name, node):
        key = (name, node)
        c = self.conns.get(key)
        if c is None or self.peer_closed(c):
            host, port = self.nodes[node].rsplit(":", 1)
            c = Conn((host, int(port)))
            self.conns[key] = c
        return c

    def send(self, name, node, req, oneway, wait=10.0):
        self.opaque += 1
        opaque = self.opaque
        ext = {k: self.sub(v) for k, v in req.get("ext", {}).items()} if "ext" in req else None
        h = {"code": req["code"]}
        if ext is not None:
            h["extFields"] = ext
        h.update(flag=(req.get("flag", 0) | (2 if oneway else 0)), language="JAVA",
                 opaque=opaque, serializeTypeCurrentRPC="JSON", version=513)
        body = self.sub(req["body"]).encode() if "body" in req else b""
        frame = encode_frame(0, json.dumps(h, separators=(",", ":")).encode(), body)
        c = self.conn(name, node)
        try:
            c.send(frame)
        except OSError:
            self.conns.pop((name, node), None)
            c = self.conn(name, node)
            c.send(frame)
        if oneway:
            return None
        kind, r = c.read_reply(opaque, wait)
        if kind != "reply":
            raise Harness("no reply from %s (%s) for code %s" % (node, kind, req["code"]))
        return r

    # ---- the group --------------------------------------------------------------------
    def find_leader(self, secs=60):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            for n in self.nodes:
                if n in self.dead:
                    continue
                try:
                    r = self.send("probe", n, {"code": 1005}, False, 3)
                    if (r.ext or {}).get("isLeader") == "true":
                        p = self.send("probe", n, {"code": 1012, "ext": {"clusterName": "probe",
                                                                          "brokerName": "probe"}},
                                      False, 3)
                        if p.code == 0:
                            self.leader = n
                            return n
                except (Harness, OSError):
                    self.conns.pop(("probe", n), None)
            time.sleep(0.2)
        raise Harness("no leader within %d s" % secs)

    def resolve(self, node):
        if node == "leader":
            if self.leader is None or self.leader in self.dead:
                self.find_leader()
            return self.leader
        if node == "follower":
            if self.leader is None:
                self.find_leader()
            for n in self.nodes:
                if n != self.leader and n not in self.dead:
                    return n
            raise Harness("no follower")
        return node

    # ---- comparison -------------------------------------------------------------------
    @staticmethod
    def quote_bare_keys(text):
        """fastjson's {1:"a"} as {"1":"a"} (outside strings)."""
        out, i, in_str = [], 0, False
        while i < len(text):
            ch = text[i]
            if in_str:
                out.append(ch)
                if ch == "\\":
                    out.append(text[i + 1])
                    i += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
                out.append(ch)
            elif ch in "{," and i + 1 < len(text):
                out.append(ch)
                j = i + 1
                while j < len(text) and text[j] == " ":
                    j += 1
                k = j
                while k < len(text) and (text[k].isdigit() or (k == j and text[k] == "-")):
                    k += 1
                if k > j and k < len(text) and text[k] == ":":
                    out.append('"%s"' % text[j:k])
                    i = k - 1
            else:
                out.append(ch)
            i += 1
        return "".join(out)

    def compare(self, step, node, want, got):
        notes, bad = [], []
        if want["code"] != got.code:
            bad.append("code %s, Java %s" % (got.code, want["code"]))
        wr = self.sub(want.get("remark"))
        if wr != got.remark:
            if want["code"] == 1 and got.code == 1:
                notes.append("exception_remark")
            else:
                bad.append("remark %r, Java %r" % (got.remark, wr))
        wext = want.get("ext")
        if wext is not None:
            wext = {k: self.sub(v) for k, v in wext.items()}
            if "isLeader" in wext:
                wext["isLeader"] = "true" if node == self.leader else "false"
        if (wext or None) != (got.ext or None) and not (wext == {} and got.ext in (None, {})):
            bad.append("ext %s, Java %s" % (json.dumps(got.ext, sort_keys=True),
                                             json.dumps(wext, sort_keys=True)))
        wb = self.sub(want.get("body", ""))
        gb = got.body.decode("utf-8", "replace")
        if step["req"]["code"] == 1010:
            keys = lambda b: sorted(l.split("=", 1)[0] for l in b.split("\n")  # noqa: E731
                                    if "=" in l and not l.startswith(("jraftConfig", "jRaft")))
            if keys(wb) != keys(gb):
                bad.append("1010 keys %s, Java %s" % (keys(gb), keys(wb)))
        elif wb != gb:
            try:
                wj = json.loads(self.quote_bare_keys(wb))
                gj = json.loads(self.quote_bare_keys(gb))
                if wj == gj:
                    notes.append("quoted_keys")
                else:
                    bad.append("body %s, Java %s" % (gb[:400], wb[:400]))
            except ValueError:
                bad.append("body %r, Java %r" % (gb[:400], wb[:400]))
        return notes, bad

    def report(self, name, notes, bad):
        self.steps += 1
        if bad:
            self.fails += 1
            print("FAIL %s: %s" % (name, "; ".join(bad)))
        elif notes and not self.strict:
            self.allowed += 1
            print("PASS %s (allowed: %s)" % (name, ", ".join(notes)))
        elif notes:
            self.fails += 1
            print("FAIL %s (strict: %s)" % (name, ", ".join(notes)))
        else:
            print("PASS %s" % name)

    # ---- steps ------------------------------------------------------------------------
    def matches(self, cond, r):
        if "code" in cond and cond["code"] != r.code:
            return False
        for k, v in cond.get("ext", {}).items():
            if (r.ext or {}).get(k) != self.sub(str(v)):
                return False
        for k in cond.get("ext_absent", []):
            if k in (r.ext or {}):
                return False
        if "body_contains" in cond and self.sub(cond["body_contains"]) not in r.body.decode(
                "utf-8", "replace"):
            return False
        return True

    def keepalive(self, step):
        stop = threading.Event()
        node = self.resolve(step["node"])
        host, port = self.nodes[node].rsplit(":", 1)
        req = step["req"]

        def beat():
            c = Conn((host, int(port)))
            while not stop.is_set():
                self.opaque += 1
                h = {"code": req["code"], "extFields": {k: self.sub(v) for k, v in req["ext"].items()},
                     "flag": 2, "language": "JAVA", "opaque": self.opaque,
                     "serializeTypeCurrentRPC": "JSON", "version": 513}
                try:
                    c.send(encode_frame(0, json.dumps(h).encode(), b""))
                except OSError:
                    c = Conn((host, int(port)))
                stop.wait(step.get("every_ms", 1000) / 1000.0)
            c.close()
        t = threading.Thread(target=beat, daemon=True)
        t.start()
        self.keepalives[step["conn"]] = (stop, t)

    def run_step(self, step):
        op = step.get("op", "req")
        name = step["name"]
        if op == "sleep":
            time.sleep(step["ms"] / 1000.0)
            return
        if op == "keepalive":
            self.keepalive(step)
            return
        if op == "keepalive_stop":
            stop, t = self.keepalives.pop(step["conn"])
            stop.set()
            t.join()
            return
        if op == "close":
            for key in [k for k in self.conns if k[0] == step["conn"]]:
                self.conns.pop(key).close()
            return
        if op == "kill":
            n = self.resolve(step["node"])
            if n not in self.pids:
                raise Harness("%s: no --pid for %s" % (name, n))
            os.kill(self.pids[n], signal.SIGKILL)
            self.dead.add(n)
            self.leader = None
            return
        if op == "notify":
            want = step["frames"]
            # The frames Java sent, however late a loaded machine makes them, then 1.5 s more,
            # as the recording waited, for any frame Java did not send.
            self.listeners[step["listener"]].await_count(len(want), 60)
            time.sleep(1.5)
            got = self.listeners[step["listener"]].take()
            bad = []
            if len(got) != len(want):
                bad.append("%d frames, Java %d" % (len(got), len(want)))
            for w, g in zip(want, got):
                wh = w["header"]
                wext = {k: self.sub(v) for k, v in wh.get("extFields", {}).items()}
                if (wh["code"], wh["flag"], wext) != (g.code, g.flag, g.ext or {}):
                    bad.append("frame code %s flag %s ext %s, Java %s %s %s" % (
                        g.code, g.flag, g.ext, wh["code"], wh["flag"], wext))
                if self.sub(w.get("body", "")) != g.body.decode("utf-8", "replace"):
                    bad.append("frame body %r, Java %r" % (g.body, w.get("body")))
            self.report(name, [], bad)
            return
        node = self.resolve(step.get("node", "leader"))
        oneway = step.get("oneway", False)
        if op == "poll":
            deadline = time.monotonic() + max(step.get("timeout", 30), 30) * 2
            while True:
                node = self.resolve(step.get("node", "leader"))
                r = self.send(step["conn"], node, step["req"], False)
                if self.matches(step["until"], r) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        else:
            r = self.send(step["conn"], node, step["req"], oneway)
        if oneway:
            # A oneway frame has no answer, and a loaded machine may read another connection's
            # next request first (a heartbeat read after the election it should have joined).
            # Java's recording had them in order; a 1005 on the same connection, answered, says
            # the node has taken the frame before it (one connection's frames are handled in
            # order), and changes nothing.
            try:
                self.send(step["conn"], node, {"code": 1005}, False, 30)
            except (OSError, Harness):
                pass
            self.steps += 1
            print("PASS %s (oneway)" % name)
            return
        notes, bad = self.compare(step, node, step["reply"], r)
        if op == "poll" and bad and self.matches(step["until"], r) and r.code == step["reply"]["code"]:
            # The first reply meeting the condition shows the state at that moment: Java's was
            # taken at another point of the same transitions (three failed elections move the
            # epoch one by one); later steps check where they end.
            notes, bad = notes + ["poll_moment: " + "; ".join(bad)], []
        self.report(name, notes, bad)

    def run(self, path):
        with open(path, encoding="utf-8") as f:
            steps = [json.loads(l) for l in f if l.strip() and not l.startswith("#")]
        for step in steps:
            self.run_step(step)
        for stop, t in self.keepalives.values():
            stop.set()
        print("== %s: %d steps, %d failed, %d with allowed differences" % (
            os.path.basename(path), self.steps, self.fails, self.allowed))
        return 1 if self.fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--node", action="append", default=[], help="n0=ip:port")
    ap.add_argument("--pid", action="append", default=[], help="n0=PID")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("golden")
    a = ap.parse_args()
    nodes = [n.split("=", 1) for n in a.node]
    pids = [(k, int(v)) for k, v in (p.split("=", 1) for p in a.pid)]
    try:
        sys.exit(Replayer(nodes, pids, a.strict).run(a.golden))
    except Harness as e:
        print("HARNESS: %s" % e)
        sys.exit(2)


if __name__ == "__main__":
    main()
