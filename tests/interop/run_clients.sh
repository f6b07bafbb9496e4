#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Interop with RocketMQ clients in other languages: each finds its broker only through
# mqnamesrv, sends N messages with distinct bodies and receives all of them with a push
# consumer of a new group. One mqnamesrv and one real 5.x Java broker serve both; the same runs
# against the Java NameServer 5.5.0 and its own broker must show the clients the same things.
#
#   Go       github.com/apache/rocketmq-client-go/v2 (pinned in tests/interop/go/go.mod):
#            JSON headers, version 317, so our legacy route body (bare integer brokerAddrs
#            keys), which the client splits by hand. The topic is created by the first send
#            (TBW102 route, autoCreateTopicEnable).
#   Node.js  ali-ons (pinned in tests/interop/node/package-lock.json): JSON headers, version
#            121, legacy route body read with the JSON2 parser. It cannot create topics by
#            sending, so mqadmin creates its topic first.
#
#   Java     rocketmq-client 5.5.0 and 4.9.8 (ItDriver JVMs): producer, push consumer, the
#            subscribe queues and mqadmin's topicRoute, compared the same way.
#
# The client programs print "RESULT pass|fail <check>" lines; each becomes one check here.
# Builds are cached: Go modules in the Go module cache, the binary in build/interop/cache;
# node_modules in build/interop/cache/node-<lock hash> (npm's own cache holds the tarballs).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require go node npm java javac mvn python3
it_init clients

N=${IT_CLIENTS_N:-20}
CLUSTER=ItCluster
BROKER=b1

# --- builds -----------------------------------------------------------------------------------
build_go() {
    local out=$IT_CACHE/go/goclient
    mkdir -p "$IT_CACHE/go"
    it_log "building the Go client program (rocketmq-client-go $(awk '$1 == "require" && $2 ~ /rocketmq/ {print $3}' "$here/go/go.mod"))"
    if ! (cd "$here/go" && GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$out.tmp" .) >"$IT_WORK/go-build.log" 2>&1; then
        cat "$IT_WORK/go-build.log" >&2
        echo "interop: building the Go client failed" >&2
        return 1
    fi
    mv "$out.tmp" "$out"
    GO_CLIENT=$out
}


build_go
NODE_MODULES=$(it_npm_ci "$here/node" node)

# --- servers ----------------------------------------------------------------------------------
# mqnamesrv with broker b1, and the Java NameServer 5.5.0 with its own broker, also named b1 (a
# later brokerName line wins in a Java properties file), so that every client sees the same names
# and topics on both and only the broker's address differs.
it_start_mqnamesrv ns1
it_start_java_namesrv jns 5.x
NSADDR=127.0.0.1:$ns1_port
JNSADDR=127.0.0.1:$jns_port
it_launch_broker "$BROKER" 5.x "$NSADDR"
it_launch_broker bj 5.x "$JNSADDR" "brokerName=$BROKER"
it_await_broker "$BROKER"
it_await_broker bj
BROKER_ADDR=127.0.0.1:$b1_port
JBROKER_ADDR=127.0.0.1:$bj_port
# "boot success" comes before the first registration (seconds before it on a loaded machine); a
# client started in between finds no route for TBW102.
it_check "$BROKER registered with mqnamesrv" \
    it_wait 60 grep -q "new broker registered, .*brokerAddr=$BROKER_ADDR" "$ns1_dir/namesrv.log"
it_check "$BROKER registered with the Java NameServer" \
    it_wait 60 grep -q "new broker registered, .*brokerAddr=$JBROKER_ADDR" \
    "$jns_dir/home/logs/rocketmqlogs/broker_default.log"

go_topic=GoTopic_$$_$RANDOM
node_topic=NodeTopic_$$_$RANDOM

# scenario <tag> <namesrv address> <broker address>: both clients against one NameServer; their
# outputs go to go-<tag>.out and node-<tag>.out.
scenario() {
    local tag=$1 nsaddr=$2 baddr=$3 out
    run_client "go-$tag" 10 "$GO_CLIENT" -namesrv "$nsaddr" -topic "$go_topic" -n "$N" \
        -broker-name "$BROKER" -broker-addr "$baddr" -cluster "$CLUSTER"
    out=$(it_mqadmin 5.x updateTopic -n "$nsaddr" -c "$CLUSTER" -t "$node_topic" -r 4 -w 4)
    it_check_contains "[$tag] mqadmin creates $node_topic on $baddr" "$out" \
        "create topic to $baddr success"
    run_client "node-$tag" 10 env NODE_PATH="$NODE_MODULES" node "$here/node/client.js" "$nsaddr" \
        "$node_topic" "$N" "$BROKER" "$baddr" "$CLUSTER"
}

# same_view <client>: what the client saw through mqnamesrv (its checks, with the routes, queue
# ids, permissions and topic counts they print) is what it saw through the Java NameServer. Only
# the broker's address may differ, and what depends on timing or chance: redeliveries, and the
# order in which the sends went round the queues (the client starts at a random one).
view() { # <out file> <broker address>
    python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace(sys.argv[2], "<broker>")
text = re.sub(r"\d+ redelivered", "N redelivered", text)
text = re.sub(r"\(used ([\d,]+)\)",
              lambda m: "(used %s)" % ",".join(sorted(m.group(1).split(","), key=int)), text)
sys.stdout.write(text)
PY
}
same_view() {
    local client=$1 a b
    a=$(view "$IT_WORK/$client-ns.out" "$BROKER_ADDR")
    b=$(view "$IT_WORK/$client-java.out" "$JBROKER_ADDR")
    it_check_same "$client client: the same checks and the same routes through mqnamesrv as through the Java NameServer" \
        "$a" "$b"
}

# Go: JSON headers, version 317, so the legacy route body (bare integer brokerAddrs keys), which
# the client splits by hand; the topic is created by the first send. Node.js: version 121, the
# legacy body read with the JSON2 parser; mqadmin creates its topic first.
scenario ns "$NSADDR" "$BROKER_ADDR"
scenario java "$JNSADDR" "$JBROKER_ADDR"
same_view go
same_view node

# --- Java remoting clients ----------------------------------------------------------------------
# The 5.5.0 and 4.9.8 producer and push consumer (ItDriver JVMs), and the topic route as each
# version's mqadmin prints it: the same through both NameServers, address aside.
java_view() { # <driver> <tag> <namesrv address> <broker address>: prints what the clients saw
    local d=$1 tag=$2 nsaddr=$3 baddr=$4 topic=Java${1}Topic_$$
    adm "$d" updateTopic -n "$nsaddr" -c "$CLUSTER" -t "$topic" -r 4 -w 4
    has "[$d $tag] updateTopic $topic" "create topic to $baddr success"
    drv "$d" producer "p$tag" "$nsaddr" "it_p$tag" "$tag"
    drv "$d" consumer "c$tag" "$nsaddr" "it_c$tag" "$topic" "$tag"
    drv "$d" send "p$tag" "$topic" "$tag" "$N" 3
    has "[$d $tag] producer sends $N messages" "sent $N/$N retries=0"
    local sent=$R
    drv "$d" await "c$tag" "$tag" "$N" 120000
    has "[$d $tag] push consumer receives all $N" "received $N/$N total=$N unexpected=0"
    local got=$R
    drv "$d" queues "c$tag" "$topic"
    local queues=$R
    adm "$d" topicRoute -n "$nsaddr" -t "$topic"
    printf '%s%s%s%s' "$sent" "$got" "$queues" "${R//$baddr/<broker>}" | sed "s/$topic/<topic>/g" \
        >"$IT_WORK/java-$d-$tag.view"
    drv "$d" close "p$tag"
    drv "$d" close "c$tag"
}
drv_start d5 5.x
drv_start d49 4.9-client
for d in d5 d49; do
    java_view "$d" ns "$NSADDR" "$BROKER_ADDR"
    java_view "$d" java "$JNSADDR" "$JBROKER_ADDR"
    if cmp -s "$IT_WORK/java-$d-ns.view" "$IT_WORK/java-$d-java.view" &&
        grep -q '"brokerDatas"' "$IT_WORK/java-$d-ns.view"; then
        it_record pass "Java client ($d): the same sends, receipts, queues and topicRoute through mqnamesrv as through the Java NameServer"
    else
        it_record fail "Java client ($d): what it saw through mqnamesrv (-) and the Java NameServer (+) differ"
        diff "$IT_WORK/java-$d-ns.view" "$IT_WORK/java-$d-java.view" | head -30 >&2
    fi
done

# --- server health ----------------------------------------------------------------------------
it_check_log_clean ns1
it_stop_mqnamesrv ns1

it_finish
