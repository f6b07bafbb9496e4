#!/usr/bin/env bash
# bench.smoke: proves the benchmark tools run, not how fast anything is. Starts the built
# mqnamesrv on a free loopback port, runs short nsbench workloads (route reads in both JSON
# modes, over TLS too, a registration storm with zlib bodies under readers, broker churn, full
# and resumed TLS handshakes) and checks only that requests completed, no valid request failed
# and the counts add up.
#   smoke.sh NSBENCH MQNAMESRV
# With NSB_SMOKE_ADDR=127.0.0.1:PORT it uses a server that is already running instead.
set -euo pipefail
nsbench=$1
server=${2:-}
tmp=$(mktemp -d /tmp/nsbench-smoke.XXXXXX)
srv_pid=
cleanup() {
  if [[ -n $srv_pid ]]; then
    kill "$srv_pid" 2>/dev/null || true
    wait "$srv_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if [[ -n ${NSB_SMOKE_ADDR:-} ]]; then
  addr=$NSB_SMOKE_ADDR
else
  ROCKETMQ_HOME=$tmp "$server" --set listenPort=0 --set bindAddress=127.0.0.1 \
    --set "portFile=$tmp/port" --set "kvConfigPath=$tmp/kvConfig.json" \
    --set "configStorePath=$tmp/namesrv.properties" --set logPath= >"$tmp/server.out" 2>&1 &
  srv_pid=$!
  for _ in $(seq 1 500); do
    [[ -s $tmp/port ]] && break
    kill -0 "$srv_pid" 2>/dev/null || { cat "$tmp/server.out"; echo "FAIL: server exited"; exit 1; }
    sleep 0.02
  done
  [[ -s $tmp/port ]] || { cat "$tmp/server.out"; echo "FAIL: no port file"; exit 1; }
  addr=127.0.0.1:$(cat "$tmp/port")
fi
echo "smoke: target $addr"

failures=0
# check OUTPUT: every RESULT line has count > 0, errors=0 and codes that add up to count; the
# SETUP line registered every broker; the TOTAL line has errors=0.
check() {
  local name=$1 out=$2
  if ! awk -v name="$name" '
    function val(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
    /^SETUP / { setups++; if (val("registered") != val("brokers")) { print name ": not every broker registered: " $0; bad = 1 } }
    /^RESULT / {
      results++
      n = val("count"); e = val("errors"); c = val("codes"); sum = 0
      m = split(c, parts, ",")
      for (i = 1; i <= m; i++) { split(parts[i], pc, ":"); sum += pc[2] }
      if (n + 0 <= 0) { print name ": no completed requests: " $0; bad = 1 }
      if (e != "0") { print name ": errors: " $0; bad = 1 }
      if (sum != n) { print name ": codes add up to " sum ", count is " n; bad = 1 }
    }
    /^TOTAL / { totals++; if (val("errors") != "0") { print name ": " $0; bad = 1 } }
    END { if (setups != 1 || results < 2 || totals != 1) { print name ": missing output lines"; bad = 1 } exit bad }
  ' <<<"$out"; then
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

run() {
  local name=$1
  shift
  local out rc=0
  out=$("$nsbench" -a "$addr" --label smoke "$@" 2>&1) || rc=$?
  echo "$out" | grep -E '^(RESULT|TOTAL)' | sed 's/^/  /'
  if [[ $rc -ne 0 ]]; then
    echo "$out"
    echo "FAIL: $name: nsbench exit status $rc"
    failures=$((failures + 1))
    return
  fi
  check "$name" "$out"
}

ready=$("$nsbench" -w ready -a "$addr" --timeout-ms 10000 --label smoke)
echo "  $ready"
[[ $ready == *"code=17"* ]] || { echo "FAIL: ready probe: $ready"; failures=$((failures + 1)); }

run route-standard -w route -T 100 -B 10 -c 4 -p 4 -d 0.6 --warmup 0.2 -V 479
run route-legacy -w route -T 100 -B 10 -c 4 -p 4 -d 0.4 --warmup 0.1 -V 317
run storm-zlib -w mix -T 200 -B 20 -W 2 -z -c 2 -p 2 -d 0.6 --warmup 0.1
run churn -w churn -T 100 -B 10 -c 2 -p 2 -d 1 --warmup 0.1 --churn-rate 40
# The server's default is Java's: permissive, test-mode certificate; every connection of this
# run (brokers and readers) is a TLS session.
run route-tls -w route -T 100 -B 10 -c 4 -p 4 -d 0.6 --warmup 0.2 --tls

# handshakes NAME CONNS [options]: nsbench -w handshake completed handshakes and none failed;
# with --resume every one resumed but, at most, the first of each connection.
handshakes() {
  local name=$1 conns=$2
  shift 2
  local out rc=0
  out=$("$nsbench" -w handshake -a "$addr" --label smoke -c "$conns" "$@" 2>&1) || rc=$?
  echo "$out" | grep -E '^(RESULT|TOTAL)' | sed 's/^/  /'
  if [[ $rc -ne 0 ]] || ! awk -v name="$name" -v conns="$conns" -v resume="$*" '
    function val(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
    /^RESULT .*class=handshake / {
      results++; n = val("count"); r = val("resumed")
      if (n + 0 <= 0) { print name ": no handshake: " $0; bad = 1 }
      if (val("errors") != "0") { print name ": errors: " $0; bad = 1 }
      if (resume ~ /--resume/ && r + conns < n) { print name ": only " r " of " n " resumed"; bad = 1 }
      if (resume !~ /--resume/ && r != 0) { print name ": resumed without --resume"; bad = 1 }
    }
    /^TOTAL / { totals++; if (val("errors") != "0") { print name ": " $0; bad = 1 } }
    END { if (results != 1 || totals != 1) { print name ": missing output lines"; bad = 1 } exit bad }
  ' <<<"$out"; then
    echo "$out"
    echo "FAIL: $name (nsbench exit status $rc)"
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}
handshakes tls13-full 2 -d 0.6 --warmup 0.2
handshakes tls13-resumed 2 -d 0.6 --warmup 0.2 --resume
handshakes tls12-resumed-id 2 -d 0.6 --warmup 0.2 --resume --tls-version 1.2 --tls-no-ticket

if [[ -n $srv_pid ]] && ! kill -0 "$srv_pid" 2>/dev/null; then
  echo "FAIL: server died"
  cat "$tmp/server.out"
  failures=$((failures + 1))
fi
if [[ $failures -ne 0 ]]; then
  echo "bench smoke: $failures failed"
  exit 1
fi
echo "bench smoke: all passed"
