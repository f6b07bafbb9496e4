#!/usr/bin/env bash
# Interop, issue 14: the warm restart with real Java peers (5.5.0 broker, producer, consumer).
#
# mqnamesrv (checked):
#   1  a broker registers a topic; a producer sends every 100 ms (its own client instance)
#   2  SIGTERM mqnamesrv, start it again on its port: a new producer sends at once and a new
#      consumer finds the topic's queues at once (no TOPIC_NOT_EXIST), with needWaitForService
#   3  kill -9 (the snapshot of the periodic write), start again: the same
#   4  the ticking producer saw no missing route in all that
#   5  SIGTERM, kill -9 the broker while mqnamesrv is down, start again: the broker is served
#      at once, then gone within its heartbeat timeout (it never came back)
# The Java NameServer 5.5.0 (recorded, not checked: docs/compatibility.md has the outcome):
#   6  the same steps 1, 2 and 4 against it
# The brokers register every 30 s (the default), so a restart is never covered by a fresh
# registration within the few seconds the checks take.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers
set -euo pipefail
# shellcheck source=tests/interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

it_require java javac mvn python3
it_init route_state

# The broker's heartbeat timeout: a 5.x broker sends heartbeatTimeoutMillis (its
# brokerNotActiveTimeoutMillis) only with enableSlaveActingMaster, and heartbeats every 1 s.
HB_MS=4000
TOPIC=RsTopic

drv_start d5 5.x

has() { it_check_contains "$1" "$R" "$2"; }

# ns_start <name> <port|0> [--set ...]: mqnamesrv on that port, keeping its directory (and so
# its snapshot) across restarts; the previous run's output is kept as stdout.<n>. A restart
# (port given) runs with needWaitForService, which a warm start skips.
ns_start() {
    local name=$1 port=$2
    shift 2
    local dir=$IT_WORK/$name n=0
    if [[ -f $dir/stdout ]]; then
        while [[ -f $dir/stdout.$n ]]; do n=$((n + 1)); done
        mv "$dir/stdout" "$dir/stdout.$n"
    fi
    local wait=false
    [[ $port -eq 0 ]] || wait=true
    it_start_mqnamesrv "$name" --set listenPort="$port" --set routeSnapshotIntervalMillis=500 \
        --set scanNotActiveBrokerInterval=1000 --set needWaitForService=$wait "$@"
}

# jns_start <port|0>: the Java NameServer on that port (same directory on a restart).
jns_start() {
    local port=$1
    if [[ $port -eq 0 ]]; then
        it_start_java_namesrv jns 5.x
    else
        it_start_java_namesrv jns 5.x "listenPort=$port"
        jns_port=$port
    fi
}

# fresh_clients <tag> <namesrv>: a new producer sends one message and a new consumer asks for
# the topic's queues, right now. Sets SENT and QUEUES to the driver's answers.
fresh_clients() {
    local tag=$1 ns=$2
    drv d5 producer "p$tag" "$ns" "RsP$tag" -
    drv d5 send "p$tag" "$TOPIC" "$tag" 1 1
    SENT=$R
    drv d5 consumer "c$tag" "$ns" "RsC$tag" "$TOPIC" -
    drv d5 queues "c$tag" "$TOPIC"
    QUEUES=$R
    drv d5 close "p$tag"
    drv d5 close "c$tag"
}

route_gone() {
    drv d5 mqadmin topicRoute -n "$1" -t "$TOPIC"
    grep -qF "CODE: 17" <<<"$R"
}

route_there() {
    drv d5 mqadmin topicRoute -n "$1" -t "$TOPIC"
    ! grep -qF "CODE:" <<<"$R" && grep -qF '"b1"' <<<"$R"
}

# ---- mqnamesrv ---------------------------------------------------------------------------
ns_start ns 0
NS=127.0.0.1:$ns_port
it_start_broker b1 5.x "$NS" enableSlaveActingMaster=true "brokerNotActiveTimeoutMillis=$HB_MS"
drv d5 mqadmin updateTopic -n "$NS" -c ItCluster -t "$TOPIC" -r 4 -w 4
has "updateTopic $TOPIC on b1" "success"
it_check "mqnamesrv serves the route of $TOPIC" it_wait 30 route_there "$NS"
drv d5 producer tick "$NS" RsTick -
drv d5 ticker tick "$TOPIC" 100
it_check "a snapshot is written" it_wait 10 test -s "$ns_dir/routeSnapshot.bin"

it_stop_mqnamesrv ns
ns_start ns "$ns_port"
fresh_clients s1 "$NS"
it_check_contains "SIGTERM restart: a new producer sends at once" "$SENT" "sent 1/1 retries=0"
it_check_contains "SIGTERM restart: a new consumer finds the queues at once" "$QUEUES" "queues 4"
it_check_contains "SIGTERM restart: the snapshot was loaded" "$(cat "$ns_dir/stdout")" \
    "route snapshot $ns_dir/routeSnapshot.bin loaded"

sleep 1 # more than routeSnapshotIntervalMillis
kill -9 "$ns_pid"
wait "$ns_pid" 2>/dev/null || true
ns_start ns "$ns_port"
fresh_clients k1 "$NS"
it_check_contains "kill -9 restart: a new producer sends at once" "$SENT" "sent 1/1 retries=0"
it_check_contains "kill -9 restart: a new consumer finds the queues at once" "$QUEUES" "queues 4"

drv d5 tickstop tick
TICKS=$R
it_log "mqnamesrv, producer ticking every 100 ms through both restarts: $(tr '\n' ' ' <<<"$TICKS")"
it_check_contains "the ticking producer never missed the route" "$TICKS" "noroute=0"
drv d5 close tick

it_stop_mqnamesrv ns
kill -9 "$b1_pid"
wait "$b1_pid" 2>/dev/null || true
ns_start ns "$ns_port"
it_check "a broker killed while mqnamesrv was down is served at once after the restart" \
    route_there "$NS"
T0=$(date +%s%N)
it_check "... and gone within its heartbeat timeout ($HB_MS ms, scan every 1 s)" \
    it_wait $((HB_MS / 1000 + 10)) route_gone "$NS"
it_log "gone after $((($(date +%s%N) - T0) / 1000000)) ms"
it_stop_mqnamesrv ns

# ---- the Java NameServer (recorded) ------------------------------------------------------
jns_start 0
JNS=127.0.0.1:$jns_port
it_start_broker b2 5.x "$JNS" enableSlaveActingMaster=true "brokerNotActiveTimeoutMillis=$HB_MS"
drv d5 mqadmin updateTopic -n "$JNS" -c ItCluster -t "$TOPIC" -r 4 -w 4
drv d5 producer jtick "$JNS" RsJTick -
drv d5 ticker jtick "$TOPIC" 100
sleep 1
kill -TERM "$jns_pid"
wait "$jns_pid" 2>/dev/null || true
jport=$jns_port
jns_start "$jport"
fresh_clients j1 "$JNS"
it_log "Java NameServer, SIGTERM restart: new producer: $(tr '\n' ' ' <<<"$SENT")"
it_log "Java NameServer, SIGTERM restart: new consumer: $(tr '\n' ' ' <<<"$QUEUES")"
drv d5 tickstop jtick
it_log "Java NameServer, producer ticking every 100 ms through the restart: $(tr '\n' ' ' <<<"$R")"
{
    echo "java_new_producer: $(tr '\n' ' ' <<<"$SENT")"
    echo "java_new_consumer: $(tr '\n' ' ' <<<"$QUEUES")"
    echo "java_ticker: $(head -1 <<<"$R")"
    echo "c_ticker: $(head -1 <<<"$TICKS")"
} >"$IT_WORK/outcome.txt"
drv d5 close jtick

it_finish
