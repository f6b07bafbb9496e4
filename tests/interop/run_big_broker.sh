#!/usr/bin/env bash
# Interop, issue 14: real 5.5.0 brokers with 100,000 topics each (loaded from a topics.json
# written here), registered with mqnamesrv and with the Java NameServer at the same time
# (namesrvAddr "C;J"):
#   bs  enableSplitRegistration=true: 125 requests of 800 topics (splitRegistrationSize)
#   bb  one request of ~19 MB (topic names of 25 bytes): frameMaxLength raised to 64 MiB on both sides (the broker JVM's
#       -Dcom.rocketmq.remoting.frameMaxLength, mqnamesrv's frameMaxLength key, the Java
#       NameServer JVM's property)
# Checked on mqnamesrv: every topic of both brokers is listed and its route is served (each of
# the 200,000 asked for); the brokers' next registrations (registerNameServerPeriod 10 s) that
# repeat the last one exactly are answered without decoding (the repeat counter moves).
# Recorded for the Java NameServer (frames raised to 64 MiB, and as shipped): how many topics
# it lists and serves, and when.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers
set -euo pipefail
# shellcheck source=tests/interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

it_require java javac mvn python3
it_init big_broker
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

N=${BIG_TOPICS:-100000}
FRAME=$((64 << 20))
BIG_JAVA_OPTS="-Xms256m -Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
-Dcom.rocketmq.remoting.frameMaxLength=$FRAME"

probe() { python3 "$here/route_probe.py" "$@"; }

# probe_until <secs> <probe arguments>: the probe again until every route is served, then its
# output (or the last one's). On a loaded machine a registration of 100,000 topics can outlast
# the broker's own wait for its answer (registerBrokerTimeoutMills, 24 s; the NameServer's
# worker yields the CPU to busy processes, and this is a sanitizer build): the broker then
# closes its connection, which unregisters it as in Java, and its next registration
# (registerNameServerPeriod later) brings its routes back.
probe_until() {
    local secs=$1 out deadline
    shift
    deadline=$((SECONDS + secs))
    until out=$(probe "$@" 2>&1); do
        if ((SECONDS >= deadline)); then
            printf '%s\n' "$out"
            return 1
        fi
        sleep 1
    done
    printf '%s\n' "$out"
}

# topics_json <dir> <prefix>: the broker's store/config/topics.json with N topics.
topics_json() {
    mkdir -p "$1/store/config"
    python3 - "$1/store/config/topics.json" "$2" "$N" <<'EOF'
import json, sys
path, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
table = {}
for i in range(n):
    name = "%s-%d" % (prefix, i)
    table[name] = {"attributes": {}, "order": False, "perm": 6, "readQueueNums": 4,
                   "topicFilterType": "SINGLE_TAG", "topicName": name, "topicSysFlag": 0,
                   "writeQueueNums": 4}
with open(path, "w") as f:
    json.dump({"dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1700000000000},
               "topicConfigTable": table}, f, separators=(",", ":"))
EOF
}

# count_is <addr> <prefix>: the NameServer lists all N topics of the prefix.
count_is() { [[ $(probe "$1" --count "$2" 2>/dev/null) == "$N" ]]; }

metric() {
    python3 -c '
import sys, urllib.request
for line in urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode().splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(int(float(line.split()[1])))' "$1" "$2"
}

MPORT=$(it_free_port 1)
it_start_mqnamesrv ns --set frameMaxLength=$FRAME --set metricsExporterType=PROM \
    --set metricsPromExporterHost=127.0.0.1 --set metricsPromExporterPort="$MPORT"
NS=127.0.0.1:$ns_port
# The Java NameServer with the same frame limit (a system property there).
IT_JAVA_OPTS="-Xms64m -Xmx1g -XX:+UseSerialGC -Dcom.rocketmq.remoting.frameMaxLength=$FRAME" \
    it_start_java_namesrv jns 5.x
JNS=127.0.0.1:$jns_port
# And one as shipped (16 MiB frames), which the one big registration does not fit.
it_start_java_namesrv jdef 5.x
JDEF=127.0.0.1:$jdef_port

mkdir -p "$IT_WORK/bs" "$IT_WORK/bb"
topics_json "$IT_WORK/bs" BigSplit-service-topic
topics_json "$IT_WORK/bb" BigOne-service-topic
T0=$(date +%s)
IT_JAVA_OPTS=$BIG_JAVA_OPTS it_launch_broker bs 5.x "$NS;$JNS;$JDEF" brokerClusterName=BigCluster \
    enableSplitRegistration=true registerNameServerPeriod=10000
IT_JAVA_OPTS=$BIG_JAVA_OPTS it_launch_broker bb 5.x "$NS;$JNS;$JDEF" brokerClusterName=BigCluster \
    registerNameServerPeriod=10000
# Each reads and registers 100,000 topics as it boots: minutes of a loaded CPU (two JVMs of
# them at once, beside ctest), so they get more than the usual two.
it_await_broker bs 420
it_await_broker bb 420
it_log "both brokers booted after $(($(date +%s) - T0)) s"

it_check "mqnamesrv lists all $N topics of the split registrations" it_wait 300 count_is "$NS" BigSplit-service-topic
it_check "mqnamesrv lists all $N topics of the one big registration" it_wait 300 count_is "$NS" BigOne-service-topic
it_log "mqnamesrv had both after $(($(date +%s) - T0)) s"
it_check "mqnamesrv serves the route of every BigSplit-service-topic topic" \
    probe_until 300 "$NS" BigSplit-service-topic "$N" bs
it_check "mqnamesrv serves the route of every BigOne-service-topic topic" \
    probe_until 300 "$NS" BigOne-service-topic "$N" bb
it_log "broker connections that closed while their registration waited (each unregisters" \
    "the broker until its next one): $(grep -c "channel destroyed" "$ns_dir/namesrv.log" || true)"
probe "$NS" BigOne-service-topic "$N" bb >"$IT_WORK/c_probe.txt" || true

# The Java NameServer, recorded.
jcount() { probe "$JNS" --count "$1" 2>/dev/null || echo error; }
for _ in $(seq 1 60); do
    s=$(jcount BigSplit-service-topic)
    b=$(jcount BigOne-service-topic)
    [[ $s == "$N" && $b == "$N" ]] && break
    sleep 1
done
{
    echo "java_after_s: $(($(date +%s) - T0))"
    echo "java_listed_split: $s"
    echo "java_listed_big: $b"
    echo "java_probe_split: $(probe "$JNS" BigSplit-service-topic "$N" bs 2>&1 || true)"
    echo "java_probe_big: $(probe "$JNS" BigOne-service-topic "$N" bb 2>&1 || true)"
    echo "c_probe_big: $(cat "$IT_WORK/c_probe.txt")"
    echo "java_errors: $(grep -ciE 'exception|too long|frame' "$jns_dir/stdout" || true)"
    grep -iE 'exception|too long|frame' "$jns_dir/stdout" | head -3 || true
    echo "java_16MiB_listed_split: $(probe "$JDEF" --count BigSplit-service-topic 2>&1 || true)"
    echo "java_16MiB_listed_big: $(probe "$JDEF" --count BigOne-service-topic 2>&1 || true)"
    grep -iE 'exception|too long|frame' "$jdef_dir/stdout" | head -2 || true
    grep -iE 'register broker.*(failed|exception)|registerBroker Exception' "$bb_dir/stdout" "$bs_dir/stdout" 2>/dev/null | head -3 || true
} >"$IT_WORK/outcome.txt" 2>&1
it_log "Java NameServer outcome: $(tr '\n' ' ' <"$IT_WORK/outcome.txt" | cut -c1-600)"

# The next periodic registration of bb repeats the last one: no decode, no apply.
REP0=$(metric "$MPORT" mqnamesrv_broker_registrations_repeated_total)
rep_moved() { [[ $(metric "$MPORT" mqnamesrv_broker_registrations_repeated_total) -gt $REP0 ]]; }
it_check "a re-registration that repeats the last one is answered without decoding" \
    it_wait 40 rep_moved

it_stop_mqnamesrv ns
it_finish
