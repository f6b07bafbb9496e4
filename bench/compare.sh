#!/usr/bin/env bash
# compare.sh: runs the same nsbench workloads against mqnamesrv and the Java NameServer
# (org.apache.rocketmq:rocketmq-namesrv from Maven Central, see bench/java/pom.xml) on this
# machine and prints one table with C/Java ratios. For each size both servers are started
# fresh; each test then runs against one server after the other (never both at once), so a
# change in the machine's load affects both alike.
#
#   bench/compare.sh [--sizes smoke,w1,w4,storm] [--duration S] [--warmup S]
#                    [--targets c,java] [--out DIR]
#   bench/compare.sh [--out DIR] --table results.tsv...   (re-print earlier runs as one table)
#
# Sizes (topics x brokers, width = brokers per topic):
#   smoke  100 topics x 10 brokers, width 1
#   w1     20,000 topics x 1,000 brokers, width 1 (20 topics per broker)
#   w4     100,000 topics x 1,000 brokers, width 4 (400 topics per broker)
#   storm  10,000 topics x 300 brokers, width 4 (~134 topics per broker): every broker
#          re-registers back to back while 16 readers query routes
# Everything runs on loopback and is bounded in time; the
# generator and the server share the machine's CPUs (2 here), which the table says.
# Needs: a release build (cmake --preset release && cmake --build build/release), java, mvn.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sizes=smoke,w1
targets=c,java
duration=5
warmup=2
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --table) table_only=1; shift; table_files=("$@"); break ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

nsbench=${NSBENCH:-$here/build/release/bench/nsbench}
mqnamesrv=${MQNAMESRV:-$here/build/release/mqnamesrv}
java_opts=${JAVA_OPTS:--Xms256m -Xmx512m -XX:+UseG1GC}
[[ ${table_only:-0} -eq 1 || -x $nsbench ]] || { echo "no $nsbench: build the release preset first" >&2; exit 2; }
[[ -n $out ]] || out=$(mktemp -d /tmp/nsbench-compare.XXXXXX)
mkdir -p "$out"
results=$out/results.tsv
work=$(mktemp -d /tmp/nsbench-srv.XXXXXX)
declare -A pids=() ports=()
run_id=0

cleanup() {
  stop_servers
  rm -rf "$work"
}
trap cleanup EXIT

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# free_port: a loopback port nobody listens on.
free_port() {
  local p
  for _ in $(seq 1 50); do
    # Below the ephemeral range (32768+ here), where a connect could pick the same port.
    p=$((10000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "no free port" >&2
  exit 1
}

java_classpath() {
  local cp=$here/build/java-namesrv.classpath
  if [[ ! -s $cp ]]; then
    log "resolving the Java NameServer with Maven (bench/java/pom.xml)"
    mvn -q -B -f "$here/bench/java/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$cp" >"$out/mvn.log" 2>&1 || { cat "$out/mvn.log" >&2; exit 1; }
  fi
  cat "$cp"
}

java_version() {
  sed -n 's:.*<rocketmq.version>\(.*\)</rocketmq.version>.*:\1:p' "$here/bench/java/pom.xml"
}

# start_server TARGET SIZE: starts it on a free port (pids[TARGET], ports[TARGET]); records
# the time to its first answer and its idle RSS.
start_server() {
  local target=$1 size=$2 dir port srv_pid
  dir=$(mktemp -d "$work/$target.XXXX")
  port=$(free_port)
  local t0
  t0=$(date +%s%N)
  if [[ $target == c ]]; then
    ROCKETMQ_HOME=$dir "$mqnamesrv" --set listenPort="$port" --set bindAddress=127.0.0.1 \
      --set "kvConfigPath=$dir/kvConfig.json" --set "configStorePath=$dir/namesrv.properties" \
      --set logPath= >"$dir/server.out" 2>&1 &
  else
    echo "listenPort=$port" >"$dir/namesrv.conf"
    # shellcheck disable=SC2086
    (cd "$dir" && ROCKETMQ_HOME=$dir exec java $java_opts -Duser.home="$dir" \
      -cp "$jcp" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" \
      >"$dir/server.out" 2>&1) &
  fi
  srv_pid=$!
  pids[$target]=$srv_pid
  ports[$target]=$port
  local ready
  ready=$("$nsbench" -w ready -a "127.0.0.1:$port" --since-ns "$t0" --timeout-ms 60000 \
    --label "$target") || { cat "$dir/server.out" >&2; echo "$target did not start" >&2; exit 1; }
  log "$ready"
  kill -0 "$srv_pid" 2>/dev/null || { cat "$dir/server.out" >&2; echo "$target exited" >&2; exit 1; }
  local ms
  ms=$(sed -n 's/.* ms=\([0-9.-]*\).*/\1/p' <<<"$ready")
  echo -e "$target\t$size\tstartup\tready_ms\t$ms" >>"$results"
  sleep 1
  local rss
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$srv_pid/status")
  echo -e "$target\t$size\tstartup\tidle_rss_kb\t$rss" >>"$results"
}

stop_servers() {
  local t pid
  for t in "${!pids[@]}"; do
    pid=${pids[$t]}
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset "pids[$t]"
  done
}

# bench TARGET SIZE TEST nsbench-args...: one nsbench run, its RESULT lines into the TSV.
bench() {
  local target=$1 size=$2 test=$3
  shift 3
  local logf=$out/$target-$size-$test.log rc=0
  run_id=$((run_id % 254 + 1))
  sleep 1 # let the server finish dropping the previous run's brokers
  timeout 900 "$nsbench" -a "127.0.0.1:${ports[$target]}" --pid "${pids[$target]}" --label "$target" \
    --run-id "$run_id" \
    -d "$duration" --warmup "$warmup" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || log "$target $size $test: nsbench exit status $rc (see $logf)"
  awk -v t="$target" -v s="$size" -v n="$test" '
    function emit(cls, k, v) { printf "%s\t%s\t%s\t%s.%s\t%s\n", t, s, n, cls, k, v }
    /^SETUP / { if (n == "register-json") for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ms") emit("setup", "ms", kv[2]) } }
    /^RESULT / {
      cls = ""; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      cls = f["class"]
      if (cls == "setup") next
      emit(cls, "rate", f["rate"]); emit(cls, "p50_us", f["p50_us"]); emit(cls, "p99_us", f["p99_us"])
      emit(cls, "p999_us", f["p999_us"]); emit(cls, "max_us", f["max_us"])
      if ("srv_cpu_pct" in f) {
        emit("srv", "cpu_pct", f["srv_cpu_pct"]); emit("srv", "rss_peak_kb", f["srv_rss_peak_kb"])
        emit("gen", "cpu_pct", f["gen_cpu_pct"])
        if (f["srv_cpu_pct"] > 0) emit(cls, "per_cpu_s", int(f["rate"] * 100 / f["srv_cpu_pct"]))
      }
      delete f
    }
    /^TOTAL / { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "errors") emit("total", "errors", kv[2]) } }
  ' "$logf" >>"$results"
}

peak_rate() {
  awk -F'\t' -v t="$1" -v s="$2" -v n="$3" '$1==t && $2==s && $3==n && $4=="route.rate" {print int($5)}' "$results"
}

# run_size SIZE: a fresh server per target; then each test runs against every target in
# turn, so that both servers see similar conditions on a machine whose load varies.
run_size() {
  local size=$1 T B W t
  case $size in
    smoke) T=100 B=10 W=1 ;;
    w1) T=20000 B=1000 W=1 ;;
    w4) T=100000 B=1000 W=4 ;;
    storm) T=10000 B=300 W=4 ;;
    *) echo "unknown size $size" >&2; exit 2 ;;
  esac
  local ds="-T $T -B $B -W $W"
  log "== size $size ($T topics x $B brokers, width $W)"
  for t in "${target_list[@]}"; do
    start_server "$t" "$size"
  done
  # shellcheck disable=SC2086
  if [[ $size == storm ]]; then
    for t in "${target_list[@]}"; do bench "$t" "$size" storm-json -w mix $ds -c 16 -p 1; done
    for t in "${target_list[@]}"; do bench "$t" "$size" storm-zlib -w mix $ds -c 16 -p 1 -z; done
  else
    for t in "${target_list[@]}"; do bench "$t" "$size" route-64x1 -w route $ds -c 64 -p 1; done
    for t in "${target_list[@]}"; do bench "$t" "$size" route-64x16 -w route $ds -c 64 -p 16; done
    for t in "${target_list[@]}"; do
      bench "$t" "$size" route-64x16-v317 -w route $ds -c 64 -p 16 -V 317
    done
    local peak
    for t in "${target_list[@]}"; do
      peak=$(peak_rate "$t" "$size" route-64x16)
      if [[ -n $peak && $peak -gt 0 ]]; then
        bench "$t" "$size" route-half-peak -w route $ds -c 64 -p 16 --rate $((peak / 2))
      fi
    done
    for t in "${target_list[@]}"; do bench "$t" "$size" register-json -w register $ds; done
    for t in "${target_list[@]}"; do
      bench "$t" "$size" churn -w churn $ds -c 16 -p 1 --churn-rate 20
    done
  fi
  stop_servers
}

ceiling() {
  ports[echo]=$(free_port)
  "$nsbench" -w serve -a "127.0.0.1:${ports[echo]}" -d $((${duration%.*} + ${warmup%.*} + 20)) \
    2>/dev/null &
  pids[echo]=$!
  sleep 0.3
  bench echo ceiling route-64x16 -w route -T 100 -B 10 -c 64 -p 16
  stop_servers
}

print_table() {
  local tsv=$1 strip='s/^/# /'
  [[ ${2:-0} -eq 1 ]] && strip='s/$/  /'
  {
    echo "nsbench compare: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), kernel $(uname -r)"
    echo "generator and server share the same $(nproc) CPUs; duration ${duration}s, warmup ${warmup}s; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "Java: rocketmq-namesrv $(java_version), $(java -version 2>&1 | head -1), $java_opts"
    echo "rate = responses/s; *_us = latency in microseconds; per_cpu_s = responses per server CPU-second;"
    echo "srv.cpu_pct = server CPU (100 = one core); gen.cpu_pct = nsbench's own CPU"
  } | sed "$strip"
  [[ ${2:-0} -eq 1 ]] && echo
  awk -F'\t' -v md="${2:-0}" '
    { key = $2 "\t" $3 "\t" $4; if (!(key in seen)) { seen[key] = 1; order[++n] = key } v[$1 "\t" key] = $5 }
    END {
      fmt = md ? "| %s | %s | %s | %s | %s | %s |\n" : "%-7s %-17s %-18s %12s %12s %8s\n"
      printf fmt, "size", "test", "metric", "C", "Java", "C/Java"
      if (md) print "|---|---|---|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, "\t")
        c = v["c\t" k]; j = v["java\t" k]; e = v["echo\t" k]
        if (p[1] == "ceiling") { c = e; j = "" }
        r = (c != "" && j != "" && j + 0 != 0) ? sprintf("%.3g", c / j) : "-"
        printf fmt, p[1], p[2], p[3], (c == "" ? "-" : c), (j == "" ? "-" : j), r
      }
    }' "$tsv"
}

# print_summary TSV: one markdown row per (size, test) with the main figures of both servers.
print_summary() {
  awk -F'\t' '
    { key = $2 "\t" $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key } v[$1 "\t" key "\t" $4] = $5 }
    function g(t, k, m) { return ((t "\t" k "\t" m) in v) ? v[t "\t" k "\t" m] : "" }
    function mb(x) { return x == "" ? "-" : sprintf("%.0f", x / 1024) }
    function d(x) { return x == "" ? "-" : x }
    function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.3g", a / b) }
    END {
      print "| size | test | class | C rate/s | Java rate/s | C/Java | C p99 us | Java p99 us | C per CPU-s | Java per CPU-s | C RSS MB | Java RSS MB |"
      print "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, "\t")
        if (p[2] == "startup") {
          printf "| %s | startup | ready ms / idle RSS MB | %s | %s | %s | | | | | %s | %s |\n", p[1],
            d(g("c", k, "ready_ms")), d(g("java", k, "ready_ms")), ratio(g("c", k, "ready_ms"), g("java", k, "ready_ms")),
            mb(g("c", k, "idle_rss_kb")), mb(g("java", k, "idle_rss_kb"))
          continue
        }
        t1 = (p[1] == "ceiling") ? "echo" : "c"
        split("route register churn", cls, " ")
        for (j = 1; j <= 3; j++) {
          c = cls[j]
          if (g(t1, k, c ".rate") == "" && g("java", k, c ".rate") == "") continue
          printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], c,
            d(g(t1, k, c ".rate")), d(g("java", k, c ".rate")), ratio(g(t1, k, c ".rate"), g("java", k, c ".rate")),
            d(g(t1, k, c ".p99_us")), d(g("java", k, c ".p99_us")),
            d(g(t1, k, c ".per_cpu_s")), d(g("java", k, c ".per_cpu_s")),
            mb(g(t1, k, "srv.rss_peak_kb")), mb(g("java", k, "srv.rss_peak_kb"))
        }
      }
    }' "$1"
}

# --table TSV...: only print the table of earlier runs (e.g. a Java run and a C run).
if [[ ${table_only:-0} -eq 1 ]]; then
  cat "${table_files[@]}" >"$out/combined.tsv"
  print_table "$out/combined.tsv" | tee "$out/table.txt"
  print_table "$out/combined.tsv" 1 >"$out/table.md"
  print_summary "$out/combined.tsv" >"$out/summary.md"
  exit 0
fi
: >"$results"

log "results in $out"
IFS=, read -r -a target_list <<<"$targets"
jcp=
[[ ,$targets, == *,java,* ]] && jcp=$(java_classpath)
[[ ,$targets, == *,c,* && ! -x $mqnamesrv ]] && { echo "no $mqnamesrv" >&2; exit 2; }
ceiling
IFS=, read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
  run_size "$size"
done

print_table "$results" | tee "$out/table.txt"
print_table "$results" 1 >"$out/table.md"
print_summary "$results" | tee "$out/summary.md"
