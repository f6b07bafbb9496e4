#!/usr/bin/env bash
# bench/tls.sh: TLS figures of mqnamesrv against the Java NameServer, in one run (the machine is
# shared and noisy: only ratios taken in the same run mean something).
#
#   1. route reads over TLS, 64 connections x 1 and x 16 in flight (nsbench --tls), mqnamesrv
#      and the Java NameServer both in their default mode (permissive, test-mode certificate);
#   2. TLS handshakes per second and per server CPU-second (nsbench -w handshake: connections
#      that connect, handshake and close in a loop), full and resumed (each connection offering
#      the session of its last full handshake), over TLS 1.3 and TLS 1.2;
#   3. plaintext route reads, 64 x 16, of this build (on a server of its own) and of a build
#      without TLS (--base BIN): the cost of TLS support on the plaintext path, and of TLS;
#   4. with --callgrind: instructions per route request (callgrind, docs/performance.md) of
#      --base and this build over plaintext, and of this build over TLS.
# Each of 1-3 runs --repeat times, alternating the servers, and prints every figure plus the
# median. Results in --out (default a new /tmp directory): results.tsv and summary.md.
#
#   bench/tls.sh [--duration S] [--repeat N] [--base BIN] [--callgrind] [--out DIR]
#   (--repeat 0 --callgrind: only the instruction counts, no Java)
#
# Needs a release build (cmake --preset release && cmake --build build/release), java, mvn,
# the openssl command; valgrind for --callgrind. Loopback only, every run bounded.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

duration=10
repeat=3
base=
callgrind=0
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

nsbench=${NSBENCH:-$here/build/release/bench/nsbench}
mqnamesrv=${MQNAMESRV:-$here/build/release/mqnamesrv}
java_opts=${JAVA_OPTS:--Xms256m -Xmx512m -XX:+UseG1GC}
# The dataset: route answers of the w1 shape (one broker per topic), fewer brokers than w1 so
# that 100 TLS registrations set it up in seconds on the Java side too.
DATA=(-T 2000 -B 100 -W 1)
HS_CONNS=16 # handshake connections (nsbench, 2 threads)
# The handshake figures: label and nsbench options.
HS_KINDS=("hs-tls13-full:" "hs-tls13-resumed:--resume" "hs-tls12-full:--tls-version 1.2"
  "hs-tls12-resumed:--tls-version 1.2 --resume")
[[ -x $nsbench && -x $mqnamesrv ]] || { echo "build the release preset first" >&2; exit 2; }
[[ -n $out ]] || out=$(mktemp -d /tmp/nsbench-tls.XXXXXX)
mkdir -p "$out"
results=$out/results.tsv
: >"$results"
work=$(mktemp -d /tmp/nsbench-tls-srv.XXXXXX)
pids=()

cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
bench_track_pid() { pids+=("$1"); }



# start <name> <java|BIN> [plain]: a server on a free port in its default (TLS permissive,
# test-mode) configuration, ready for TLS clients unless `plain` (a build without TLS); sets PORT
# and PID.
start() {
  local name=$1 kind=$2 dir
  dir=$work/$name
  mkdir -p "$dir"
  PORT=$(free_port)
  if [[ $kind == java ]]; then
    echo "listenPort=$PORT" >"$dir/namesrv.conf"
    # shellcheck disable=SC2086
    (cd "$dir" && ROCKETMQ_HOME=$dir exec java $java_opts -Duser.home="$dir" \
      -cp "$jcp" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" \
      >"$dir/server.out" 2>&1) &
  else
    # shellcheck disable=SC2046 # tls_args: zero or two words
    ROCKETMQ_HOME=$dir "$kind" --set listenPort="$PORT" --set bindAddress=127.0.0.1 \
      --set "kvConfigPath=$dir/kvConfig.json" --set "configStorePath=$dir/namesrv.properties" \
      --set logPath= $(tls_args "$kind") >"$dir/server.out" 2>&1 &
  fi
  PID=$!
  pids+=("$PID")
  "$nsbench" -w ready -a "127.0.0.1:$PORT" --timeout-ms 60000 --label "$name" >/dev/null ||
    { cat "$dir/server.out" >&2; echo "$name did not start" >&2; exit 1; }
  [[ ${3:-} == plain ]] && return 0
  # Java makes its test-mode certificate in the constructor, before it answers; wait for TLS.
  for _ in $(seq 1 100); do
    timeout 5 openssl s_client -connect "127.0.0.1:$PORT" </dev/null >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "$name does not speak TLS" >&2
  exit 1
}

# route <server> <port> <pid> <label> <conns> <inflight> [--tls]: one nsbench run; records
# rate and per server CPU-second.
route() {
  local srv=$1 port=$2 pid=$3 label=$4 c=$5 p=$6
  shift 6
  local o
  o=$("$nsbench" -w route -a "127.0.0.1:$port" "${DATA[@]}" -c "$c" -p "$p" -d "$duration" \
    --warmup 2 --pid "$pid" --label "$srv" "$@" 2>&1) || { echo "$o" >&2; exit 1; }
  echo "$o" >>"$out/nsbench.log"
  local line rate cpu
  line=$(grep '^RESULT .*class=route ' <<<"$o")
  rate=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' <<<"$line")
  cpu=$(sed -n 's/.* srv_cpu_pct=\([0-9-]*\).*/\1/p' <<<"$line")
  local per=-
  [[ $cpu -gt 0 ]] && per=$((rate * 100 / cpu))
  printf '%s\t%s\trate\t%s\n%s\t%s\tper_cpu_s\t%s\n' "$srv" "$label" "$rate" "$srv" "$label" \
    "$per" >>"$results"
  log "$srv $label: $rate/s, server CPU $cpu %, $per per CPU-s"
}

# tls_args <binary>: --set tls.config.file= for a build that has the key (not for --base), so
# that a /etc/rocketmq/tls.properties on this machine changes nothing.
tls_args() {
  if "$1" -p 2>/dev/null | grep -q ' tls.config.file='; then
    printf '%s\n' --set tls.config.file=
  fi
}

# handshakes <server> <port> <pid> <label> [nsbench options]: HS_CONNS connections that
# connect, handshake and close in a loop for the duration (nsbench -w handshake, no
# certificate check); records the rate, the rate per server CPU-second and the share of
# handshakes that resumed (with --resume: each connection offers the session of its last full
# handshake, a TLS 1.3 ticket awaited first).
handshakes() {
  local srv=$1 port=$2 pid=$3 label=$4
  shift 4
  local o line rate per count resumed pct cpu errs
  # (nsbench exits 1 when a handshake failed: the failures are recorded, not fatal.)
  o=$("$nsbench" -w handshake -a "127.0.0.1:$port" -c "$HS_CONNS" -t 2 -d "$duration" \
    --warmup 1 --pid "$pid" --label "$srv" "$@" 2>&1) || true
  echo "$o" >>"$out/nsbench.log"
  line=$(grep '^RESULT .*class=handshake ' <<<"$o") || { echo "$o" >&2; exit 1; }
  rate=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' <<<"$line")
  per=$(sed -n 's/.* per_srv_cpu_s=\([0-9-]*\).*/\1/p' <<<"$line")
  count=$(sed -n 's/.* count=\([0-9]*\).*/\1/p' <<<"$line")
  resumed=$(sed -n 's/.* resumed=\([0-9]*\).*/\1/p' <<<"$line")
  cpu=$(sed -n 's/.* srv_cpu_pct=\([0-9-]*\).*/\1/p' <<<"$line")
  errs=$(sed -n 's/^TOTAL .* conn_errors=\([0-9]*\).*/\1/p' <<<"$o")
  pct=$(awk -v r="$resumed" -v c="$count" 'BEGIN {if (c > 0) printf "%d", 100 * r / c; else print "-"}')
  printf '%s\t%s\trate\t%s\n%s\t%s\tper_cpu_s\t%s\n%s\t%s\tresumed_pct\t%s\n' "$srv" "$label" \
    "$rate" "$srv" "$label" "$per" "$srv" "$label" "$pct" >>"$results"
  log "$srv $label: $rate/s ($resumed of $count resumed, ${errs:-?} failed), server CPU $cpu %, $per per CPU-s"
}

log "TLS run: ${repeat} x ${duration} s per figure, results in $out"
if [[ $repeat -gt 0 ]]; then # (--repeat 0 --callgrind: the instruction counts only)
  jcp=$(java_classpath)
  start c "$mqnamesrv"
  c_port=$PORT c_pid=$PID
  start java java
  j_port=$PORT j_pid=$PID
  # Before/after over plaintext: two fresh servers that see nothing else (the TLS runs above
  # would leave their allocator state to one of them only).
  start plain "$mqnamesrv"
  p_port=$PORT p_pid=$PID
  [[ -n $base ]] && { start base "$base" plain; b_port=$PORT b_pid=$PID; }
fi

# The JVM compiles its hot paths during the first seconds of load: both servers get an
# untimed minute of the same loads first, so that Java is measured warm.
if [[ $repeat -gt 0 ]]; then
  log "-- warm-up (not recorded)"
  for srv in "c $c_port $c_pid" "java $j_port $j_pid"; do
    read -r name port pid <<<"$srv"
    for shape in "64 1" "64 16"; do
      read -r c p <<<"$shape"
      "$nsbench" -w route -a "127.0.0.1:$port" "${DATA[@]}" -c "$c" -p "$p" -d 15 --warmup 0 \
        --tls --label warm >/dev/null 2>&1 || true
    done
    for kind in "" "--resume" "--tls-version 1.2 --resume"; do
      # shellcheck disable=SC2086 # kind: zero or more words
      "$nsbench" -w handshake -a "127.0.0.1:$port" -c "$HS_CONNS" -t 2 -d 5 --warmup 0 $kind \
        --label warm >/dev/null 2>&1 || true
    done
  done
fi

for r in $(seq 1 "$repeat"); do
  log "-- round $r"
  for shape in "64 1" "64 16"; do
    read -r c p <<<"$shape"
    route c "$c_port" "$c_pid" "tls-${c}x${p}" "$c" "$p" --tls
    route java "$j_port" "$j_pid" "tls-${c}x${p}" "$c" "$p" --tls
  done
  # Before/after: the order alternates between rounds, so that neither build always runs second.
  if [[ -n $base && $((r % 2)) -eq 0 ]]; then
    route base "$b_port" "$b_pid" "plain-64x16" 64 16
    route c "$p_port" "$p_pid" "plain-64x16" 64 16
  else
    route c "$p_port" "$p_pid" "plain-64x16" 64 16
    [[ -n $base ]] && route base "$b_port" "$b_pid" "plain-64x16" 64 16
  fi
  for kind in "${HS_KINDS[@]}"; do
    # shellcheck disable=SC2086 # the options: zero or more words
    handshakes c "$c_port" "$c_pid" "${kind%%:*}" ${kind#*:}
    # shellcheck disable=SC2086
    handshakes java "$j_port" "$j_pid" "${kind%%:*}" ${kind#*:}
  done
done

# ---- instructions per route request ----------------------------------------------------------
# callgrind_route <binary> <label> [nsbench options]: the docs/performance.md method (w4 shape,
# 16 x 4, instrumentation only while the load runs).
callgrind_route() {
  local bin=$1 label=$2 total calls per
  shift 2
  local cg_server_args
  mapfile -t cg_server_args < <(tls_args "$bin")
  read -r total calls per < <(callgrind_route_cost "$work/cg-$label" "$out/callgrind.$label.out" \
    "$bin" "$@")
  printf '%s\tinstructions\tper_route\t%s\n' "$label" "$per" >>"$results"
  log "$label: $total instructions / $calls route requests = $per per request"
}
if [[ $callgrind -eq 1 ]]; then
  [[ -n $base ]] && callgrind_route "$base" base-plain
  callgrind_route "$mqnamesrv" plain
  callgrind_route "$mqnamesrv" tls --tls
fi

# ---- summary ---------------------------------------------------------------------------------
{
  echo "| figure | server | every run | median |"
  echo "|---|---|---|---|"
  awk -F'\t' '{k = $2 "\t" $3; key[k]; v[$1 "\t" k] = v[$1 "\t" k] " " $4; srv[$1]}
    END {for (k in key) for (s in srv) if ((s "\t" k) in v) print k "\t" s "\t" v[s "\t" k]}' \
    "$results" | sort | while IFS=$'\t' read -r label metric srv vals; do
    med=$(tr ' ' '\n' <<<"$vals" | grep -v '^$' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    echo "| $label $metric | $srv |$vals | $med |"
  done
} | tee "$out/summary.md"
