#!/usr/bin/env bash
# compare.sh: the fair comparison of route reads. In one run, on this machine, the same nsbench
# loads against
#   echo  nsbench's own trivial target (-w serve: answers every request with a fixed route, no
#         work at all): the ceiling of what generator + loopback + a server reach here
#   c     mqnamesrv (ioThreads default: one I/O loop per CPU)
#   c1    mqnamesrv with ioThreads=1 (the I/O loop trade-off, docs/performance.md)
#   java  the Java NameServer (org.apache.rocketmq:rocketmq-namesrv, bench/java/pom.xml),
#         -Xms512m -Xmx512m -XX:+UseG1GC
#   b     another mqnamesrv build (--base BIN, ioThreads default): before/after in the same run
#   rust  rocketmq-rust's NameServer (crate rocketmq-namesrv, release build, cached in
#         ~/.cache/mqnamesrv-bench; built with cargo when missing)
# Every server is started once and loaded one at a time (never two at once), load by load, the
# targets in turn. Each (load, target) gets the same treatment: an untimed warm-up pass (Java's
# JIT; the first route load of each target gets --first-warmup, 30 s, the others --warmup, 5 s),
# then measured windows until the rate stops rising (a window under 1.03x the best so
# far, at least 2, at most --max-windows); the best window is reported. Figures: raw rate,
# rate per server CPU-second (/proc/<pid>/stat, nsbench --pid), latency percentiles, peak RSS.
#
#   bench/compare.sh [--targets echo,c,c1,java,rust] [--loads 64x1,256x1,1024x1,64x16,storm,churn]
#                    [--duration S] [--warmup S] [--first-warmup S] [--max-windows N]
#                    [--callgrind] [--quick] [--base BIN] [--c-set KEY=VALUE]...
#                    [--out DIR]
#   bench/compare.sh [--out DIR] --table results.tsv...   (re-print earlier runs as one table)
#   bench/compare.sh --targets none --loads none --callgrind   (the instruction count alone)
#
# Loads (route reads: 4 brokers x 1,000 topics, width 4, uniformly random topics, standard JSON):
#   NxP    N reader connections, P requests in flight each
#   storm  300 brokers x 10,000 topics (width 4) re-registering back to back, 16 readers x 1
#   churn  40 brokers x 1,000 topics (width 4), 20 broker restarts/s, 16 readers x 1
# --callgrind: instructions per route request of mqnamesrv (valgrind, docs/performance.md).
# --c-set KEY=VALUE: passed as --set to this build's servers (c, c1 and the callgrind run; not
# to b, which may not know the key), e.g. --c-set routeAnswerCacheMaxBytes=67108864.
# --quick: a smoke check (1 s windows, loads 16x1 and a small storm, echo and c unless
# --targets says so; the bench.compare ctest): fails when a target answered nothing or
# anything but valid answers; the figures then mean nothing. Bounded: every nsbench run has a fixed duration.
# Needs: a release build (cmake --preset release && cmake --build build/release); java and mvn
# for java; cargo (or the cached binary) for rust; valgrind for --callgrind.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

targets=echo,c,c1,java,rust
loads=64x1,256x1,1024x1,64x16,storm,churn
duration=5
warmup=5
first_warmup=30
max_windows=5
inner_warmup=1 # nsbench's own --warmup inside every run (not measured)
callgrind=0
c_sets=()
quick=0
out=
targets_set=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --targets) targets=$2; targets_set=1; shift 2 ;;
    --loads) loads=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --first-warmup) first_warmup=$2; shift 2 ;;
    --max-windows) max_windows=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    --quick) quick=1; shift ;;
    --base) base_bin=$2; shift 2 ;;
    --c-set) c_sets+=(--set "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --table) table_only=1; shift; table_files=("$@"); break ;;
    -h|--help) sed -n '2,38p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $quick -eq 1 ]]; then
  duration=1 warmup=1 first_warmup=1 max_windows=1 inner_warmup=0
  [[ $targets_set -eq 1 ]] || targets=echo,c
  [[ $loads == 64x1,256x1,1024x1,64x16,storm,churn ]] && loads=16x1,storm
fi

nsbench=${NSBENCH:-$here/build/release/bench/nsbench}
mqnamesrv=${MQNAMESRV:-$here/build/release/mqnamesrv}
java_opts=${JAVA_OPTS:--Xms512m -Xmx512m -XX:+UseG1GC}
ROUTE_DATA=(-T 1000 -B 4 -W 4)
STORM_DATA=(-T 10000 -B 300 -W 4)
CHURN_DATA=(-T 1000 -B 40 -W 4)
[[ $quick -eq 1 ]] && STORM_DATA=(-T 1000 -B 30 -W 4) CHURN_DATA=(-T 100 -B 10 -W 2)

[[ ${table_only:-0} -eq 1 || -x $nsbench ]] || { echo "no $nsbench: build the release preset first" >&2; exit 2; }
out_tmp=0
[[ -n $out ]] || { out=$(mktemp -d /tmp/nsbench-compare.XXXXXX); out_tmp=$quick; }
mkdir -p "$out"
results=$out/results.tsv
work=$(mktemp -d /tmp/nsbench-srv.XXXXXX)
declare -A pids=() ports=() warmed=()
run_id=0

# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"

cleanup() {
  stop_targets
  rm -rf "$work"
  [[ $out_tmp -eq 0 ]] || rm -rf "$out" # --quick without --out: nothing left behind
}
trap cleanup EXIT



# start_server TARGET: starts it on a free port (pids[TARGET], ports[TARGET]); records the time
# to its first answer and its idle RSS.
start_server() {
  local target=$1 dir port srv_pid t0
  dir=$(mktemp -d "$work/$target.XXXX")
  port=$(free_port)
  t0=$(date +%s%N)
  case $target in
    echo)
      # Started for each load (its life is bounded: nsbench -d).
      "$nsbench" -w serve -a "127.0.0.1:$port" -d $((first_warmup + warmup + max_windows * (duration + 3) + 20)) \
        >"$dir/server.out" 2>&1 &
      LAUNCHED_PID=$!
      ;;
    c | c1 | b)
      local io=0 bin=$mqnamesrv sets=("${c_sets[@]+"${c_sets[@]}"}")
      [[ $target == c1 ]] && io=1
      [[ $target == b ]] && bin=${base_bin:?target b needs --base BIN} && sets=()
      launch_server "$bin" "$dir" "$port" --set ioThreads=$io "${sets[@]+"${sets[@]}"}"
      ;;
    java | rust) launch_server "$target" "$dir" "$port" ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
  srv_pid=$LAUNCHED_PID
  pids[$target]=$srv_pid
  ports[$target]=$port
  local ready
  ready=$("$nsbench" -w ready -a "127.0.0.1:$port" --since-ns "$t0" --timeout-ms 60000 \
    --label "$target") || { cat "$dir/server.out" >&2; echo "$target did not start" >&2; exit 1; }
  log "$ready"
  kill -0 "$srv_pid" 2>/dev/null || { cat "$dir/server.out" >&2; echo "$target exited" >&2; exit 1; }
  [[ $target == echo ]] && return 0
  local ms rss
  ms=$(sed -n 's/.* ms=\([0-9.-]*\).*/\1/p' <<<"$ready")
  echo -e "$target\tstartup\tready_ms\t$ms" >>"$results"
  sleep 1
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$srv_pid/status")
  echo -e "$target\tstartup\tidle_rss_kb\t$rss" >>"$results"
}

# run_nsbench TARGET LOGFILE DURATION nsbench-args...: one bounded nsbench run.
run_nsbench() {
  local target=$1 logf=$2 d=$3 rc=0
  shift 3
  run_id=$((run_id % 254 + 1))
  timeout 900 "$nsbench" -a "127.0.0.1:${ports[$target]}" --pid "${pids[$target]}" \
    --label "$target" --run-id "$run_id" -d "$d" --warmup "$inner_warmup" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || log "$target: nsbench exit status $rc (see $logf)"
  sleep 0.5 # the server drops this run's brokers (their connections closed)
}

# emit TARGET LOAD LOGFILE: the RESULT lines of one nsbench run as TSV rows.
emit() {
  awk -v t="$1" -v n="$2" '
    function put(cls, k, v) { printf "%s\t%s\t%s.%s\t%s\n", t, n, cls, k, v }
    /^RESULT / {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      cls = f["class"]
      if (cls != "setup") {
        put(cls, "rate", f["rate"]); put(cls, "p50_us", f["p50_us"]); put(cls, "p99_us", f["p99_us"])
        put(cls, "p999_us", f["p999_us"])
        if ("srv_cpu_pct" in f) {
          put("srv", "cpu_pct", f["srv_cpu_pct"]); put("srv", "rss_peak_kb", f["srv_rss_peak_kb"])
          put("gen", "cpu_pct", f["gen_cpu_pct"])
          if (f["srv_cpu_pct"] > 0) put(cls, "per_cpu_s", int(f["rate"] * 100 / f["srv_cpu_pct"]))
        }
      }
      delete f
    }
    /^TOTAL / { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "errors") put("total", "errors", kv[2]) } }
  ' "$3"
}

route_rate() { awk '/^RESULT .*class=route / { for (i = 2; i <= NF; i++) if ($i ~ /^rate=/) { sub(/rate=/, "", $i); print int($i) } }' "$1" | head -1; }

# measure TARGET LOAD nsbench-args...: warm-up pass, then windows until the rate stops rising.
measure() {
  local target=$1 load=$2 base=$out/$1-$2
  shift 2
  local wu=$warmup
  if [[ -z ${warmed[$target]:-} ]]; then
    wu=$((first_warmup > warmup ? first_warmup : warmup))
    warmed[$target]=1
  fi
  run_nsbench "$target" "$base-warm.log" "$wu" "$@"
  local best=0 best_w=0 w r rates=""
  for w in $(seq 1 "$max_windows"); do
    run_nsbench "$target" "$base-w$w.log" "$duration" "$@"
    r=$(route_rate "$base-w$w.log")
    r=${r:-0}
    rates="$rates $r"
    if [[ $r -gt $best ]]; then
      local rising=$((r * 100 > best * 103))
      best=$r best_w=$w
      [[ $w -ge 2 && $rising -eq 0 ]] && break
    elif [[ $w -ge 2 ]]; then
      break
    fi
  done
  log "$target $load: windows$rates -> best $best"
  echo -e "$target\t$load\twindows\t${rates# }" >>"$results"
  [[ $best_w -gt 0 ]] && emit "$target" "$load" "$base-w$best_w.log" >>"$results"
  return 0
}

# once TARGET LOAD nsbench-args...: a warm-up pass and one window (storm, churn: the figure is
# the readers' latency under a write load, not a peak).
once() {
  local target=$1 load=$2 base=$out/$1-$2
  shift 2
  run_nsbench "$target" "$base-warm.log" "$warmup" "$@"
  run_nsbench "$target" "$base.log" "$duration" "$@"
  emit "$target" "$load" "$base.log" >>"$results"
}

run_load() {
  local load=$1 t
  log "== load $load"
  for t in "${target_list[@]}"; do
    case $load in
      storm)
        [[ $t == echo ]] && continue # echo has no registrations to storm
        once "$t" storm -w mix "${STORM_DATA[@]}" -c 16 -p 1 ;;
      churn)
        [[ $t == echo ]] && continue
        once "$t" churn -w churn "${CHURN_DATA[@]}" -c 16 -p 1 --churn-rate 20 ;;
      *x*)
        [[ $t == echo ]] && start_server echo
        measure "$t" "$load" -w route "${ROUTE_DATA[@]}" -c "${load%x*}" -p "${load#*x}"
        if [[ $t == echo ]]; then stop_pid "${pids[echo]}"; unset "pids[echo]"; fi ;;
      *) echo "unknown load $load" >&2; exit 2 ;;
    esac
  done
}

# ---- instructions per route request (callgrind) -----------------------------------------------
# The docs/performance.md method: the server under callgrind with instrumentation off, on for 8 s
# of route reads (16 x 4, 20,000 topics on 200 brokers, width 4), divided by the requests served
# (calls of ns_proc_dispatch and of the fast path ns_proc_route_fast: every request of this load
# takes one or the other).
callgrind_route() {
  local label=$1 total calls per
  shift
  local cg_server_args=("${c_sets[@]+"${c_sets[@]}"}")
  read -r total calls per < <(callgrind_route_cost "$work/cg-$label" "$out/callgrind.$label.out" \
    "$mqnamesrv" "$@")
  echo -e "c\tcallgrind-$label\tinstructions.per_route\t$per" >>"$results"
  log "callgrind $label: $total instructions / $calls route requests = $per per request"
}

# ---- tables -----------------------------------------------------------------------------------
print_header() {
  echo "nsbench compare: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), kernel $(uname -r)"
  echo "generator and servers share the same $(nproc) CPUs; windows of ${duration}s after a warm-up pass (${first_warmup}s for a target's first load, then ${warmup}s), best of up to ${max_windows}; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "Java: rocketmq-namesrv $(java_version), $(java -version 2>&1 | head -1), $java_opts; rust: rocketmq-namesrv $RUST_VERSION (crates.io, release)"
}

# print_summary TSV: one markdown row per load: rate, per CPU-second and p99 of every target, and
# C's ratios to the ceiling (per CPU-second), to Java and to Rust (raw rate).
print_summary() {
  awk -F'\t' '
    { if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } v[$1 "\t" $2 "\t" $3] = $4; tg[$1] = 1 }
    function g(t, l, m) { return ((t "\t" l "\t" m) in v) ? v[t "\t" l "\t" m] : "" }
    function d(x) { return x == "" ? "-" : x }
    function k(x) { return x == "" ? "-" : (x >= 10000 ? sprintf("%.0fk", x / 1000) : x) }
    function r(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
    END {
      split("echo b c c1 java rust", all, " "); m = 0
      for (i = 1; i <= 6; i++) if (all[i] in tg) T[++m] = all[i]
      h = "| load | metric |"; s = "|---|---|"
      for (i = 1; i <= m; i++) { h = h " " T[i] " |"; s = s "---:|" }
      print h " C/ceiling | C/Java | C/Rust | C1/ceiling | C1/Java | C1/Rust |"; print s "---:|---:|---:|---:|---:|---:|"
      for (j = 1; j <= n; j++) {
        l = order[j]
        if (l == "startup") {
          line = "| startup | ready ms |"; for (i = 1; i <= m; i++) line = line " " d(g(T[i], l, "ready_ms")) " |"; print line " | | | | | |"
          line = "| startup | idle RSS MB |"; for (i = 1; i <= m; i++) { x = g(T[i], l, "idle_rss_kb"); line = line " " (x == "" ? "-" : sprintf("%.0f", x / 1024)) " |" }; print line " | | | | | |"
          continue
        }
        if (l ~ /^callgrind/) { print "| " l " | instructions per route request | " d(g("c", l, "instructions.per_route")) " |"; continue }
        ms = (l == "storm" || l == "churn") ? "route.rate route.p99_us route.per_cpu_s register.rate register.p99_us srv.rss_peak_kb" \
                                            : "route.rate route.per_cpu_s route.p50_us route.p99_us route.p999_us srv.cpu_pct gen.cpu_pct srv.rss_peak_kb total.errors windows"
        nm = split(ms, M, " ")
        for (q = 1; q <= nm; q++) {
          met = M[q]; line = "| " l " | " met " |"; any = 0
          for (i = 1; i <= m; i++) { x = g(T[i], l, met); if (x != "") any = 1; line = line " " (met ~ /rate|per_cpu/ ? k(x) : d(x)) " |" }
          if (!any) continue
          ce = ""; cj = ""; cr = ""; de = ""; dj = ""; dr = ""
          if (met == "route.per_cpu_s") { ce = r(g("c", l, met), g("echo", l, met)); de = r(g("c1", l, met), g("echo", l, met)) }
          if (met == "route.rate") { ce = r(g("c", l, met), g("echo", l, met)); de = r(g("c1", l, met), g("echo", l, met)) }
          if (met == "route.rate" || met == "route.per_cpu_s") {
            cj = r(g("c", l, met), g("java", l, met)); cr = r(g("c", l, met), g("rust", l, met))
            dj = r(g("c1", l, met), g("java", l, met)); dr = r(g("c1", l, met), g("rust", l, met))
          }
          print line " " ce " | " cj " | " cr " | " de " | " dj " | " dr " |"
        }
      }
    }' "$1"
}

if [[ ${table_only:-0} -eq 1 ]]; then
  cat "${table_files[@]}" >"$out/combined.tsv"
  print_summary "$out/combined.tsv" | tee "$out/summary.md"
  exit 0
fi
: >"$results"
log "results in $out"
[[ $targets == none ]] && targets= # (--targets none --loads none --callgrind: the count alone)
[[ $loads == none ]] && loads=
IFS=, read -r -a target_list <<<"$targets"
IFS=, read -r -a load_list <<<"$loads"
jcp=
rbin=
[[ ,$targets, == *,java,* ]] && jcp=$(java_classpath)
[[ ,$targets, == *,rust,* ]] && rbin=$(rust_binary)
[[ ,$targets, == *,c,* || ,$targets, == *,c1,* || $callgrind -eq 1 ]] && [[ ! -x $mqnamesrv ]] && { echo "no $mqnamesrv" >&2; exit 2; }
for t in "${target_list[@]+"${target_list[@]}"}"; do
  [[ $t == echo ]] || start_server "$t"
done
for l in "${load_list[@]+"${load_list[@]}"}"; do
  run_load "$l"
done
stop_targets
[[ $callgrind -eq 1 ]] && callgrind_route plain
{
  print_header | sed 's/^/# /'
  echo
  print_summary "$results"
} | tee "$out/summary.md"
if [[ $quick -eq 1 ]]; then
  # The smoke check: every (target, load) that ran answered, and nothing but valid answers.
  awk -F'\t' -v targets="$targets" -v loads="$loads" '
    { v[$1 "\t" $2 "\t" $3] = $4 }
    END {
      nt = split(targets, T, ","); nl = split(loads, L, ","); bad = 0
      for (i = 1; i <= nt; i++) for (j = 1; j <= nl; j++) {
        if (T[i] == "echo" && (L[j] == "storm" || L[j] == "churn")) continue
        k = T[i] "\t" L[j]
        if (!((k "\troute.rate") in v) || v[k "\troute.rate"] + 0 <= 0) { print "FAIL: no route answers from " T[i] " in " L[j]; bad = 1 }
        if (v[k "\ttotal.errors"] + 0 != 0) { print "FAIL: " v[k "\ttotal.errors"] " errors from " T[i] " in " L[j]; bad = 1 }
      }
      exit bad
    }' "$results" || exit 1
  echo "compare --quick: OK"
fi
