#!/usr/bin/env python3
"""Idle load of a controller for bench/controller.sh: SETS broker sets of two brokers each
register with the controller group (1013, 1003 on the leader), heartbeat (904, oneway) to every
controller each second and elect their masters (1002); then they only heartbeat, for SECONDS,
as brokers at rest do.

    ctl_idle.py SETS SECONDS CTL...     prints "ready" once every set has its master, then
                                        heartbeats until SECONDS have passed; exit 1 on a
                                        refused setup step

One process, one connection per broker and controller (a broker's heartbeats come on one
connection, whose close would make it gone).
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "interop"))
from replay import Conn, encode_frame  # noqa: E402  (the interop codec)

SETS, SECONDS, CTLS = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
OPAQUE = [0]


def frame(code, ext, oneway=False):
    OPAQUE[0] += 1
    h = {"code": code, "flag": 2 if oneway else 0, "language": "JAVA", "opaque": OPAQUE[0],
         "serializeTypeCurrentRPC": "JSON", "version": 479, "extFields": ext}
    return OPAQUE[0], encode_frame(0, json.dumps(h).encode(), b"")


def leader():
    for _ in range(300):
        for a in CTLS:
            host, port = a.rsplit(":", 1)
            try:
                c = Conn((host, int(port)))
                op, f = frame(1005, {})
                c.send(f)
                kind, r = c.read_reply(op, 3)
                c.close()
                if kind == "reply" and (r.ext or {}).get("isLeader") == "true":
                    return a
            except OSError:
                pass
        time.sleep(0.2)
    sys.exit("no leader")


def main():
    lead = leader()
    host, port = lead.rsplit(":", 1)
    adm = Conn((host, int(port)))
    brokers = [("set-%d" % s, b, "127.0.0.2:%d" % (20000 + 2 * s + b)) for s in range(SETS)
               for b in (1, 2)]
    for name, bid, addr in brokers:
        for code, ext in ((1013, {"appliedBrokerId": str(bid), "registerCheckCode": addr + ";1"}),
                          (1003, {"brokerAddress": addr, "brokerId": str(bid)})):
            ext.update({"clusterName": "idle", "brokerName": name})
            op, f = frame(code, ext)
            adm.send(f)
            kind, r = adm.read_reply(op, 10)
            if kind != "reply" or r.code not in (0, 2005, 2014):
                sys.exit("%s %d: %d %s" % (name, code, r.code if r else -1, r and r.remark))
    conns = {}
    for name, bid, addr in brokers:
        for a in CTLS:
            h, p = a.rsplit(":", 1)
            s = socket.create_connection((h, int(p)))
            conns[(name, bid, a)] = s

    def beat():
        for (name, bid, a), s in conns.items():
            addr = "127.0.0.2:%d" % (20000 + 2 * int(name.split("-")[1]) + bid)
            _, f = frame(904, {"clusterName": "idle", "brokerName": name, "brokerAddr": addr,
                               "brokerId": str(bid), "heartbeatTimeoutMills": "10000",
                               "epoch": "0", "maxOffset": "0", "confirmOffset": "0"}, True)
            s.sendall(f)

    beat()
    for s in range(SETS):
        op, f = frame(1002, {"clusterName": "idle", "brokerName": "set-%d" % s, "brokerId": "1",
                             "designateElect": "false"})
        adm.send(f)
        kind, r = adm.read_reply(op, 10)
        if kind != "reply" or r.code not in (0, 2011):
            sys.exit("set-%d 1002: %s" % (s, r and (r.code, r.remark)))
    print("ready", flush=True)
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        t = time.monotonic()
        beat()
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
