#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Records a real RocketMQ 5.5.0 Proxy's own NameServer traffic into a replayable trace
# (tests/interop/traces/12_recorded_proxy_5x.jsonl). Not part of the test run: its output is
# committed data, replayed by run_diff.sh against both servers. The recording proxy of replay.py
# sits between the peers and a Java NameServer, on one listener per peer: "broker" (a 5.5.0
# broker, broker-a of ItCluster), "proxy" (the Proxy in cluster mode, started by it_start_proxy)
# and "tool" (mqadmin). Phases:
#   startup  the broker registers; the Proxy starts (it creates its system topic on ItCluster)
#   setup    mqadmin creates a NORMAL and a FIFO topic and their consumer groups
#   clients  the Java gRPC client (tests/interop/grpc/GrpcClient.java) queries routes and
#            assignments, produces and consumes through the Proxy
#   idle     IDLE_S seconds with nothing but the peers' periodic requests
#   shutdown SIGTERM to the Proxy, then to the broker (UNREGISTER_BROKER)
# The trace's header says how many requests of each code each phase sent, per peer.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"
it_require java javac mvn python3
it_init record-proxy
IDLE_S=${IDLE_S:-65}
rec=$IT_WORK/rec
mkdir -p "$rec"
steps=$rec/steps.jsonl
classes=$(it_javac grpc-client "$here/grpc/GrpcClient.java")
gcp=$(it_classpath grpc-client)
it_classpath proxy >/dev/null

it_start_java_namesrv jns 5.x
python3 "$here/replay.py" record --upstream "127.0.0.1:$jns_port" --listen "broker:$rec/broker.port" \
    --listen "proxy:$rec/proxy.port" --listen "tool:$rec/tool.port" --out "$steps" \
    --stop-file "$rec/stop" --max-seconds 900 >"$rec/recorder.log" 2>&1 &
IT_PIDS+=("$!")
rec_pid=$!
it_wait 10 test -s "$rec/tool.port" || { echo "recorder did not start" >&2; exit 1; }
bport=$(cat "$rec/broker.port") pport=$(cat "$rec/proxy.port") tport=$(cat "$rec/tool.port")

# phase_mark <name>: the number of steps written so far ends the previous phase.
marks=()
phase_mark() {
    sleep 1 # replies and probes of the phase's last requests
    marks+=("$1:$(grep -c '^{' "$steps" || true)")
}
stop_pid() {
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
}

it_start_broker recb 5.x "127.0.0.1:$bport" brokerName=broker-a
it_wait 120 grep -q "new broker registered, .*brokerAddr=127.0.0.1:$recb_port" \
    "$jns_dir/home/logs/rocketmqlogs/broker_default.log" || { echo "broker did not register" >&2; exit 1; }
# The Proxy's defaults where they could change its NameServer traffic (lib.sh makes it small).
it_start_proxy recp "127.0.0.1:$pport" '"rocketmqMQClientNum": 6'
phase_mark startup

nsaddr=127.0.0.1:$tport
it_mqadmin 5.x updateTopic -n "$nsaddr" -c ItCluster -t RecNormal -r 4 -w 4
it_mqadmin 5.x updateTopic -n "$nsaddr" -c ItCluster -t RecFifo -r 2 -w 2 -a +message.type=FIFO
it_mqadmin 5.x updateSubGroup -n "$nsaddr" -c ItCluster -g RecNormalGroup
it_mqadmin 5.x updateSubGroup -n "$nsaddr" -c ItCluster -g RecFifoGroup -o true
phase_mark setup

# shellcheck disable=SC2086
java $IT_JAVA_OPTS -Duser.home="$IT_WORK/client-home" -cp "$classes:$gcp" GrpcClient \
    "127.0.0.1:$recp_port" RecNormal RecFifo RecNormalGroup RecFifoGroup 6 >"$rec/client.out" 2>"$rec/client.log"
if grep -q '^RESULT fail' "$rec/client.out" || ! grep -q '^RESULT pass' "$rec/client.out"; then
    cat "$rec/client.out" >&2
    echo "the gRPC client failed: not recording this" >&2
    exit 1
fi
phase_mark clients

sleep "$IDLE_S"
phase_mark "idle-${IDLE_S}s"

stop_pid "$recp_pid"
stop_pid "$recb_pid"
phase_mark shutdown
touch "$rec/stop"
wait "$rec_pid" || true

# Requests per phase, per peer and code (probe steps are the recorder's, not counted).
summary=$(python3 - "$steps" "${marks[@]}" <<'EOF'
import collections, json, sys
names = {103: "REGISTER_BROKER", 104: "UNREGISTER_BROKER", 105: "GET_ROUTEINFO_BY_TOPIC",
         106: "GET_BROKER_CLUSTER_INFO", 206: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
         101: "PUT_KV_CONFIG", 102: "GET_KV_CONFIG", 304: "GET_SYSTEM_TOPIC_LIST_FROM_NS",
         328: "GET_KVLIST_BY_NAMESPACE", 901: "GET_BROKER_MEMBER_GROUP", 904: "BROKER_HEARTBEAT"}
steps = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.startswith("{")]
start = 0
for mark in sys.argv[2:]:
    phase, end = mark.rsplit(":", 1)
    end = int(end)
    count = collections.Counter()
    topics = collections.defaultdict(collections.Counter)
    for s in steps[start:end]:
        peer = s.get("conn", "").rsplit("-", 1)[0]
        if peer == "probe" or s.get("op", "req") != "req":
            continue
        count[(peer, s["code"])] += 1
        if s["code"] == 105:
            topics[peer][s["ext"]["topic"]] += 1
    parts = []
    for (p, c), n in sorted(count.items()):
        part = "%s %s(%d) x%d" % (p, names.get(c, "code"), c, n)
        if c == 105:
            part += " [%s]" % ", ".join("%s x%d" % kv for kv in sorted(topics[p].items()))
        parts.append(part)
    print("#   %-9s %s" % (phase, ";\n#             ".join(parts) or "nothing"))
    start = end
def conn_no(c):
    return int(c.rsplit("-", 1)[1])
conns = sorted({s["conn"] for s in steps if s.get("conn", "").startswith("proxy-")}, key=conn_no)
asking = sorted({s["conn"] for s in steps if s.get("conn", "").startswith("proxy-")
                 and s.get("op", "req") == "req"}, key=conn_no)
print("#   the Proxy opened %d NameServer connections (%s), requests came on %s only" % (
    len(conns), ", ".join(conns), ", ".join(asking)))
EOF
)
out=$here/traces/12_recorded_proxy_5x.jsonl
{
    echo "# RECORDED traffic (data, not code), made by tests/interop/record_proxy.sh on $(date -u +%Y-%m-%d):"
    echo "# a RocketMQ 5.5.0 Proxy in cluster mode (conn proxy-n; rocketMQClusterName ItCluster, the"
    echo "# thread pools of lib.sh's it_start_proxy, rocketmqMQClientNum 6 as by default), a 5.5.0 broker"
    echo "# broker-a (conn broker-n, registerNameServerPeriod 30000 as by default), mqadmin 5.5.0 (tool-n)"
    echo "# creating topics RecNormal, RecFifo (+message.type=FIFO) and groups RecNormalGroup,"
    echo "# RecFifoGroup (-o true); rocketmq-client-java 5.0.8 through the Proxy (QueryRoute for both"
    echo "# topics and NoSuchTopic_it, QueryAssignment, 6 messages each produced and consumed); ${IDLE_S} s"
    echo "# idle; SIGTERM to the Proxy, then to the broker. Requests per phase (peer code x count):"
    printf '%s\n' "$summary"
    echo "# The real peers talked to a Java 5.5.0 NameServer through the recording proxy of replay.py;"
    echo "# every request frame is a step (header fields and body as sent; opaques are re-numbered on"
    echo "# replay), '# ... reply' comments are the Java answers at recording time, and steps on the"
    echo "# connection 'probe' were added by the recorder. Addresses are the ports of that run; the"
    echo "# NameServer never connects to them, so they need no normalisation."
    cat "$steps"
} >"$out"
it_log "wrote $out ($(grep -c '^{' "$out") steps)"
printf '%s\n' "$summary" >&2
