#!/usr/bin/env python3
"""The C++ side of tests/interop/run_cpp.sh: PyPI's `rocketmq` 0.4.4, a ctypes binding of
rocketmq-client-cpp whose wheel carries librocketmq.so. Every message goes through the C++
library; Python only drives it and checks what it reports.

    client.py scenario NAMESRV TOPIC N BROKER_NAME VIEW.json
        One run against one NameServer, each role in its own process (the library shares one
        client factory, and so one route cache, per process and instance name; separate
        processes make every role ask the NameServer itself):
          produce  a producer sends N/2 messages with distinct bodies, synchronously, to a new
                   topic: through TBW102's route (the broker creates the topic);
          route    waits until the NameServer has the topic's route;
          produce  a second producer sends the other N/2 through the topic's own route;
          pull     a pull consumer fetches the topic's queues from the NameServer (its route)
                   and pulls every queue from offset 0;
          push     a push consumer of a new group receives the N messages;
          missing  a pull consumer asks for the queues of a topic that does not exist.
        Prints RESULT lines and writes what the client saw, with the topic name taken out,
        to VIEW.json for the comparison of the two NameServers.
    client.py wire TAP.jsonl VIEW.json TOPIC
        Checks the frames that tests/interop/wiretap.py recorded between the client and one
        NameServer (what the C++ client sends, what it got back) and adds them to VIEW.json.
    client.py probe NAMESRV TOPIC CODE TAP.jsonl WORKDIR
        A pull consumer asks for TOPIC's queues; the tap must show every answer with CODE.
    client.py compare MQNAMESRV_VIEW.json JAVA_VIEW.json
        One RESULT per part of the views; a part that differs fails and shows both sides.

Child processes are bounded by timeouts: a C++ client that hangs (the library can, in its
shutdown) is killed and reported, never waited for.
"""
import ctypes
import difflib
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

CHILD_TIMEOUT = 60  # seconds for one role, start to shutdown
ROUTE_WAIT = 20  # seconds for the new topic's route to reach the NameServer
PUSH_WAIT = 30  # seconds for the push consumer to receive every message

failures = 0


def result(ok, what):
    global failures
    if not ok:
        failures += 1
    print("RESULT %s %s" % ("pass" if ok else "fail", what), flush=True)


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


def body_of(topic, i):
    return "cpp-%s-%d" % (topic, i)


# ---- roles (each in its own process; prints one JSON object on stdout) ----------------------

def emit(obj):
    print(json.dumps(obj), flush=True)


def role_produce(namesrv, topic, first, count):
    from rocketmq.client import Message, Producer

    producer = Producer("CppProducer_" + topic, timeout=10000)
    producer.set_namesrv_addr(namesrv)
    producer.start()
    sends = []
    for i in range(first, first + count):
        msg = Message(topic)
        msg.set_keys("key-%d" % i)
        msg.set_tags("TagCpp")
        msg.set_body(body_of(topic, i))
        try:
            res = producer.send_sync(msg)
            sends.append({"i": i, "status": res.status.name, "msg_id": res.msg_id,
                          "offset": res.offset})
        except Exception as e:  # the library's error text, e.g. no route
            sends.append({"i": i, "error": "%s: %s" % (type(e).__name__, e)})
    emit({"sends": sends})
    t0 = time.time()
    producer.shutdown()
    emit({"shutdown_s": round(time.time() - t0, 3)})


def fetch_queues(consumer_handle, topic):
    """FetchSubscriptionMessageQueues: the queues the library built from the route it fetched.
    Returns (status, [(brokerName, queueId, topic)...], the library's array); the caller hands
    a non-empty array back with ReleaseSubscriptionMessageQueue."""
    from rocketmq.ffi import _CMessageQueue, dll

    mqs = ctypes.POINTER(_CMessageQueue)()
    size = ctypes.c_int()
    status = dll.FetchSubscriptionMessageQueues(consumer_handle, topic.encode(),
                                                ctypes.pointer(mqs), ctypes.pointer(size))
    queues = [(mqs[i].brokerName.decode(), mqs[i].queueId, mqs[i].topic.decode())
              for i in range(size.value)]
    return int(status), queues, mqs


def release_queues(queues, mqs):
    from rocketmq.ffi import dll

    if queues:
        dll.ReleaseSubscriptionMessageQueue(mqs)


def role_pull(namesrv, topic):
    from rocketmq.client import PullConsumer, RecvMessage
    from rocketmq.ffi import _CPullStatus, dll

    consumer = PullConsumer("CppPull_" + topic)
    consumer.set_namesrv_addr(namesrv)
    consumer.start()
    deadline = time.time() + ROUTE_WAIT
    while True:
        status, queues, mqs = fetch_queues(consumer._handle, topic)
        if queues or time.time() > deadline:
            break
        time.sleep(0.5)
    out = {"fetch_status": status, "queues": [[b, q] for b, q, _ in queues],
           "queue_topics": sorted({t for _, _, t in queues}), "messages": [], "pulls": {}}
    for k in range(len(queues)):
        offset, statuses, timeouts = 0, [], 0
        for _ in range(1000):  # bounded: N is small
            res = dll.Pull(consumer._handle, ctypes.pointer(mqs[k]), b"*",
                           ctypes.c_longlong(offset), 32)
            statuses.append(_CPullStatus(res.pullStatus).name)
            if res.pullStatus == _CPullStatus.FOUND:
                for j in range(res.size):
                    m = RecvMessage(res.msgFoundList[j])
                    out["messages"].append({
                        "body": m.body.decode("utf-8", "replace"),
                        "broker": queues[k][0], "queue": queues[k][1],
                        "queue_offset": m.queue_offset, "topic": m.topic,
                        "tags": (m.tags or b"").decode(), "keys": (m.keys or b"").decode(),
                        "msg_id": m.id})
            # BROKER_TIMEOUT is the client's own failed call (a slow connect or answer on a
            # loaded machine): asked again, as a consumer would, up to 10 times in a row.
            timed_out = res.pullStatus == _CPullStatus.BROKER_TIMEOUT
            timeouts = timeouts + 1 if timed_out else 0
            stop = res.pullStatus not in (_CPullStatus.FOUND, _CPullStatus.NO_MATCHED_MSG) and \
                (not timed_out or timeouts > 10)
            if not timed_out:
                offset = res.nextBeginOffset
            dll.ReleasePullResult(res)
            if stop:
                break
            if timed_out:
                time.sleep(0.5)
        out["pulls"]["%s/%d" % queues[k][:2]] = statuses[-1]
    release_queues(queues, mqs)
    emit(out)
    t0 = time.time()
    consumer.shutdown()
    emit({"shutdown_s": round(time.time() - t0, 3)})


def role_route(namesrv, topic):
    """Waits until the NameServer has the topic's own route (the broker registers a topic that
    a send created in its next registration, which may lag)."""
    from rocketmq.client import PullConsumer

    consumer = PullConsumer("CppRoute_" + topic)
    consumer.set_namesrv_addr(namesrv)
    consumer.start()
    t0 = time.time()
    while True:
        status, queues, mqs = fetch_queues(consumer._handle, topic)
        release_queues(queues, mqs)
        if queues or time.time() - t0 > ROUTE_WAIT:
            break
        time.sleep(0.3)
    emit({"queues": [[b, q] for b, q, _ in queues], "wait_s": round(time.time() - t0, 3)})
    t0 = time.time()
    consumer.shutdown()
    emit({"shutdown_s": round(time.time() - t0, 3)})


def role_push(namesrv, topic, n):
    from rocketmq.client import PushConsumer

    got, lock = [], threading.Lock()

    def on_message(msg):
        with lock:
            got.append({"body": msg.body.decode("utf-8", "replace"), "queue": msg.queue_id,
                        "queue_offset": msg.queue_offset, "topic": msg.topic,
                        "reconsume": msg.reconsume_times})

    consumer = PushConsumer("CppPush_" + topic)
    consumer.set_namesrv_addr(namesrv)
    consumer.subscribe(topic, on_message)
    t0 = time.time()
    consumer.start()
    while time.time() - t0 < PUSH_WAIT:
        with lock:
            if len({g["body"] for g in got}) >= n:
                break
        time.sleep(0.1)
    time.sleep(0.5)  # a duplicate would show up now
    with lock:
        emit({"received": list(got), "wait_s": round(time.time() - t0, 3)})
    t1 = time.time()
    consumer.shutdown()
    emit({"shutdown_s": round(time.time() - t1, 3)})


def role_missing(namesrv, topic):
    from rocketmq.client import PullConsumer

    consumer = PullConsumer("CppMissing_" + topic)
    consumer.set_namesrv_addr(namesrv)
    consumer.start()
    status, queues, mqs = fetch_queues(consumer._handle, topic)
    release_queues(queues, mqs)
    emit({"fetch_status": status, "queues": [[b, q] for b, q, _ in queues]})
    t0 = time.time()
    consumer.shutdown()
    emit({"shutdown_s": round(time.time() - t0, 3)})


ROLES = {"produce": role_produce, "route": role_route, "pull": role_pull, "push": role_push,
         "missing": role_missing}


# ---- the scenario ---------------------------------------------------------------------------

RUNNING = []  # the role process under way, killed with us (timeout(1) signals only us)


def on_term(signum, _frame):
    for proc in RUNNING:
        proc.kill()
    sys.exit(128 + signum)


def run_role(role, *args, home):
    """Runs one role in a child process with its own HOME (the library logs to
    $HOME/logs/rocketmq-cpp/<pid>_rocketmq-cpp.log.0). Returns (objects printed, the library's
    log text, why it failed or None)."""
    env = dict(os.environ, HOME=home)
    os.makedirs(home, exist_ok=True)
    cmd = [sys.executable, os.path.abspath(__file__), "role", role] + [str(a) for a in args]
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    RUNNING.append(proc)
    problem = None
    try:
        out, err = proc.communicate(timeout=CHILD_TIMEOUT)
        if proc.returncode != 0:
            problem = "exit %d" % proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        problem = "killed after %d s" % CHILD_TIMEOUT
    RUNNING.remove(proc)
    log("role %s: %.1f s%s" % (role, time.time() - t0, " (%s)" % problem if problem else ""))
    if err.strip():
        log("role %s stderr:\n%s" % (role, err.strip()[-3000:]))
    objs = []
    for line in out.splitlines():
        try:
            objs.append(json.loads(line))
        except ValueError:
            log("role %s: not JSON: %s" % (role, line))
    cpp_log = ""
    for f in sorted(glob.glob(os.path.join(home, "logs", "rocketmq-cpp", "%d_*" % proc.pid))):
        with open(f, encoding="utf-8", errors="replace") as fh:
            cpp_log += fh.read()
    return objs, cpp_log, problem


def role_ok(role, objs, problem):
    """Each role prints its findings, then {"shutdown_s": ...} once the library shut down."""
    data = objs[0] if objs else None
    shut = objs[1].get("shutdown_s") if len(objs) > 1 else None
    result(data is not None and problem is None and shut is not None,
           "%s: the C++ client ran and shut down within %d s (%s)"
           % (role, CHILD_TIMEOUT, problem or "shutdown %s s" % shut))
    return data or {}


def scenario(namesrv, topic, n, broker, view_path, work):
    n = int(n)
    view = {"n": n}
    want = {body_of(topic, i) for i in range(n)}

    def strip(text):
        return text.replace(topic, "<topic>")

    # produce: the first half creates the topic (no route yet: the library falls back to
    # TBW102's, "updateTopicRouteInfoFromNameServer with default" in its log); once the
    # NameServer has the topic's route, a second producer sends the rest through that route.
    half = n // 2
    objs, log_a, problem = run_role("produce", namesrv, topic, 0, half,
                                    home=os.path.join(work, "produce-new"))
    sends = role_ok("produce (new topic)", objs, problem).get("sends", [])
    result("updateTopicRouteInfoFromNameServer with default" in log_a,
           "produce (new topic): the first producer had no route for the topic and sent "
           "through TBW102's route")
    objs, _, problem = run_role("route", namesrv, topic, home=os.path.join(work, "route"))
    route = role_ok("route", objs, problem)
    result(bool(route.get("queues")), "route: the NameServer lists the topic's queues after the "
           "first sends (within %s s)" % route.get("wait_s"))
    objs, log_b, problem = run_role("produce", namesrv, topic, half, n - half,
                                    home=os.path.join(work, "produce-existing"))
    sends += role_ok("produce (existing topic)", objs, problem).get("sends", [])
    result(bool(log_b) and "updateTopicRouteInfoFromNameServer with default" not in log_b,
           "produce (existing topic): the second producer sent through the topic's own route")
    ok = [s for s in sends if s.get("status") == "OK"]
    result(len(ok) == n, "produce: all %d synchronous sends answered SEND_OK (%d did%s)"
           % (n, len(ok), "; first other: %s" % strip(json.dumps(next(
               (s for s in sends if s.get("status") != "OK"), {}))) if len(ok) != n else ""))
    ids = [s["msg_id"] for s in ok]
    result(bool(ids) and len(set(ids)) == len(ids)
           and all(re.fullmatch("[0-9A-F]{32}", i) for i in ids),
           "produce: every send result has its own 32-hex message id")
    view["send_status"] = [s.get("status", s.get("error")) for s in sends]

    # pull: the route the library made of the NameServer's answer, and where each message is
    objs, _, problem = run_role("pull", namesrv, topic, home=os.path.join(work, "pull"))
    pull = role_ok("pull", objs, problem)
    queues = pull.get("queues", [])
    result(bool(queues) and all(b == broker for b, _ in queues)
           and sorted(q for _, q in queues) == list(range(len(queues)))
           and pull.get("queue_topics") == [topic],
           "pull: the topic's route lists queues 0..k-1 of broker %s only (%s)"
           % (broker, strip(json.dumps(queues))))
    msgs = pull.get("messages", [])
    bodies = [m["body"] for m in msgs]
    result(sorted(bodies) == sorted(want),
           "pull: pulling every queue from offset 0 finds each of the %d bodies exactly once "
           "(%d found, %d expected ones)" % (n, len(bodies), len(want & set(bodies))))
    by_body = {m["body"]: m for m in msgs}
    placed = all(
        s["i"] < n and body_of(topic, s["i"]) in by_body
        and by_body[body_of(topic, s["i"])]["queue_offset"] == s["offset"]
        and by_body[body_of(topic, s["i"])]["msg_id"] == s["msg_id"] for s in ok)
    result(bool(ok) and placed,
           "pull: each message sits at the queue offset and with the message id that its "
           "send result reported")
    result(bool(msgs) and all(m["topic"] == topic and m["tags"] == "TagCpp"
                              and m["keys"] == "key-%s" % m["body"].rsplit("-", 1)[1]
                              for m in msgs),
           "pull: topic, tag and keys came back as sent")
    result(bool(pull.get("pulls")) and all(v == "NO_NEW_MSG" for v in pull["pulls"].values()),
           "pull: every queue was read to its end (NO_NEW_MSG) (%s)"
           % json.dumps(pull.get("pulls")))
    view["route_queues"] = sorted(queues)
    view["queue_of_send"] = [[by_body[b]["queue"], by_body[b]["queue_offset"]]
                             if b in by_body else None
                             for b in (body_of(topic, i) for i in range(n))]

    # push, a new group
    objs, _, problem = run_role("push", namesrv, topic, n, home=os.path.join(work, "push"))
    push = role_ok("push", objs, problem)
    got = push.get("received", [])
    got_bodies = {g["body"] for g in got}
    result(got_bodies == want,
           "push: a consumer of a new group received all %d bodies and nothing else (%d distinct, "
           "%d deliveries, in %s s)" % (n, len(got_bodies), len(got), push.get("wait_s")))
    result(all(g["body"] in by_body and g["queue"] == by_body[g["body"]]["queue"]
               and g["queue_offset"] == by_body[g["body"]]["queue_offset"] for g in got)
           and bool(got), "push: each delivery names the queue and offset the pull found it at")
    view["push_received"] = sorted(got_bodies) == sorted(want)

    # a topic that does not exist
    missing = "CppNoSuchTopic_" + topic
    objs, cpp_log, problem = run_role("missing", namesrv, missing,
                                      home=os.path.join(work, "missing"))
    miss = role_ok("missing", objs, problem)
    errors = sorted({re.sub(r"^\[[^]]*\]", "", line).split(",in file")[0]
                     for line in cpp_log.splitlines() if "(error)" in line
                     and "stopAllTcpTransportThread" not in line})
    result(miss.get("queues") == [] and any("Can not find Message Queue" in e for e in errors),
           "missing: no queues for a topic that does not exist, and the client logs "
           "'Can not find Message Queue' (status %s, errors %s)"
           % (miss.get("fetch_status"), json.dumps(errors)))
    view["missing"] = {"fetch_status": miss.get("fetch_status"), "queues": miss.get("queues"),
                       "client_errors": [e.replace(missing, "<missing>") for e in errors]}

    with open(view_path, "w", encoding="utf-8") as f:
        json.dump(view, f, indent=1, sort_keys=True)
    return 0 if failures == 0 else 1


# ---- the wire -------------------------------------------------------------------------------

ROUTE = 105  # GET_ROUTEINFO_BY_TOPIC
LEGACY_KEY = re.compile(r'"brokerAddrs":\{(\d+:"[^"]*",?)*\}')


def wire(tap_path, view_path, topic):
    frames = [json.loads(line) for line in open(tap_path, encoding="utf-8")]
    requests = [f for f in frames if f["dir"] == "request"]
    responses = {(f["conn"], f["header"].get("opaque")): f for f in frames
                 if f["dir"] == "response" and "header" in f}
    result(bool(requests), "wire: the C++ client's NameServer traffic was recorded (%d requests)"
           % len(requests))
    encodings = sorted({f.get("encoding") for f in requests})
    result(encodings == ["JSON"], "wire: every request has a JSON header (%s)" % encodings)
    langs = sorted({f["header"].get("language") for f in requests if "header" in f})
    versions = sorted({f["header"].get("version") for f in requests if "header" in f})
    result(langs == ["CPP"] and versions == [63],
           "wire: every request says language CPP, version 63 (V3_1_8) (%s, %s)"
           % (langs, versions))
    stypes = sorted({str(f["header"].get("serializeTypeCurrentRPC")) for f in requests
                     if "header" in f})
    result(stypes == ["None"], "wire: no request names serializeTypeCurrentRPC (%s)" % stypes)
    reply_types = sorted({"%s/%s" % (f.get("encoding"), f["header"].get("serializeTypeCurrentRPC"))
                          for f in frames if f["dir"] == "response" and "header" in f})
    result(reply_types == ["JSON/JSON"],
           "wire: every reply has a JSON header that says serializeTypeCurrentRPC JSON (%s)"
           % reply_types)
    codes = sorted({f["header"].get("code") for f in requests if "header" in f})
    result(codes == [ROUTE], "wire: the client asks the NameServer only for routes, code 105 "
           "(GET_ROUTEINFO_BY_TOPIC) (%s)" % codes)
    exchanges = []
    for f in requests:
        h = f.get("header", {})
        ans = responses.get((f["conn"], h.get("opaque")))
        ah = (ans or {}).get("header", {})
        body = (ans or {}).get("body")
        exchanges.append({
            "request": {"code": h.get("code"), "language": h.get("language"),
                        "version": h.get("version"), "flag": h.get("flag"),
                        "serializeTypeCurrentRPC": h.get("serializeTypeCurrentRPC"),
                        "extFields": sorted(h.get("extFields", {})),
                        "topic": (h.get("extFields", {}).get("topic", "")
                                  .replace(topic, "<topic>"))},
            # the reply version is left out: Java sends its own release's ordinal (513 for
            # 5.5.0), mqnamesrv 479 (docs/compatibility.md, "Reply version").
            "response": None if ans is None else {
                "encoding": ans.get("encoding"), "code": ah.get("code"), "flag": ah.get("flag"),
                "language": ah.get("language"),
                "serializeTypeCurrentRPC": ah.get("serializeTypeCurrentRPC"),
                "remark": (ah.get("remark") or "").replace(topic, "<topic>") or None,
                "extFields": ah.get("extFields"),
                "body": body.replace(topic, "<topic>") if body else body},
        })
    # The distinct exchanges, sorted: how often a role asks depends on timing (the pull role
    # asks again while the new topic's route is not yet registered), what it gets must not.
    exchanges = [json.loads(k) for k in sorted({json.dumps(e, sort_keys=True) for e in exchanges})]
    result(all(e["response"] is not None for e in exchanges),
           "wire: every route request was answered")
    legacy = [e for e in exchanges if e["response"] and e["response"]["code"] == 0]
    result(bool(legacy) and all(LEGACY_KEY.search(e["response"]["body"] or "") for e in legacy),
           "wire: every route answer is the legacy JSON (bare integer brokerAddrs keys, as Java "
           "sends below version 401) (%d answers)" % len(legacy))
    with open(view_path, encoding="utf-8") as f:
        view = json.load(f)
    view["wire"] = exchanges
    with open(view_path, "w", encoding="utf-8") as f:
        json.dump(view, f, indent=1, sort_keys=True)
    return 0 if failures == 0 else 1


def compare(ours_path, java_path):
    ours = json.load(open(ours_path, encoding="utf-8"))
    java = json.load(open(java_path, encoding="utf-8"))
    for key in sorted(set(ours) | set(java)):
        same = ours.get(key) == java.get(key)
        result(same, "compare: the C++ client saw the same %s from mqnamesrv and from Java" % key)
        if not same:
            diff = difflib.unified_diff(
                json.dumps(ours.get(key), indent=1, sort_keys=True).splitlines(),
                json.dumps(java.get(key), indent=1, sort_keys=True).splitlines(),
                "mqnamesrv", "java", lineterm="")
            log("%s differs:\n%s" % (key, "\n".join(list(diff)[:80])))
    return 0 if failures == 0 else 1


def probe(namesrv, topic, code, tap_path, work):
    """The route query of a pull consumer for TOPIC must be answered CODE (seen on the wire)."""
    objs, _, problem = run_role("missing", namesrv, topic, home=os.path.join(work, "probe"))
    role_ok("probe", objs, problem)
    frames = [json.loads(line) for line in open(tap_path, encoding="utf-8")]
    asked = {(f["conn"], f["header"].get("opaque")) for f in frames if f["dir"] == "request"
             and f.get("header", {}).get("extFields", {}).get("topic") == topic}
    answers = sorted({f["header"].get("code") for f in frames if f["dir"] == "response"
                      and (f["conn"], f["header"].get("opaque")) in asked})
    remarks = sorted({f["header"].get("remark") for f in frames if f["dir"] == "response"
                      and (f["conn"], f["header"].get("opaque")) in asked})
    result(answers == [int(code)], "probe: the route query for %s is answered %s (%s, %s)"
           % (topic, code, answers, json.dumps(remarks)))
    return 0 if failures == 0 else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    signal.signal(signal.SIGTERM, on_term)
    if cmd == "role":
        ROLES[args[0]](*[int(a) if a.isdigit() else a for a in args[1:]])
        return 0
    if cmd == "scenario":
        namesrv, topic, n, broker, view_path = args
        return scenario(namesrv, topic, n, broker, view_path, os.path.dirname(view_path) or ".")
    if cmd == "wire":
        return wire(*args)
    if cmd == "compare":
        return compare(*args)
    if cmd == "probe":
        namesrv, topic, code, tap_path, work = args
        return probe(namesrv, topic, code, tap_path, work)
    sys.exit("usage: client.py scenario|wire|compare ...")


if __name__ == "__main__":
    sys.exit(main())
