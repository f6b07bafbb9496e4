#!/usr/bin/env python3
"""Watches a controller group and its NameServers for the interop suite (run_controller.sh) and
the failover benchmark (bench/controller_failover.sh). Any controller: mqnamesrv's or Java's.

    ctl_watch.py leader CTL...                  the leader's id, as the first node that says
                                                isLeader=true answers 1005 (exit 1: none in 30 s)
    ctl_watch.py agree CTL...                   every node answers 1005 naming the same leader:
                                                prints its id (exit 1: not so within 30 s)
    ctl_watch.py replica CTL... BROKER          the leader's 1004 for BROKER: "master=<addr>
                                                masterEpoch=<n> syncStateSetEpoch=<n> sss=<ids>"
                                                (asked again on 2007 for up to 30 s)
    ctl_watch.py master NS BROKER               the address NS's route shows as BROKER's master
                                                (brokerId 0 in 106's brokerAddrTable), or "-"
    ctl_watch.py wait_master SINCE_MS SECS ADDR BROKER NS...
                                                polls every 20 ms until every NS shows ADDR as
                                                BROKER's master; prints the milliseconds since
                                                SINCE_MS (wall clock, ms) when the last one did;
                                                exit 1 after SECS
    ctl_watch.py wait_master_route SINCE_MS SECS ADDR BROKER TOPIC NS...
                                                wait_master, and each poll asks every NS for
                                                TOPIC's route too: prints "<ms> topic_lost=<k>",
                                                k the polls in which some NS answered it with
                                                an error or without BROKER's queues
    ctl_watch.py wait_gone SECS ADDR BROKER NS...
                                                until no NS shows ADDR in BROKER's addresses

CTL and NS are ip:port. Requests are JSON-serialized remoting frames (replay.py's codec).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from replay import Conn, encode_frame  # noqa: E402  (the interop codec)

OPAQUE = [1]


def call(addr, code, ext=None, body=b"", timeout=3.0):
    host, port = addr.rsplit(":", 1)
    c = Conn((host, int(port)))
    try:
        OPAQUE[0] += 1
        h = {"code": code, "flag": 0, "language": "JAVA", "opaque": OPAQUE[0],
             "serializeTypeCurrentRPC": "JSON", "version": 479, "extFields": ext or {}}
        c.send(encode_frame(0, json.dumps(h).encode(), body))
        kind, r = c.read_reply(OPAQUE[0], timeout)
        return r if kind == "reply" else None
    finally:
        c.close()


def try_call(*a, **k):
    try:
        return call(*a, **k)
    except OSError:
        return None


def leader(ctls, secs=30):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        for a in ctls:
            r = try_call(a, 1005)
            if r is not None and r.code == 0 and (r.ext or {}).get("isLeader") == "true":
                return a, r.ext.get("controllerLeaderId")
        time.sleep(0.2)
    return None, None


def body_json(ns, code, ext=None):
    """NS's answer to CODE as JSON, or None when it did not answer 0 with a body."""
    r = try_call(ns, code, ext)
    if r is None or r.code != 0 or not r.body:
        return None
    try:
        return json.loads(r.body.decode("utf-8", "replace"))
    except ValueError:
        # brokerAddrs keys are bare numbers in fastjson's output: quote them
        import re
        return json.loads(re.sub(r'([{,])(\d+):', r'\1"\2":', r.body.decode()))


def masters(ns, broker):
    """BROKER's addresses by id, as NS's GET_BROKER_CLUSTER_INFO shows them ({} when none)."""
    info = body_json(ns, 106) or {}
    data = info.get("brokerAddrTable", {}).get(broker) or {}
    return {str(k): v for k, v in (data.get("brokerAddrs") or {}).items()}


def has_queues(ns, topic, broker):
    """Whether NS answers TOPIC's route (105) with queues on BROKER."""
    route = body_json(ns, 105, {"topic": topic}) or {}
    return any(q.get("brokerName") == broker for q in route.get("queueDatas") or [])


def wait_master(since, secs, addr, broker, nss, topic=None):
    """Polls every 20 ms until every NS shows ADDR as BROKER's master; prints the milliseconds
    since SINCE (and, given TOPIC, " topic_lost=<k>": the polls in which some NS answered its
    route with an error or without BROKER's queues)."""
    deadline = time.monotonic() + secs
    lost = 0
    while time.monotonic() < deadline:
        if topic is not None and not all(has_queues(ns, topic, broker) for ns in nss):
            lost += 1
        if all(masters(ns, broker).get("0") == addr for ns in nss):
            ms = int(time.time() * 1000) - since
            print(ms if topic is None else "%d topic_lost=%d" % (ms, lost))
            return 0
        time.sleep(0.02)
    print("not within %s s: %s" % (secs, {ns: masters(ns, broker) for ns in nss}))
    return 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "leader":
        a, lid = leader(args)
        if a is None:
            print("no leader")
            return 1
        print(lid)
        return 0
    if cmd == "agree":
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ids = set()
            for a in args:
                r = try_call(a, 1005)
                ids.add((r.ext or {}).get("controllerLeaderId") if r is not None else None)
            if len(ids) == 1 and None not in ids:
                print(ids.pop())
                return 0
            time.sleep(0.2)
        print("no agreement: %s" % ids)
        return 1
    if cmd == "replica":
        broker, ctls = args[-1], args[:-1]
        # A new leader says isLeader=true (its Raft role) before its first barrier has applied,
        # and answers 2007 until then: ask again, as a broker and mqadmin do.
        deadline = time.monotonic() + 30
        while True:
            a, _ = leader(ctls)
            r = try_call(a, 1004, {"brokerName": broker}) if a else None
            if r is None or r.code != 2007 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if r is None or r.code != 0:
            print("replica: no answer" if r is None else "replica: code %d %s" % (r.code, r.remark))
            return 1
        ext = r.ext or {}
        body = json.loads(r.body.decode()) if r.body else {}
        print("master=%s masterEpoch=%s syncStateSetEpoch=%s sss=%s" % (
            ext.get("masterAddress", "-"), ext.get("masterEpoch"), body.get("syncStateSetEpoch"),
            ",".join(str(i) for i in sorted(body.get("syncStateSet") or []))))
        return 0
    if cmd == "master":
        ns, broker = args
        print(masters(ns, broker).get("0", "-"))
        return 0
    if cmd == "wait_master":
        return wait_master(int(args[0]), float(args[1]), args[2], args[3], args[4:])
    if cmd == "wait_master_route":
        return wait_master(int(args[0]), float(args[1]), args[2], args[3], args[5:], args[4])
    if cmd == "wait_gone":
        secs, addr, broker, nss = float(args[0]), args[1], args[2], args[3:]
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            if all(addr not in masters(ns, broker).values() for ns in nss):
                return 0
            time.sleep(0.1)
        return 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
