#!/usr/bin/env bash
# Integration (ctest integration.ctl_golden): the golden answers of the Java 5.5.0 embedded
# controller (tests/interop/controller/golden_*.jsonl, recorded by record.sh) replayed over TCP
# against mqnamesrv controller peers started as an operator would: config files in the shape of
# Apache's conf/controller/cluster-3n-namesrv-plugin/namesrv-n*.conf (their XML comment block
# first, "key = value"), only the ports, the store paths and the scan interval of the recording
# changed. ctl_replay.py sends every request Java was sent (every code, good and bad input) and
# compares every reply, and the 1008 notices its fake brokers receive, with Java's.
#   golden_one    one peer: testSomeApi's flow, every error path, a broker's closed connection,
#                 three failed elections, the inactive-master scan, cleans
#   golden_three  three peers: the followers' 2007s, the leader killed (SIGKILL), a new leader
#                 with the state kept
# Needs MQNAMESRV_BIN and NS_SOURCE_DIR (set by ctest). A missing tool fails loudly.
set -euo pipefail
: "${MQNAMESRV_BIN:?}" "${NS_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "FAIL: python3 not installed" >&2; exit 1; }
golden_dir=$NS_SOURCE_DIR/tests/interop/controller

tmp=$(mktemp -d /tmp/ns-ctl-golden-XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "$tmp"/*/stdout; do
    [[ -f $f ]] && { echo "--- $f" >&2; tail -25 "$f" >&2; }
  done
  exit 1
}
waitfor() { # waitfor <seconds> <command...>
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do ((SECONDS < end)) || return 1; sleep 0.2; done
}
free_ports() { # free_ports <n>: n distinct free loopback ports
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# plugin_conf <selfId> <peers> <listenPort> <dir>: the file record.sh gave Java for the
# recording (the shape of Apache's namesrv-n0.conf, its XML comment block first), so that 1010
# shows the same keys.
plugin_conf() {
  cat <<EOF
<!--
  A controller peer in the shape of the official cluster-3n-namesrv-plugin files: they
  begin with an XML comment block like this one, which java.util.Properties does not skip.

      https://rocketmq.apache.org/docs/deploymentOperations/03autoswitchdeploy

  Every line of it becomes a key: the opening one, "A", "https" and the closing one.
  -->

#Namesrv config
listenPort = $3
enableControllerInNamesrv = true
kvConfigPath = $4/kvConfig.json
configStorePath = $4/namesrv.properties

#controller config
controllerDLegerGroup = group1
controllerDLegerPeers = $2
controllerDLegerSelfId = $1
controllerStorePath = $4/ctlstore
mappedFileSize = 10485760
scanNotActiveBrokerInterval = 1000
EOF
}

# scenario <golden file> <peer count>: starts the peers, replays, stops them (SIGTERM, exit 0,
# no sanitizer report), except the one the replay killed.
scenario() {
  local golden=$1 n=$2 i peers="" args=() pid dir
  read -r -a ports <<<"$(free_ports $((2 * n)))" # n controller ports, then n listenPorts
  for ((i = 0; i < n; i++)); do peers+="n$i-127.0.0.1:${ports[i]};"; done
  peers=${peers%;}
  local started=()
  for ((i = 0; i < n; i++)); do
    dir=$tmp/$(basename "$golden" .jsonl)-n$i
    mkdir -p "$dir"
    plugin_conf "n$i" "$peers" "${ports[n + i]}" "$dir" >"$dir/namesrv.conf"
    ROCKETMQ_HOME=$NS_SOURCE_DIR HOME=$dir "$MQNAMESRV_BIN" -c "$dir/namesrv.conf" \
      --set bindAddress=127.0.0.1 >"$dir/stdout" 2>&1 &
    pid=$!
    pids+=("$pid")
    started+=("$pid:$dir")
    args+=(--node "n$i=127.0.0.1:${ports[i]}" --pid "n$i=$pid")
  done
  for ((i = 0; i < n; i++)); do
    dir=$tmp/$(basename "$golden" .jsonl)-n$i
    waitfor 30 grep -q "ControllerManager boot success" "$dir/stdout" ||
      fail "peer n$i of $(basename "$golden") did not start"
  done
  echo "== replaying $(basename "$golden") against $n mqnamesrv controller peer(s)"
  python3 "$golden_dir/ctl_replay.py" "${args[@]}" "$golden" || fail "$(basename "$golden") differs from Java 5.5.0"
  local entry rc
  for entry in "${started[@]}"; do
    pid=${entry%%:*} dir=${entry#*:}
    kill -0 "$pid" 2>/dev/null || continue # the leader the replay killed
    kill -TERM "$pid"
    rc=0
    wait "$pid" || rc=$?
    [[ $rc -eq 0 ]] || fail "peer $dir exited $rc on SIGTERM"
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$dir/stdout"; then
      cat "$dir/stdout" >&2
      fail "sanitizer report from $dir"
    fi
  done
}

scenario "$golden_dir/golden_three.jsonl" 3
scenario "$golden_dir/golden_one.jsonl" 1
echo "PASS: the golden answers of Java 5.5.0's controller, replayed against mqnamesrv"
