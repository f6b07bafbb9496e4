#!/usr/bin/env bash
# Interop with RocketMQ clients in other languages: each finds its broker only through
# mqnamesrv, sends N messages with distinct bodies and receives all of them with a push
# consumer of a new group. One mqnamesrv and one real 5.x Java broker serve both.
#
#   Go       github.com/apache/rocketmq-client-go/v2 (pinned in tests/interop/go/go.mod):
#            JSON headers, version 317, so our legacy route body (bare integer brokerAddrs
#            keys), which the client splits by hand. The topic is created by the first send
#            (TBW102 route, autoCreateTopicEnable).
#   Node.js  ali-ons (pinned in tests/interop/node/package-lock.json): JSON headers, version
#            121, legacy route body read with the JSON2 parser. It cannot create topics by
#            sending, so mqadmin creates its topic first.
#
# The client programs print "RESULT pass|fail <check>" lines; each becomes one check here.
# Builds are cached: Go modules in the Go module cache, the binary in build/interop/cache;
# node_modules in build/interop/cache/node-<lock hash> (npm's own cache holds the tarballs).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require go node npm java mvn python3
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

install_node() {
    local key dir
    key=$(cat "$here/node/package.json" "$here/node/package-lock.json" | sha1sum | cut -c1-12)
    dir=$IT_CACHE/node-$key
    if [[ ! -f $dir/.installed ]]; then
        it_log "installing the Node.js client's packages (npm ci into $dir)"
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$here/node/package.json" "$here/node/package-lock.json" "$dir/"
        if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$IT_WORK/npm-ci.log" 2>&1; then
            cat "$IT_WORK/npm-ci.log" >&2
            echo "interop: npm ci failed" >&2
            return 1
        fi
        touch "$dir/.installed"
    fi
    NODE_MODULES=$dir/node_modules
}

build_go
install_node

# --- servers ----------------------------------------------------------------------------------
it_start_mqnamesrv ns1
NSADDR=127.0.0.1:$ns1_port
it_start_broker "$BROKER" 5.x "$NSADDR"
BROKER_ADDR=127.0.0.1:$b1_port
# "boot success" comes before the first registration (seconds before it on a loaded machine); a
# client started in between finds no route for TBW102.
it_check "$BROKER registered with mqnamesrv" \
    it_wait 60 grep -q "new broker registered, .*brokerAddr=$BROKER_ADDR" "$ns1_dir/namesrv.log"

# --- Go ---------------------------------------------------------------------------------------
go_topic=GoTopic_$$_$RANDOM
run_client go 10 "$GO_CLIENT" -namesrv "$NSADDR" -topic "$go_topic" -n "$N" \
    -broker-name "$BROKER" -broker-addr "$BROKER_ADDR" -cluster "$CLUSTER"

# --- Node.js ----------------------------------------------------------------------------------
node_topic=NodeTopic_$$_$RANDOM
out=$(it_mqadmin 5.x updateTopic -n "$NSADDR" -c "$CLUSTER" -t "$node_topic" -r 4 -w 4)
it_check_contains "mqadmin creates $node_topic on $BROKER_ADDR through mqnamesrv" "$out" \
    "create topic to $BROKER_ADDR success"
run_client node 10 env NODE_PATH="$NODE_MODULES" node "$here/node/client.js" "$NSADDR" "$node_topic" "$N" \
    "$BROKER" "$BROKER_ADDR" "$CLUSTER"

# --- server health ----------------------------------------------------------------------------
# A client frame we could not decode closes its connection with a WARN "closing connection";
# the clients might recover by reconnecting, so look for it explicitly.
bad=$(grep -E 'closing connection .*(first bytes|TLS)| ERROR ' "$ns1_dir/namesrv.log" || true)
it_check "mqnamesrv logged no protocol error or ERROR line" test -z "$bad"
[[ -z $bad ]] || printf '%s\n' "$bad" | head -20 >&2
it_stop_mqnamesrv ns1

it_finish
