#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Interop with gRPC clients through the RocketMQ 5.x Proxy (rocketmq-proxy 5.5.0, cluster mode,
# artifact set "proxy"): the Proxy finds the brokers and the routes only through the NameServer,
# and answers the gRPC clients' QueryRoute/QueryAssignment from what the NameServer told it.
#
# The same scenario runs twice in one run, on two separate clusters side by side:
#   "mqnamesrv": mqnamesrv (the ASan build) + a 5.5.0 broker broker-a + a Proxy
#   "java":      the Java NameServer 5.5.0  + a 5.5.0 broker broker-a + a Proxy
# mqadmin (through the ItDriver JVM) creates the same topics and groups on both: a NORMAL topic
# and a FIFO topic (attribute +message.type=FIFO, orderly consumer group) per client, and a
# read-only topic (perm 4). Then each client runs against each Proxy:
#   Java     rocketmq-client-java 5.0.8 (set grpc-client; tests/interop/grpc/GrpcClient.java):
#            raw QueryRoute (normal, FIFO, read-only, missing topic) and QueryAssignment, then
#            producer + simple consumer, NORMAL and FIFO (order per message group), and a push
#            consumer of NORMAL
#   Python   rocketmq-python-client 5.1.2 (tests/interop/grpc-python, venv cached by the hash of
#            requirements.txt): raw QueryRoute, producer + simple consumer, NORMAL and FIFO
#   Node.js  rocketmq-client-nodejs 1.0.8 (tests/interop/grpc-node, node_modules cached by the
#            hash of package-lock.json): raw QueryRoute, producer + simple consumer, NORMAL and
#            FIFO
# Every client line "RESULT pass|fail" is a check; then the Proxy answers that the clients
# printed (ROUTE and ASSIGN lines, normalized: the Proxy's own address is "proxy") must be the
# same for both clusters, line for line.
# Time: about 45 s on a warm cache (quiet machine). A cold one adds the Maven download of the
# sets proxy and grpc-client (~100 MB, ~20 s), the venv (~10 s) and npm ci (~4 s).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require java javac mvn python3 node npm
it_init proxy

N=${IT_PROXY_N:-20}
SIDES=(mqnamesrv java)

# --- builds and installs (cached) -------------------------------------------------------------
GRPC_CLASSES=$(it_javac grpc-client "$here/grpc/GrpcClient.java")
GRPC_CP=$(it_classpath grpc-client)
it_classpath proxy >/dev/null

install_python() {
    local req=$here/grpc-python/requirements.txt key dir
    key=$(sha1sum "$req" | cut -c1-12)
    dir=$IT_CACHE/py-grpc-$key
    if [[ ! -f $dir/.installed ]]; then
        it_log "installing the Python gRPC client (pip into $dir)"
        rm -rf "$dir"
        if ! { python3 -m venv "$dir" &&
            "$dir/bin/pip" install --disable-pip-version-check -q --no-deps -r "$req"; } \
            >"$IT_WORK/pip.log" 2>&1; then
            cat "$IT_WORK/pip.log" >&2
            echo "interop: installing the Python gRPC client failed" >&2
            return 1
        fi
        touch "$dir/.installed"
    fi
    PY_GRPC=$dir/bin/python
}


install_python
NODE_GRPC_MODULES=$(it_npm_ci "$here/grpc-node" node-grpc)

# --- two clusters: NameServer, broker, Proxy ----------------------------------------------------
it_start_mqnamesrv cns
it_start_java_namesrv jns 5.x
declare -A NS=([mqnamesrv]=127.0.0.1:$cns_port [java]=127.0.0.1:$jns_port) PROXY
# Both brokers are called broker-a (the route answers are compared); lib.sh's brokerName line
# comes first in broker.conf, so this one wins.
it_launch_broker bc 5.x "${NS[mqnamesrv]}" brokerName=broker-a
it_launch_broker bj 5.x "${NS[java]}" brokerName=broker-a
drv_start d5 5.x # the mqadmin JVM boots while the brokers do
# The Proxy needs its cluster's broker registered before it starts (lib.sh, it_start_proxy).
it_check "broker-a registered with mqnamesrv" \
    it_wait 120 grep -q "new broker registered, .*brokerAddr=127.0.0.1:$bc_port" "$cns_dir/namesrv.log"
it_check "broker-a registered with the Java NameServer" \
    it_wait 120 grep -q "new broker registered, .*brokerAddr=127.0.0.1:$bj_port" \
    "$jns_dir/home/logs/rocketmqlogs/broker_default.log"
it_launch_proxy pc "${NS[mqnamesrv]}"
it_launch_proxy pj "${NS[java]}"
it_await_proxy pc
it_await_proxy pj
PROXY=([mqnamesrv]=127.0.0.1:$pc_port [java]=127.0.0.1:$pj_port)

# --- topics and groups, the same on both ----------------------------------------------------------
CLIENTS=(java py node)
for side in "${SIDES[@]}"; do
    for c in "${CLIENTS[@]}"; do
        adm d5 updateTopic -n "${NS[$side]}" -c ItCluster -t "Normal_$c" -r 4 -w 4
        has "$side: mqadmin creates Normal_$c" "create topic to"
        adm d5 updateTopic -n "${NS[$side]}" -c ItCluster -t "Fifo_$c" -r 2 -w 2 -a +message.type=FIFO
        has "$side: mqadmin creates Fifo_$c (message.type=FIFO)" "attributes={+message.type=FIFO}"
        adm d5 updateSubGroup -n "${NS[$side]}" -c ItCluster -g "NormalGroup_$c"
        has "$side: mqadmin creates NormalGroup_$c" "create subscription group to"
        adm d5 updateSubGroup -n "${NS[$side]}" -c ItCluster -g "FifoGroup_$c" -o true
        has "$side: mqadmin creates FifoGroup_$c (consumeOrderly)" "consumeMessageOrderly=true"
    done
    adm d5 updateSubGroup -n "${NS[$side]}" -c ItCluster -g NormalGroup_java_push
    has "$side: mqadmin creates NormalGroup_java_push (the Java push consumer's)" "create subscription group to"
    adm d5 updateTopic -n "${NS[$side]}" -c ItCluster -t ReadOnly_java -r 2 -w 2 -p 4
    has "$side: mqadmin creates ReadOnly_java (perm 4)" "create topic to"
done

# --- the clients, against each Proxy ------------------------------------------------------------
for side in "${SIDES[@]}"; do
    mkdir -p "$IT_WORK/home-$side"
    # shellcheck disable=SC2086
    run_client "java-$side" 13 java $IT_JAVA_OPTS -Duser.home="$IT_WORK/home-$side" \
        -cp "$GRPC_CLASSES:$GRPC_CP" GrpcClient "${PROXY[$side]}" Normal_java Fifo_java NormalGroup_java \
        FifoGroup_java "$N" ReadOnly_java
    run_client "python-$side" 8 env HOME="$IT_WORK/home-$side" timeout 150 "$PY_GRPC" \
        "$here/grpc-python/client.py" "${PROXY[$side]}" Normal_py Fifo_py NormalGroup_py FifoGroup_py "$N"
    run_client "node-$side" 8 env HOME="$IT_WORK/home-$side" NODE_PATH="$NODE_GRPC_MODULES" timeout 150 \
        node "$here/grpc-node/client.js" "${PROXY[$side]}" Normal_node Fifo_node NormalGroup_node FifoGroup_node "$N"
done

# --- what the clients saw: the same through both Proxies ----------------------------------------
answers() { grep -E '^(ROUTE|ASSIGN) ' "$IT_WORK/$1.out" || true; }
for c in java python node; do
    a=$(answers "$c-mqnamesrv")
    b=$(answers "$c-java")
    it_check_same "$c: the Proxy's route/assignment answers are the same with mqnamesrv and with the Java NameServer ($(wc -l <<<"$a") lines)" \
        "$a" "$b"
done

# --- server health --------------------------------------------------------------------------------
it_check_log_clean cns
it_stop_mqnamesrv cns

it_finish
