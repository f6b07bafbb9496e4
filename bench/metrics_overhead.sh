#!/usr/bin/env bash
# metrics_overhead.sh: what the metrics cost route reads. Two mqnamesrv release servers run at
# once, one with metricsExporterType=DISABLE ("off"), one with metricsExporterType=PROM and a
# scraper fetching /metrics every second ("on"); nsbench's route workload (64 connections x 16
# in flight by default) runs against one and then the other, alternating off/on/on/off... so
# that a change in the machine's load hits both alike. Prints each run and the mean on/off
# ratio of the rate and of the rate per server CPU-second.
#
#   bench/metrics_overhead.sh [--rounds N] [--duration S] [--conns N] [--inflight N]
#   bench/metrics_overhead.sh --callgrind   instructions per route request: off, on, on and
#                                           scraped every second (and per scrape)
#   KEEP=1 bench/metrics_overhead.sh ...     keep the work directory (logs, callgrind files)
#
# Loopback only, bounded in time. Needs a release build (cmake --preset release && cmake
# --build build/release), python3, and valgrind for --callgrind.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=3 duration=10 conns=64 inflight=16 callgrind=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
nsbench=${NSBENCH:-$here/build/release/bench/nsbench}
mqnamesrv=${MQNAMESRV:-$here/build/release/mqnamesrv}
[[ -x $nsbench && -x $mqnamesrv ]] || { echo "build the release preset first" >&2; exit 2; }
work=$(mktemp -d /tmp/ns-metrics-bench.XXXXXX)
declare -A pid=() port=() mport=()
cleanup() {
  local p
  for p in "${pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n ${KEEP:-} ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# start <name> <wrapper...> -- starts a server (metrics on for "on"), sets pid/port/mport.
start() {
  local name=$1 dir=$work/$1
  shift
  mkdir -p "$dir"
  local extra=()
  [[ $name == on* ]] && extra=(--set metricsExporterType=PROM --set metricsPromExporterPort=0
    --set metricsPromExporterHost=127.0.0.1)
  ROCKETMQ_HOME=$here HOME=$dir "$@" "$mqnamesrv" --set listenPort=0 --set bindAddress=127.0.0.1 \
    --set portFile="$dir/port" --set logPath= "${extra[@]}" >"$dir/out" 2>&1 &
  pid[$name]=$!
  local i
  for ((i = 0; i < 600; i++)); do [[ -s $dir/port ]] && break; sleep 0.1; done
  [[ -s $dir/port ]] || { cat "$dir/out" >&2; echo "$name did not start" >&2; exit 1; }
  port[$name]=$(cat "$dir/port")
  if [[ $name == on* ]]; then
    for ((i = 0; i < 100; i++)); do grep -q "listening on 127.0.0.1:" "$dir/out" && break; sleep 0.1; done
    mport[$name]=$(grep -o "listening on 127.0.0.1:[0-9]*" "$dir/out" | head -1 | cut -d: -f2)
  fi
}

# scrape_every_second <port> <seconds>: a Prometheus-like scraper, bounded.
scrape_every_second() {
  python3 - "$1" "$2" <<'EOF' &
import sys, time, urllib.request
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + secs
n = 0
while time.time() < end:
    urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read()
    n += 1
    time.sleep(1)
print("scrapes=%d" % n, file=sys.stderr)
EOF
}

run_id=10
# bench <name>: one nsbench route run; prints "rate cpu_pct".
bench() {
  local name=$1 scraper=""
  run_id=$((run_id + 1))
  if [[ $name == on* ]]; then
    scrape_every_second "${mport[$name]}" $((duration + 6))
    scraper=$!
  fi
  "$nsbench" -w route -a "127.0.0.1:${port[$name]}" -T 20000 -B 1000 -W 1 -c "$conns" \
    -p "$inflight" -d "$duration" --warmup 2 --pid "${pid[$name]}" --run-id "$run_id" \
    --label "$name" >"$work/$name.$run_id.log" 2>&1
  [[ -n $scraper ]] && wait "$scraper"
  grep '^RESULT' "$work/$name.$run_id.log" | grep 'class=route' |
    sed -E 's/.* rate=([0-9]+).* errors=([0-9]+).* srv_cpu_pct=([0-9-]+).*/\1 \3 \2/'
}

if [[ $callgrind -eq 1 ]]; then
  command -v valgrind >/dev/null || { echo "valgrind missing" >&2; exit 2; }
  for name in off on onscrape; do
    start "$name" valgrind --tool=callgrind --instr-atstart=no \
      --callgrind-out-file="$work/$name.cg"
    scraper=""
    [[ $name == onscrape ]] && { scrape_every_second "${mport[$name]}" 40; scraper=$!; }
    "$nsbench" -w route -a "127.0.0.1:${port[$name]}" -T 20000 -B 200 -W 4 -c 16 -p 4 -d 14 \
      --warmup 3 --run-id $((run_id++)) >"$work/$name.nsbench.log" 2>&1 &
    nb=$!
    for ((i = 0; i < 600; i++)); do grep -q '^SETUP' "$work/$name.nsbench.log" && break; sleep 0.1; done
    sleep 2
    callgrind_control -i on "${pid[$name]}" >/dev/null
    sleep 8
    callgrind_control -i off "${pid[$name]}" >/dev/null
    callgrind_control -d "${pid[$name]}" >/dev/null
    wait "$nb"
    [[ -n $scraper ]] && kill "$scraper" 2>/dev/null
    # the newest dump of this run (ls -t: by time, which find cannot sort)
    # shellcheck disable=SC2012
    f=$(ls -t "$work/$name.cg".* | head -1)
    # Total instructions of the window, and the calls of ns_proc_dispatch (one per request).
    python3 - "$f" "$name" <<'EOF'
import re, sys
# Calls of ns_proc_dispatch (one per request) and of ns_exporter_render (one per scrape), with
# the instructions spent inside the latter (the cost line after each calls= line).
names, calls, total, cfn, want = {}, {}, 0, None, None
incl = {}
for line in open(sys.argv[1]):
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
    if m:
        kind, i, nm = m.groups()
        if nm:
            names[i] = nm.strip()
        if kind == "cfn":
            cfn = names.get(i)
        continue
    if want is not None:
        parts = line.split()
        if len(parts) >= 2:
            incl[want] = incl.get(want, 0) + int(parts[1])
        want = None
        continue
    m = re.match(r"calls=(\d+)", line)
    if m and cfn in ("ns_proc_dispatch", "ns_exporter_render"):
        calls[cfn] = calls.get(cfn, 0) + int(m.group(1))
        want = cfn
    if line.startswith("totals:") or line.startswith("summary:"):
        total = int(line.split()[1])
req = calls.get("ns_proc_dispatch", 0)
scr = calls.get("ns_exporter_render", 0)
scr_incl = incl.get("ns_exporter_render", 0)
line = "callgrind %-9s %d instructions, %d requests, %.0f per request" % (sys.argv[2] + ":", total, req, total / req if req else 0)
if scr:
    line += "; %d scrapes of %.0f instructions each, %.0f per request without them" % (scr, scr_incl / scr, (total - scr_incl) / req)
print(line)
EOF
    kill -TERM "${pid[$name]}"; wait "${pid[$name]}" || true; unset "pid[$name]"
  done
  exit 0
fi

start off
start on
printf '%-4s %-5s %10s %8s %12s\n' round srv rate cpu_pct per_cpu_s
declare -A sum_rate=() sum_pcs=()
for ((r = 1; r <= rounds; r++)); do
  order=(off on)
  ((r % 2 == 0)) && order=(on off)
  for name in "${order[@]}"; do
    read -r rate cpu errors < <(bench "$name")
    [[ $errors == 0 ]] || { echo "nsbench reported $errors errors ($name)" >&2; exit 1; }
    pcs=$(python3 -c "print(int($rate / ($cpu / 100.0)) if $cpu > 0 else 0)")
    printf '%-4s %-5s %10s %8s %12s\n' "$r" "$name" "$rate" "$cpu" "$pcs"
    sum_rate[$name]=$(( ${sum_rate[$name]:-0} + rate ))
    sum_pcs[$name]=$(( ${sum_pcs[$name]:-0} + pcs ))
  done
done
python3 - "${sum_rate[off]}" "${sum_rate[on]}" "${sum_pcs[off]}" "${sum_pcs[on]}" "$rounds" <<'EOF'
import sys
ro, rn, po, pn, n = (float(x) for x in sys.argv[1:])
print("mean rate: off %.0f/s, on %.0f/s, on/off %.3f" % (ro / n, rn / n, rn / ro))
print("mean per CPU-second: off %.0f, on %.0f, on/off %.3f" % (po / n, pn / n, pn / po))
EOF
