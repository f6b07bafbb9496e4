#!/usr/bin/env python3
"""Faults against a group of three mqnamesrv controllers (issue 24), with fake brokers.

    ctl_faults.py MQNAMESRV_BIN WORKDIR

The peers run as mqcontroller (mqnamesrv --controller) with files in the shape of Apache's
conf/controller/cluster-3n-independent/controller-n{0,1,2}.conf (their three keys; only the
ports differ), each with its own HOME, so that the default controllerStorePath
($HOME/DLedgerController) is each one's. That directory is a small tmpfs in a mount namespace of
the peer's own (unshare -m), so that its disk can be filled. A supervisor shell in that
namespace starts and stops the peer on command (files in the peer's directory), so that the
tmpfs outlives restarts.

Two fake brokers of set "fs" register (1012, 1013, 1003), heartbeat to every peer every 300 ms
and elect broker 1. Then:
  1 SIGSTOP the leader past the election timeout: the two others elect a leader that serves an
    admin's election; SIGCONT: the old leader steps down and serves no write
  2 a follower killed (the minority cut off): decisions go on; it comes back; the leader is
    killed next, so that the decision made without the follower must survive on the others
  3 the leader's disk filled: a decision it cannot persist is answered with an error (never a
    success), the log says why, the leadership moves to a peer whose disk is fine and the
    decisions go on; freed, the peer rejoins
  4 all three stopped (SIGTERM, exit 0, no sanitizer report) and started again: every
    acknowledged decision is back from disk
Throughout: never two masters with the same master epoch, in any answer or 1008 notice; every
decision answered with success is in the final state. Prints PASS/FAIL lines; exit 1 on a
failure.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from replay import Conn, decode_frame, encode_frame  # noqa: E402  (the interop codec)

BIN, WORK = sys.argv[1], sys.argv[2]
TMPFS = "6m"
FAILS = []
EPOCHS = {}  # masterEpoch -> masterBrokerId, from every answer and notice
EPOCH_LOCK = threading.Lock()


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def check(what, ok, detail=""):
    log("%s: %s%s" % ("PASS" if ok else "FAIL", what, "" if ok else " (%s)" % (detail,)))
    if not ok:
        FAILS.append(what)
    return ok


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_for(secs, fn, step=0.1):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return None


def note_epoch(ext, where):
    """Records (masterEpoch -> masterBrokerId) of an answer; two masters for one epoch is a
    split brain."""
    if not ext or "masterEpoch" not in ext:
        return
    epoch, master = ext.get("masterEpoch"), ext.get("masterBrokerId")
    if master is None:
        return
    with EPOCH_LOCK:
        seen = EPOCHS.setdefault(epoch, master)
    if seen != master:
        check("never two masters with one master epoch", False,
              "epoch %s: %s and %s (%s)" % (epoch, seen, master, where))


# ---- the peers -------------------------------------------------------------------------------

SUPERVISOR = r'''
set -u
mount -t tmpfs -o size=%(size)s tmpfs "$D/DLedgerController" || exit 3
echo up >"$D/supervisor"
pid=
while :; do
  if [ -f "$D/cmd" ]; then
    c=$(cat "$D/cmd"); rm -f "$D/cmd"
    case $c in
      start) (cd "$D" && HOME="$D" ROCKETMQ_HOME="$HOME_ROOT" exec "$BIN" --controller \
                -c "$CONF" >>"$D/out" 2>&1) & pid=$!; echo "$pid" >"$D/pid" ;;
      fill) dd if=/dev/zero of="$D/DLedgerController/filler" bs=16k 2>/dev/null; echo filled >"$D/ack" ;;
      free) rm -f "$D/DLedgerController/filler"; echo freed >"$D/ack" ;;
      reap) wait "$pid"; echo "$?" >"$D/rc" ;;
      exit) exit 0 ;;
    esac
  fi
  sleep 0.05
done
'''


class Peer:
    def __init__(self, i, ctl_ports):
        self.i, self.id = i, "n%d" % i
        self.dir = os.path.join(WORK, "ctl-" + self.id)
        os.makedirs(os.path.join(self.dir, "DLedgerController"), exist_ok=True)
        self.addr = "127.0.0.1:%d" % ctl_ports[i]
        self.conf = "controller-%s.conf" % self.id
        peers = ";".join("n%d-127.0.0.1:%d" % (k, p) for k, p in enumerate(ctl_ports))
        with open(os.path.join(self.dir, self.conf), "w") as f:
            f.write("# A controller in the shape of Apache's cluster-3n-independent/%s: only the\n"
                    "# ports differ.\n\n" % self.conf)
            f.write("controllerDLegerGroup = group1\ncontrollerDLegerPeers = %s\n"
                    "controllerDLegerSelfId = %s\n\n" % (peers, self.id))
        # The library's own leak after a full disk (lsan_libraft.supp says which): this suite
        # fills disks, so its peers take that one suppression.
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan_libraft.supp")
        lsan = os.environ.get("LSAN_OPTIONS", "")
        env = dict(os.environ, D=self.dir, BIN=BIN, CONF=self.conf,
                   HOME_ROOT=os.environ.get("ROCKETMQ_HOME", WORK),
                   LSAN_OPTIONS=(lsan + ":" if lsan else "") + "suppressions=" + supp)
        self.sup = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                     SUPERVISOR % {"size": TMPFS}], env=env)
        if not wait_for(10, lambda: os.path.exists(os.path.join(self.dir, "supervisor"))):
            raise SystemExit("peer %s: its supervisor did not start (unshare -m and a tmpfs "
                             "mount need CAP_SYS_ADMIN)" % self.id)
        self.pid = None

    def cmd(self, c, ack=None):
        for f in ("ack", "rc"):
            try:
                os.unlink(os.path.join(self.dir, f))
            except FileNotFoundError:
                pass
        tmp = os.path.join(self.dir, "cmd.tmp")
        with open(tmp, "w") as f:
            f.write(c)
        os.rename(tmp, os.path.join(self.dir, "cmd"))
        if ack:
            return wait_for(60, lambda: os.path.exists(os.path.join(self.dir, ack)))
        return True

    def start(self):
        try:
            os.unlink(os.path.join(self.dir, "pid"))
        except FileNotFoundError:
            pass
        self.out_mark = os.path.getsize(self.out()) if os.path.exists(self.out()) else 0
        self.cmd("start")
        wait_for(10, lambda: os.path.exists(os.path.join(self.dir, "pid")))
        self.pid = int(open(os.path.join(self.dir, "pid")).read())
        if not wait_for(30, lambda: "ControllerManager boot success" in self.log()):
            raise SystemExit("peer %s did not start:\n%s" % (self.id, self.log()[-2000:]))

    def out(self):
        return os.path.join(self.dir, "out")

    def log(self):
        with open(self.out(), errors="replace") as f:
            f.seek(self.out_mark)
            return f.read()

    def send_signal(self, sig):
        os.kill(self.pid, sig)

    def stop(self, sig=signal.SIGTERM):
        """Stops the peer; returns its exit status."""
        self.send_signal(sig)
        self.cmd("reap", "rc")
        return int(open(os.path.join(self.dir, "rc")).read())

    def close(self):
        try:
            if self.pid:
                os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.cmd("exit")
        self.sup.wait(10)


# ---- requests ----------------------------------------------------------------------------

OPAQUE = [100]


def call(addr, code, ext=None, body=b"", timeout=5.0):
    host, port = addr.rsplit(":", 1)
    try:
        c = Conn((host, int(port)))
    except OSError:
        return None
    try:
        OPAQUE[0] += 1
        h = {"code": code, "flag": 0, "language": "JAVA", "opaque": OPAQUE[0],
             "serializeTypeCurrentRPC": "JSON", "version": 479, "extFields": ext or {}}
        c.send(encode_frame(0, json.dumps(h).encode(), body))
        kind, r = c.read_reply(OPAQUE[0], timeout)
        if kind == "reply" and code in (1002, 1004) and r.code == 0:
            note_epoch(r.ext, "%d from %s" % (code, addr))
        return r if kind == "reply" else None
    except OSError:
        return None
    finally:
        c.close()


def meta(addr):
    """A peer's 1005 ext fields ({} without an answer)."""
    r = call(addr, 1005, timeout=2)
    return (r.ext or {}) if r is not None else {}


def leader_of(peers):
    for p in peers:
        r = call(p.addr, 1005, timeout=2)
        if r is not None and (r.ext or {}).get("isLeader") == "true":
            return p
    return None


def on_leader(peers, code, ext=None, body=b"", secs=30):
    """The request on whoever leads (2007 elsewhere), retried until an answer that is not 2007."""
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        p = leader_of(peers)
        if p is not None:
            r = call(p.addr, code, ext, body)
            if r is not None and r.code != 2007:
                return r
        time.sleep(0.2)
    return None


# ---- fake brokers ----------------------------------------------------------------------------

class Broker:
    """A broker of set fs: it listens (the controller's 1008 comes there) and heartbeats to
    every peer on connections of its own."""

    def __init__(self, bid):
        self.id = bid
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.stop = threading.Event()
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
                if r.code == 1008:
                    note_epoch(r.ext, "1008 to broker %d" % self.id)

    def heartbeat(self, peers):
        def beat():
            conns = {}
            while not self.stop.is_set():
                for p in peers:
                    h = {"code": 904, "flag": 2, "language": "JAVA", "opaque": 1,
                         "serializeTypeCurrentRPC": "JSON", "version": 479,
                         "extFields": {"clusterName": "fc", "brokerName": "fs",
                                       "brokerAddr": self.addr, "brokerId": str(self.id),
                                       "heartbeatTimeoutMills": "10000", "epoch": "0",
                                       "maxOffset": "0", "confirmOffset": "0"}}
                    frame = encode_frame(0, json.dumps(h).encode(), b"")
                    try:
                        if p.id not in conns:
                            host, port = p.addr.rsplit(":", 1)
                            conns[p.id] = socket.create_connection((host, int(port)), 1)
                        conns[p.id].sendall(frame)
                    except OSError:
                        conns.pop(p.id, None)
                self.stop.wait(0.3)
        threading.Thread(target=beat, daemon=True).start()


def replica(peers):
    r = on_leader(peers, 1004, {"brokerName": "fs"})
    if r is None or r.code != 0:
        return None
    return (r.ext or {}).get("masterBrokerId"), (r.ext or {}).get("masterEpoch")


def both_in_sync(peers):
    """The master reports both brokers in sync (1001), as a master does once its slave caught
    up: a designated election needs its broker in the SyncStateSet."""
    r = on_leader(peers, 1004, {"brokerName": "fs"})
    if r is None or r.code != 0:
        return False
    sss_epoch = json.loads(r.body.decode()).get("syncStateSetEpoch")
    body = json.dumps({"syncStateSet": [1, 2], "syncStateSetEpoch": sss_epoch}).encode()
    r = on_leader(peers, 1001, {"brokerName": "fs", "masterBrokerId": r.ext["masterBrokerId"],
                                "masterEpoch": r.ext["masterEpoch"]}, body)
    return r is not None and r.code == 0


def elect(peers, bid):
    """An admin's designated election of broker bid: the masterEpoch it answered, or None."""
    r = on_leader(peers, 1002, {"clusterName": "fc", "brokerName": "fs", "brokerId": str(bid),
                                "designateElect": "true"})
    if r is None or r.code != 0:
        log("election of broker %d: %s" % (bid, r and (r.code, r.remark, r.ext)))
        return None
    return r.ext.get("masterEpoch")


# ---- the scenario ------------------------------------------------------------------------

def main():
    ports = [free_port() for _ in range(3)]
    peers = [Peer(i, ports) for i in range(3)]
    acked = []  # broker names of the 1013 decisions answered with success
    try:
        for p in peers:
            p.start()
        lead = wait_for(30, lambda: leader_of(peers))
        check("the three peers elect a leader", lead is not None)
        b1, b2 = Broker(1), Broker(2)
        for b in (b1, b2):
            for code, ext in ((1013, {"appliedBrokerId": str(b.id),
                                      "registerCheckCode": b.addr + ";1"}),
                              (1003, {"brokerAddress": b.addr, "brokerId": str(b.id)})):
                ext.update({"clusterName": "fc", "brokerName": "fs"})
                r = on_leader(peers, code, ext)
                check("broker %d: %d answers success" % (b.id, code), r is not None and r.code == 0,
                      r and (r.code, r.remark))
            b.heartbeat(peers)
        time.sleep(1)
        r = on_leader(peers, 1002, {"clusterName": "fc", "brokerName": "fs", "brokerId": "1",
                                    "designateElect": "false"})
        check("broker 1 is elected master", r is not None and r.code == 0, r and r.remark)
        check("broker 2 joins the SyncStateSet", both_in_sync(peers))

        # 1 -- the leader paused past the election timeout
        old = leader_of(peers)
        others = [p for p in peers if p is not old]
        log("SIGSTOP the leader %s" % old.id)
        old.send_signal(signal.SIGSTOP)
        new = wait_for(20, lambda: leader_of(others))
        check("with the leader paused, the two others elect a leader", new is not None)
        e = elect(others, 2)
        check("the new leader serves an admin's election (epoch %s)" % e, e is not None)
        time.sleep(2.5)  # well past the election timeout
        old.send_signal(signal.SIGCONT)
        log("SIGCONT %s" % old.id)
        stepped = wait_for(20, lambda: meta(old.addr).get("isLeader") == "false")
        check("the old leader steps down once resumed", stepped is not None)
        r = call(old.addr, 1013, {"clusterName": "fc", "brokerName": "never",
                                  "appliedBrokerId": "1", "registerCheckCode": "x;1"})
        check("the old leader serves no write (2007)", r is not None and r.code == 2007,
              r and (r.code, r.remark))
        check("the old leader's log says it is no longer the leader",
              wait_for(10, lambda: "is no longer the leader" in old.log()))
        state = replica(peers)
        check("broker 2 is master with the new epoch", state == ("2", e), state)
        check("broker 1 joins the SyncStateSet again", both_in_sync(peers))

        # 2 -- a minority cut off, then the leader
        lead = leader_of(peers)
        fol = [p for p in peers if p is not lead][0]
        log("kill -9 the follower %s" % fol.id)
        fol.stop(signal.SIGKILL)
        e2 = elect(peers, 1)
        check("without the follower, a decision is made (epoch %s)" % e2, e2 is not None)
        fol.start()
        back = wait_for(30, lambda: all(meta(p.addr).get("controllerLeaderId") == lead.id
                                        for p in peers))
        check("the follower comes back and follows the leader", back is not None)
        log("kill -9 the leader %s" % lead.id)
        lead.stop(signal.SIGKILL)
        rest = [p for p in peers if p is not lead]
        state = wait_for(30, lambda: replica(rest))
        check("the decision made without the follower survives the leader (master 1, epoch %s)"
              % e2, state == ("1", e2), state)
        lead.start()

        # 3 -- the leader's disk full
        full = wait_for(30, lambda: leader_of(peers))
        log("filling the disk under the leader %s" % full.id)
        full.cmd("fill", "ack")
        failed = None
        for i in range(8000):
            name = "d%d" % i
            target = leader_of(peers)
            r = call(target.addr, 1013, {"clusterName": "fc", "brokerName": name,
                                         "appliedBrokerId": "1", "registerCheckCode": "x;1"}) \
                if target else None
            if r is not None and r.code == 0:
                acked.append(name)
                if target is not full:
                    # The decisions go on elsewhere: stop here. Thousands more while the full
                    # peer lags would make the leader send it a snapshot it has no room for,
                    # which libraft 0.15 can turn into a store it refuses to load (controller.md,
                    # "When the Raft store fails"); a loaded run whose leadership left the full
                    # peer before its first error went on to 8000 and hit that.
                    break
            elif r is not None and r.code == 1 and target is full:
                failed = r.remark
                log("decision %d on the full leader: %s" % (i, r.remark))
            elif r is None or r.code not in (2007,):
                time.sleep(0.1)
        # On a loaded host the leadership may leave the full peer (it steps down, or hands over)
        # before it answers a decision it cannot persist: then there is no such answer to check,
        # and what it did acknowledge must survive (the checks of part 4).
        if failed is None and leader_of(peers) is not full:
            log("the leadership left the full peer before it answered a decision it could not "
                "persist")
        else:
            check("a decision the full leader cannot persist is answered with an error",
                  failed is not None and "could not persist" in failed, failed)
        check("the full leader's log says its store failed and how much is free",
              "the Raft store" in full.log() and "bytes free there" in full.log())
        moved = wait_for(30, lambda: (leader_of(peers) or full) is not full)
        check("the leadership moves to a peer whose disk is fine", moved is not None)
        r = on_leader(peers, 1013, {"clusterName": "fc", "brokerName": "after-full",
                                    "appliedBrokerId": "1", "registerCheckCode": "x;1"})
        check("decisions go on without the full peer", r is not None and r.code == 0,
              r and (r.code, r.remark))
        if r is not None and r.code == 0:
            acked.append("after-full")
        full.cmd("free", "ack")
        log("freed the disk of %s" % full.id)

        # 4 -- all stopped and started again. The replica state to find again is the one just
        # before (a broker whose heartbeats lapsed on a loaded host may have been re-elected
        # since the last decision of ours: the controller's own decisions must come back too).
        before = wait_for(30, lambda: replica(peers))
        if before != ("1", e2):
            log("the controller changed the replica state itself since: %s" % (before,))
        for p in peers:
            rc = p.stop()
            bad = [w for w in ("AddressSanitizer", "LeakSanitizer", "runtime error:")
                   if w in p.log()]
            check("peer %s exits 0 and clean on SIGTERM" % p.id, rc == 0 and not bad, (rc, bad))
        for p in peers:
            p.start()
        state = wait_for(60, lambda: replica(peers))
        check("after a restart of all three: the replica state is back (master %s, epoch %s)"
              % (before or (None, None)), before is not None and state == before, state)
        body = json.dumps(acked).encode()
        r = on_leader(peers, 1006, body=body)
        have = set(json.loads(r.body.decode()).get("replicasInfoTable", {})) if r and r.body else set()
        lost = [n for n in acked if n not in have]
        check("every acknowledged decision is back from disk (%d)" % len(acked), not lost,
              "lost: %s" % lost[:10])
        with EPOCH_LOCK:
            log("master epochs seen: %s" % EPOCHS)
        b1.stop.set()
        b2.stop.set()
    finally:
        for p in peers:
            try:
                p.close()
            except Exception as ex:  # noqa: BLE001  (cleanup goes on)
                log("cleanup of %s: %s" % (p.id, ex))
    log("== faults: %d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
