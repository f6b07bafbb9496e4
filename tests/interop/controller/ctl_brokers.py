#!/usr/bin/env python3
"""Fake brokers of one broker set in controller mode, for the nsadmin/mqadmin comparison
(tests/interop/run_nsadmin_ctl.sh): they give a controller a state worth printing and keep it.

    ctl_brokers.py --controller IP:PORT [--namesrv IP:PORT] --cluster C --broker B
                   --ready FILE [--seconds 600]

Against the controller's leader (found with 1005, as a broker finds it), four brokers of set B
register as a 5.5.0 broker does (1012 next id, 1013 apply, 1003 register): ids 1 and 2
heartbeat (904) every second, 3 and 4 never do (dead: what cleanBrokerMetadata may remove).
Broker 1 elects itself (1002) and, as master, puts 2 into the SyncStateSet (1001). With
--namesrv, brokers 1 and 2 also register with that NameServer (103, master as id 0) every 20 s,
so that getSyncStateSet -c finds the set by its cluster. Each broker address is a socket of
this script that takes whatever the controller sends (1008).

Brokers heartbeat to every peer of the group (1005's "peers"), as brokers do: liveness is each
controller's own. Then FILE gets one JSON line: {"leader": ..., "brokers": {"1": addr, ...}},
and the heartbeats go on until --seconds have passed (the caller kills it sooner). Exit 0, or
1 with the reason on stderr when a step is refused."""
import argparse
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from replay import Conn, build_request  # noqa: E402  (the interop codec)


class Refused(Exception):
    pass


def hostport(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


class Client:
    """One connection, requests one at a time (a broker's channel)."""

    def __init__(self, addr):
        self.conn = Conn(hostport(addr))
        self.opaque = 0

    def call(self, code, ext, body_json=None, oneway=False):
        self.opaque += 1
        step = {"name": str(code), "code": code, "ext": ext, "oneway": oneway}
        if body_json is not None:
            step["body_json"] = body_json
        self.conn.send(build_request(step, self.opaque))
        if oneway:
            return None
        kind, r = self.conn.read_reply(self.opaque, timeout=10)
        if kind != "reply":
            raise Refused("%d: no reply (%s)" % (code, kind))
        return r


def expect(r, what, codes=(0,)):
    if r.code not in codes:
        raise Refused("%s: code %s %s" % (what, r.code, r.remark))
    return r


def sink():
    """A listening socket that takes every connection and reads it to the end."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)

    def drain(c):
        while c.recv(65536):
            pass

    def accept():
        while True:
            c, _ = s.accept()
            threading.Thread(target=drain, args=(c,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return s, "127.0.0.1:%d" % s.getsockname()[1]


def find_leader(controller, deadline):
    while time.monotonic() < deadline:
        try:
            r = Client(controller).call(1005, None)
            leader = (r.ext or {}).get("controllerLeaderAddress")
            if r.code == 0 and leader:
                return leader
        except (OSError, Refused):
            pass
        time.sleep(0.5)
    raise Refused("the controller %s knows no leader" % controller)


def group_peers(controller):
    """The peer addresses of 1005's "peers" ("n0:ip:port;n1:ip:port;")."""
    r = Client(controller).call(1005, None)
    peers = (r.ext or {}).get("peers") or ""
    return [p.split(":", 1)[1] for p in peers.split(";") if ":" in p]


def register(leader, cluster, broker, addr):
    """1012, 1013, 1003 as ReplicasManager.register does; returns the id."""
    c = Client(leader)
    names = {"clusterName": cluster, "brokerName": broker}
    r = expect(c.call(1012, names), "1012")
    bid = r.ext["nextBrokerId"]
    expect(c.call(1013, dict(names, appliedBrokerId=bid,
                             registerCheckCode="%s;%d" % (addr, int(time.time() * 1000)))),
           "1013")
    expect(c.call(1003, dict(names, brokerId=bid, brokerAddress=addr, invokeTime="0")), "1003")
    return bid


def heartbeat(c, cluster, broker, bid, addr, epoch):
    c.call(904, {"clusterName": cluster, "brokerAddr": addr, "brokerName": broker,
                 "brokerId": bid, "epoch": str(epoch), "maxOffset": "100",
                 "confirmOffset": "100", "heartbeatTimeoutMills": "10000",
                 "electionPriority": "2147483647"}, oneway=True)


def namesrv_register(c, cluster, broker, ns_id, addr):
    # two topics: Java refuses a first registration of exactly one (RouteInfoManager)
    topics = {t: {"attributes": {}, "order": False, "perm": 7 if t == "TBW102" else 6,
                  "readQueueNums": 8, "topicFilterType": "SINGLE_TAG", "topicName": t,
                  "topicSysFlag": 0, "writeQueueNums": 8} for t in ("TBW102", broker)}
    body = {"filterServerList": [], "topicConfigSerializeWrapper": {
        "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1700000000000},
        "topicConfigTable": topics}}
    expect(c.call(103, {"brokerAddr": addr, "brokerId": ns_id, "brokerName": broker,
                        "clusterName": cluster, "compressed": "false",
                        "enableActingMaster": "false", "haServerAddr": addr}, body), "103")


def probe(controller, cluster, broker, deadline):
    """Whether the leader serves before the deadline. Java's DLedger controller elects itself
    and then commits an initial proposal before it is in leader state (until then 2007); now
    and then that proposal never commits and the controller never serves."""
    while time.monotonic() < deadline:
        try:
            leader = find_leader(controller, deadline)
            r = Client(leader).call(1012, {"clusterName": cluster, "brokerName": broker})
            if r.code != 2007:
                return 0
        except (OSError, Refused):
            pass
        time.sleep(0.5)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--controller", required=True)
    ap.add_argument("--namesrv")
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--probe", type=float, default=0,
                    help="only wait up to this many seconds for the leader to serve (1012 "
                         "answered, not 2007); exit 0 when it does, 1 when not")
    a = ap.parse_args()
    if a.probe > 0:
        return probe(a.controller, a.cluster, a.broker, time.monotonic() + a.probe)
    end = time.monotonic() + a.seconds
    try:
        leader = find_leader(a.controller, time.monotonic() + 120)
        sockets, addrs, ids = [], {}, []
        for _ in range(4):
            s, addr = sink()
            sockets.append(s)
            bid = register(leader, a.cluster, a.broker, addr)
            addrs[bid] = addr
            ids.append(bid)
        peers = group_peers(a.controller) or [leader]
        live = {bid: [Client(p) for p in peers] for bid in ids[:2]}
        for bid, conns in live.items():
            for c in conns:
                heartbeat(c, a.cluster, a.broker, bid, addrs[bid], 0)
        master = ids[0]
        admin = Client(leader)
        r = expect(admin.call(1002, {"clusterName": a.cluster, "brokerName": a.broker,
                                     "brokerId": master, "designateElect": "false",
                                     "invokeTime": str(int(time.time() * 1000))}), "1002")
        epoch = int(r.ext["masterEpoch"])
        sse = int(r.ext["syncStateSetEpoch"])
        expect(admin.call(1001, {"brokerName": a.broker, "masterBrokerId": master,
                                 "masterEpoch": str(epoch),
                                 "invokeTime": str(int(time.time() * 1000))},
                          {"syncStateSet": [int(i) for i in ids[:2]],
                           "syncStateSetEpoch": sse}), "1001")
        ns = Client(a.namesrv) if a.namesrv else None
        last_ns = 0.0
        with open(a.ready + ".tmp", "w") as f:
            json.dump({"leader": leader, "brokers": addrs}, f)
            f.write("\n")
        ready_written = False
        while time.monotonic() < end:
            for bid, conns in live.items():
                for c in conns:
                    heartbeat(c, a.cluster, a.broker, bid, addrs[bid], epoch)
            if ns and time.monotonic() - last_ns > 20:
                namesrv_register(ns, a.cluster, a.broker, "0", addrs[ids[0]])
                namesrv_register(ns, a.cluster, a.broker, ids[1], addrs[ids[1]])
                last_ns = time.monotonic()
            if not ready_written:
                os.rename(a.ready + ".tmp", a.ready)
                ready_written = True
            time.sleep(1.0)
    except (OSError, Refused, KeyError, ValueError) as e:
        print("ctl_brokers: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
