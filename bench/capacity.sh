#!/usr/bin/env bash
# capacity.sh: how big a cluster one NameServer holds on one core (issue 25; docs/performance.md,
# section Capacity). In one run, for each server (all started at once, loaded one at a time):
#   echo  nsbench's trivial `serve` target (answers every request with a fixed route, does no
#         work): the ceiling of generator + loopback + a server on this core (plaintext only)
#   c     mqnamesrv at its defaults        c1  mqnamesrv with ioThreads=1 (not run by default)
#   java  the Java NameServer 5.5.0 (bench/java/pom.xml; JAVA_OPTS as compare.sh's)
#   rust  rocketmq-rust's NameServer 1.0.0 (plaintext only: it has no TLS)
# a ladder of clusters (bench/nscluster: B brokers of T topics registering every 30 s, C clients
# polling the routes of k Zipf-popular topics every 30 s, broker restarts; time compressed by F)
# doubles B and C from --start. A step fails when the route p99 (client side) is at or over
# --p99-ms, a broker expired (the server closed a registered broker's connection, the audit after
# the run missed one, or the server logged "The broker channel expired"), or any request was
# refused, answered wrongly or lost. A failed step is run once more (--retries) before it counts:
# the machine is shared, and its noise can only fail a step, never pass one. The largest step a
# server passed is the cluster it holds; --refine then runs 1.5x that step when 2x failed. A
# server "keeps up" with a step when nothing expired and nothing failed and it answered at least
# 90 % of the route reads offered, whatever the p99: it climbs the ladder as long as it keeps up
# (so the curve goes past the p99 bound), and leaves at the first step it does not.
# The machine is shared: a run during which other work at normal priority (niced work yields and
# is not counted) took more than --max-others % of the server's core or of the generator's is
# "disturbed" and judges nothing; it is run again, up to --disturbed-tries times, each try first
# waiting (up to --quiet-wait s) for both cores to be that quiet. A server with two disturbed
# steps in a row leaves the ladder. Every run records what else ran on the two cores.
# Each step runs the servers in turn (the same minutes for all). Every server is pinned to
# --srv-cpu with taskset and the generator to --gen-cpu, and is warmed first with route reads
# until its rate stops rising (Java's JIT; compare.sh's rule). Modes: plaintext, then TLS
# (mqnamesrv and Java in their default permissive mode; every connection a full handshake).
#
#   bench/capacity.sh [--targets echo,c,java,rust] [--modes plain,tls] [--start BxC] [--steps N]
#                     [--topics T] [--client-topics K] [--compress F] [--zipf S]
#                     [--restart-every S] [--down S] [--duration S] [--p99-ms MS] [--retries N]
#                     [--no-refine] [--max-others PCT] [--disturbed-tries N] [--quiet-wait S]
#                     [--first-warmup S] [--no-warmup] [--srv-cpu N] [--gen-cpu N] [--no-pin]
#                     [--quick] [--out DIR]
#   bench/capacity.sh [--out DIR] --table results.tsv     (re-print the tables of a run)
#
# Results in --out (default a new /tmp directory): results.tsv (one row per cluster run, with a
# header), warmup.tsv, summary.md (the curve and the capacity per server, per mode) and the log
# of every run. --quick (the bench.capacity ctest): a tiny cluster for a few seconds against
# MQNAMESRV (c only, plaintext and TLS, no pinning, no warm-up) that fails unless every answer
# was valid, registrations and restarts happened and no broker expired; no timing is judged.
# Needs a release build (nsbench, nscluster, mqnamesrv), java and mvn for java, cargo (or the
# cached binary) for rust, openssl for TLS readiness, taskset. Loopback only, every run bounded.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

targets=echo,c,java,rust
modes=plain,tls
start=4x128
steps=8
topics=200
client_topics=10
compress=20
zipf=1
restart_every=3600
down=10
duration=20
cluster_warmup= # nscluster's default: two (compressed) periods
p99_ms=5
retries=1
refine=1
max_others=50
disturbed_tries=3
quiet_wait=120
srv_cpu=1
gen_cpu=0
pin=1
server_warmup=1
first_warmup=30 # warm-up of each server before its first window (compare.sh's)
warm_window=5
max_windows=6
quick=0
out=
targets_set=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --targets) targets=$2; targets_set=1; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --topics) topics=$2; shift 2 ;;
    --client-topics) client_topics=$2; shift 2 ;;
    --compress) compress=$2; shift 2 ;;
    --zipf) zipf=$2; shift 2 ;;
    --restart-every) restart_every=$2; shift 2 ;;
    --down) down=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --p99-ms) p99_ms=$2; shift 2 ;;
    --retries) retries=$2; shift 2 ;;
    --no-refine) refine=0; shift ;;
    --max-others) max_others=$2; shift 2 ;;
    --disturbed-tries) disturbed_tries=$2; shift 2 ;;
    --quiet-wait) quiet_wait=$2; shift 2 ;;
    --first-warmup) first_warmup=$2; shift 2 ;;
    --no-warmup) server_warmup=0; shift ;;
    --srv-cpu) srv_cpu=$2; shift 2 ;;
    --gen-cpu) gen_cpu=$2; shift 2 ;;
    --no-pin) pin=0; shift ;;
    --quick) quick=1; shift ;;
    --out) out=$2; shift 2 ;;
    --table) table_only=1; shift; table_file=$1; break ;;
    -h|--help) sed -n '2,41p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $quick -eq 1 ]]; then
  [[ $targets_set -eq 1 ]] || targets=c
  start=4x16 steps=2 topics=10 client_topics=3 compress=10 restart_every=30 down=3
  duration=4 cluster_warmup=1 retries=0 refine=0 pin=0 server_warmup=0
fi

nsbench=${NSBENCH:-$here/build/release/bench/nsbench}
nscluster=${NSCLUSTER:-$here/build/release/bench/nscluster}
mqnamesrv=${MQNAMESRV:-$here/build/release/mqnamesrv}
java_opts=${JAVA_OPTS:--Xms512m -Xmx512m -XX:+UseG1GC}
EXPIRED_LINE='The broker channel expired'
COLUMNS_TSV="mode target step attempt brokers topics clients client_topics compress offered_reads offered_regs route_rate reg_rate route_p50_us route_p99_us route_p999_us route_max_us reg_p99_us expired log_expired errors bad_answers missing_routes srv_closed_clients conn_errors lost restarts reregs polls_late sched_lag_p99_us srv_cpu_pct srv_rss_peak_kb gen_cpu_pct srv_wait_pct gen_wait_pct srv_core_others_pct gen_core_others_pct srv_core_niced_pct gen_core_niced_pct setup_ms load1 kept verdict reason"

[[ -n $out ]] || out=$(mktemp -d /tmp/nscapacity.XXXXXX)
mkdir -p "$out"
results=$out/results.tsv
work=$(mktemp -d /tmp/nscapacity-srv.XXXXXX)
declare -A pids=() ports=() dirs=()
echo_pid=
run_id=0

# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"

stop_servers() {
  stop_targets
  if [[ -n $echo_pid ]]; then
    stop_pid "$echo_pid"
    echo_pid=
  fi
}

cleanup() {
  stop_servers
  rm -rf "$work"
  if [[ $quick -eq 1 && -z ${keep_out:-} ]]; then rm -rf "$out"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

srv_prefix=()
gen_prefix=()
if [[ $pin -eq 1 ]]; then
  srv_prefix=(taskset -c "$srv_cpu")
  gen_prefix=(taskset -c "$gen_cpu")
fi

# tls_args BINARY: --set tls.config.file= where the build has the key, so that a
# /etc/rocketmq/tls.properties on this machine changes nothing (bench/tls.sh does the same).
tls_args() {
  if "$1" -p 2>/dev/null | grep -q ' tls.config.file='; then
    printf '%s\n' --set tls.config.file=
  fi
}

# start_server TARGET MODE: a server on a free port, pinned (pids, ports, dirs).
start_server() {
  local target=$1 mode=$2 dir port t0 ready
  dir=$(mktemp -d "$work/$target-$mode.XXXX")
  port=$(free_port)
  t0=$(date +%s%N)
  local launch_prefix=("${srv_prefix[@]+"${srv_prefix[@]}"}")
  case $target in
    c | c1)
      local sets
      mapfile -t sets < <(tls_args "$mqnamesrv")
      [[ $target == c1 ]] && sets+=(--set ioThreads=1)
      launch_server "$mqnamesrv" "$dir" "$port" "${sets[@]+"${sets[@]}"}"
      ;;
    java | rust) launch_server "$target" "$dir" "$port" ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
  pids[$target]=$LAUNCHED_PID
  ports[$target]=$port
  dirs[$target]=$dir
  ready=$("$nsbench" -w ready -a "127.0.0.1:$port" --since-ns "$t0" --timeout-ms 60000 \
    --label "$target") || { cat "$dir/server.out" >&2; echo "$target did not start" >&2; exit 1; }
  log "$target ($mode): $ready"
  if [[ $mode == tls ]]; then
    # Java makes its test-mode certificate before it answers; wait until TLS is served.
    local ok=0
    for _ in $(seq 1 100); do
      if timeout 5 openssl s_client -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1; then ok=1; break; fi
      sleep 0.2
    done
    [[ $ok -eq 1 ]] || { echo "$target does not speak TLS" >&2; exit 1; }
  fi
}

# expired_in_log TARGET: how many expiries the server has logged so far.
expired_in_log() {
  local f=${dirs[$1]}/server.out
  [[ $1 == java ]] && f=${dirs[$1]}/logs/rocketmqlogs/namesrv.log
  if [[ -f $f ]]; then grep -c "$EXPIRED_LINE" "$f" || true; else echo 0; fi
}

# warm TARGET MODE: route reads (compare.sh's dataset, 64 x 1) until the rate stops rising: an
# untimed first pass, then windows until one is under 1.03x the best (at least 2).
warm() {
  local target=$1 mode=$2 tls=() best=0 w r rates=""
  [[ $mode == tls ]] && tls=(--tls)
  local args=(-w route -a "127.0.0.1:${ports[$target]}" -T 1000 -B 4 -W 4 -c 64 -p 1
    --label "$target" "${tls[@]+"${tls[@]}"}")
  "${gen_prefix[@]+"${gen_prefix[@]}"}" timeout 900 "$nsbench" "${args[@]}" -d "$first_warmup" --warmup 0 \
    >"$out/warm-$target-$mode-0.log" 2>&1 || log "$target: warm-up pass failed (see $out/warm-$target-$mode-0.log)"
  for w in $(seq 1 "$max_windows"); do
    "${gen_prefix[@]+"${gen_prefix[@]}"}" timeout 900 "$nsbench" "${args[@]}" -d "$warm_window" --warmup 1 \
      --pid "${pids[$target]}" >"$out/warm-$target-$mode-$w.log" 2>&1 || true
    r=$(awk '/^RESULT .*class=route / { for (i = 2; i <= NF; i++) if ($i ~ /^rate=/) { sub(/rate=/, "", $i); print int($i) } }' \
      "$out/warm-$target-$mode-$w.log" | head -1)
    r=${r:-0}
    rates="$rates $r"
    if [[ $r -gt $best ]]; then
      local rising=$((r * 100 > best * 103))
      best=$r
      [[ $w -ge 2 && $rising -eq 0 ]] && break
    elif [[ $w -ge 2 ]]; then
      break
    fi
  done
  log "$target ($mode) warmed: 64 x 1 route windows$rates"
  printf '%s\t%s\t%s\n' "$mode" "$target" "${rates# }" >>"$out/warmup.tsv"
}

# cluster TARGET MODE STEP ATTEMPT BROKERS CLIENTS: one nscluster run; appends its row to the
# results and sets VERDICT (pass or fail) and KEPT (yes or no).
cluster() {
  local target=$1 mode=$2 step=$3 attempt=$4 b=$5 c=$6
  local logf=$out/run-$mode-$target-$step-$attempt.log port pid extra=() e0=0 e1=0
  wait_quiet
  run_id=$((run_id % 254 + 1))
  [[ $mode == tls ]] && extra+=(--tls)
  [[ -n $cluster_warmup ]] && extra+=(--warmup "$cluster_warmup")
  if [[ $target == echo ]]; then
    port=$(free_port)
    "${srv_prefix[@]+"${srv_prefix[@]}"}" "$nsbench" -w serve -a "127.0.0.1:$port" -d 600 \
      >"$work/echo.out" 2>&1 &
    echo_pid=$!
    "$nsbench" -w ready -a "127.0.0.1:$port" --timeout-ms 30000 --label echo >/dev/null
    pid=$echo_pid
    extra+=(--no-verify)
  else
    port=${ports[$target]} pid=${pids[$target]}
    e0=$(expired_in_log "$target")
  fi
  local rc=0
  "${gen_prefix[@]+"${gen_prefix[@]}"}" timeout 900 "$nscluster" -a "127.0.0.1:$port" -B "$b" \
    -T "$topics" -C "$c" -k "$client_topics" -F "$compress" --zipf "$zipf" \
    --restart-every "$restart_every" --down "$down" -d "$duration" --pid "$pid" \
    --label "$target" --run-id "$run_id" "${extra[@]+"${extra[@]}"}" >"$logf" 2>&1 || rc=$?
  if [[ $target == echo ]]; then
    stop_pid "$echo_pid"
    echo_pid=
  else
    sleep 1 # the server takes the scan's and the closed connections' expiry lines to its log
    e1=$(expired_in_log "$target")
  fi
  local load1
  load1=$(cut -d' ' -f1 /proc/loadavg)
  awk -v mode="$mode" -v target="$target" -v step="$step" -v attempt="$attempt" -v b="$b" \
    -v c="$c" -v T="$topics" -v k="$client_topics" -v F="$compress" -v logexp=$((e1 - e0)) \
    -v load1="$load1" -v p99_ms="$p99_ms" -v quick="$quick" -v rc="$rc" -v max_others="$max_others" '
    function val(key) { return (key in f) ? f[key] : "" }
    /^CLUSTER / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } seen = 1 }
    END {
      reason = ""
      if (!seen) reason = "no result (exit " rc ")"
      else if (val("setup") == "failed") reason = "setup failed"
      else {
        if (!quick && val("route_p99_us") + 0 >= p99_ms * 1000) reason = reason sprintf("p99 %.1f ms; ", val("route_p99_us") / 1000)
        if (val("expired") + 0 > 0 || logexp > 0) reason = reason "expired " val("expired") "+" logexp " logged; "
        if (val("errors") + 0 > 0) reason = reason "errors " val("errors") "; "
        if (val("polls") + 0 <= 0 || f["route_rate"] + 0 <= 0) reason = reason "no route answers; "
        if (val("regs") + val("reregs") <= 0) reason = reason "no registrations answered; "
        if (quick && (val("restarts") + 0 <= 0 || val("reregs") + 0 <= 0)) reason = reason "no restart; "
      }
      sub(/; $/, "", reason)
      verdict = reason == "" ? "pass" : "fail"
      offered = c * k * F / 30
      kept = (reason == "" || reason ~ /^p99 [0-9.]+ ms$/) && f["route_rate"] + 0 >= 0.9 * offered ? "yes" : "no"
      if (val("srv_core_others_pct") + 0 > max_others || val("gen_core_others_pct") + 0 > max_others) {
        reason = sprintf("others took %d %% of the server core, %d %% of the generator core%s", val("srv_core_others_pct"), val("gen_core_others_pct"), reason == "" ? "" : "; " reason)
        verdict = "disturbed"; kept = "?"
      }
      n = split("route_rate reg_rate route_p50_us route_p99_us route_p999_us route_max_us reg_p99_us expired", A, " ")
      row = mode "\t" target "\t" step "\t" attempt "\t" b "\t" T "\t" c "\t" k "\t" F "\t" \
            int(c * k * F / 30 + 0.5) "\t" sprintf("%.1f", b * F / 30)
      for (i = 1; i <= n; i++) row = row "\t" val(A[i])
      row = row "\t" logexp
      n = split("errors bad_answers missing_routes srv_closed_clients conn_errors lost restarts reregs polls_late sched_lag_p99_us srv_cpu_pct srv_rss_peak_kb gen_cpu_pct srv_wait_pct gen_wait_pct srv_core_others_pct gen_core_others_pct srv_core_niced_pct gen_core_niced_pct setup_ms", A, " ")
      for (i = 1; i <= n; i++) row = row "\t" val(A[i])
      print row "\t" load1 "\t" kept "\t" verdict "\t" (reason == "" ? "-" : reason)
    }' "$logf" >>"$results"
  log "$mode $target step $step ($b brokers, $c clients) attempt $attempt: $(field route_p99_us) us p99, $(field srv_cpu_pct) % CPU ($(field srv_wait_pct) % waiting for it), $(field srv_rss_peak_kb) kB, $(field route_rate) of $(field offered_reads) reads/s -> $(field verdict) ($(field reason)), kept up: $(field kept)"
  VERDICT=$(field verdict)
  KEPT=$(field kept)
}

# field NAME: the column NAME of the last row of the results.
field() {
  awk -F'\t' -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } END { print $c }' "$results"
}

# normal_busy: the share (%) of the server's and the generator's core that work at normal
# priority (niced work not counted) took over the next 3 s, as "SRV GEN".
normal_busy() {
  local a b
  a=$(grep -E "^cpu($srv_cpu|$gen_cpu) " /proc/stat)
  sleep 3
  b=$(grep -E "^cpu($srv_cpu|$gen_cpu) " /proc/stat)
  paste <(echo "$a") <(echo "$b") | awk -v s="cpu$srv_cpu" '
    { busy = ($13 + $15 + $18 + $19 + $20) - ($2 + $4 + $7 + $8 + $9)
      total = ($13 + $14 + $15 + $16 + $17 + $18 + $19 + $20) - ($2 + $3 + $4 + $5 + $6 + $7 + $8 + $9)
      p[$1 == s ? "s" : "g"] = total > 0 ? int(100 * busy / total) : 0 }
    END { print p["s"] + 0, p["g"] + 0 }'
}

# wait_quiet: when pinned, until the other work at normal priority on both cores is under
# --max-others (bounded by --quiet-wait).
wait_quiet() {
  [[ $pin -eq 1 ]] || return 0
  local waited=0 s g
  read -r s g < <(normal_busy)
  while [[ $s -gt $max_others || $g -gt $max_others ]] && [[ $waited -lt $quiet_wait ]]; do
    sleep 7
    waited=$((waited + 10))
    read -r s g < <(normal_busy)
  done
  [[ $waited -eq 0 ]] || log "waited $waited s for quiet cores (other work now $s % of the server core, $g % of the generator core)"
}

# attempts TARGET MODE STEP BROKERS CLIENTS: the run, up to --retries more if it fails, and up
# to --disturbed-tries more if it was disturbed; sets STEP_PASSED, STEP_KEPT (1 when an attempt
# passed, kept up) and STEP_JUDGED (0 when every attempt was disturbed).
attempts() {
  local a=0 judged=0 disturbed=0
  STEP_PASSED=0 STEP_KEPT=0 STEP_JUDGED=0
  while [[ $judged -le $retries && $disturbed -lt $disturbed_tries ]]; do
    a=$((a + 1))
    cluster "$1" "$2" "$3" "$a" "$4" "$5"
    if [[ $VERDICT == disturbed ]]; then
      disturbed=$((disturbed + 1))
      continue
    fi
    judged=$((judged + 1)) STEP_JUDGED=1
    [[ $KEPT == yes ]] && STEP_KEPT=1
    if [[ $VERDICT == pass ]]; then
      STEP_PASSED=1
      return 0
    fi
  done
}

# ---- tables -----------------------------------------------------------------------------------
print_header() {
  echo "bench/capacity.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), kernel $(uname -r)"
  local pinning="server and generator not pinned"
  [[ $pin -eq 1 ]] && pinning="server pinned to CPU $srv_cpu (taskset), generator to CPU $gen_cpu"
  echo "$pinning; B brokers x $topics topics, C clients x $client_topics topics (Zipf $zipf), time compressed x$compress (period $(awk -v f="$compress" 'BEGIN {print 30000 / f}') ms, expiry $(awk -v f="$compress" 'BEGIN {print 120000 / f}') ms), a restart per broker every $restart_every s and $down s away (real time); ${duration} s measured per run; pass: route p99 < $p99_ms ms, no broker expired, no error"
  echo "Java: rocketmq-namesrv $(java_version), $(java -version 2>&1 | head -1), $java_opts; rust: rocketmq-namesrv $RUST_VERSION (crates.io, release)"
}

# print_summary TSV: per mode, the curve (one row per step: the offered load, then per server
# the route p99, peak RSS and CPU of its best attempt, or why it failed), the cluster each
# server held and kept up with, and what ran out above them.
print_summary() {
  awk -F'\t' '
    NR == 1 { for (i = 1; i <= NF; i++) ix[$i] = i; rank["pass"] = 3; rank["fail"] = 2; rank["disturbed"] = 1; next }
    function v(name) { return $(ix[name]) }
    {
      for (i = 1; i <= NF; i++) R[NR, i] = $i
      key = $1 SUBSEP $2 SUBSEP $3
      # The row shown for a step: a pass, else a failed attempt, else a disturbed one; the latest.
      if (!(key in row) || rank[v("verdict")] >= rank[R[row[key], ix["verdict"]]]) row[key] = NR
      if (v("kept") == "yes") kept[key] = 1
      if (v("verdict") != "disturbed") judged[key] = 1
      if (v("kept") == "yes" && v("offered_reads") + 0 > top["kept", $1, $2] + 0) { top["kept", $1, $2] = v("offered_reads"); topr["kept", $1, $2] = NR }
      if (v("verdict") == "pass" && v("offered_reads") + 0 > top["held", $1, $2] + 0) { top["held", $1, $2] = v("offered_reads"); topr["held", $1, $2] = NR }
      if (!($1 in seenm)) { seenm[$1] = 1; modes[++nm] = $1 }
      if (!(($1 SUBSEP $3) in seens)) { seens[$1 SUBSEP $3] = 1; S[$1, ++ns[$1]] = $3 }
      OFF[$1 SUBSEP $3] = v("offered_reads")
      tg[$1, $2] = 1
    }
    function g(r, name) { return R[r, ix[name]] }
    function ms(us) { return us == "" ? "-" : sprintf("%.2f", us / 1000) }
    function mb(kb) { return kb == "" ? "-" : sprintf("%.0f", kb / 1024) }
    function per_cpu(r) { return g(r, "srv_cpu_pct") + 0 > 0 ? sprintf("%.0f", g(r, "route_rate") * 100 / g(r, "srv_cpu_pct")) : "-" }
    function cap_table(mo, which, title,   j, t, r, rj, rr) {
      print "| server | " title " | route reads/s | registrations/s | p99 ms | RSS MB | server CPU % | reads per server CPU-s | clients / Java | / Rust |"
      print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (j = 1; j <= m; j++) {
        t = T[j]
        if (!((which, mo, t) in topr)) { print "| " t " | none | | | | | | | | |"; continue }
        r = topr[which, mo, t]
        rj = ((which, mo, "java") in topr) ? sprintf("%.1f", g(r, "clients") / g(topr[which, mo, "java"], "clients")) : "-"
        rr = ((which, mo, "rust") in topr) ? sprintf("%.1f", g(r, "clients") / g(topr[which, mo, "rust"], "clients")) : "-"
        printf "| %s | %s, %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t, g(r, "brokers"), g(r, "clients"), g(r, "route_rate"), g(r, "reg_rate"), ms(g(r, "route_p99_us")), mb(g(r, "srv_rss_peak_kb")), g(r, "srv_cpu_pct"), per_cpu(r), rj, rr
      }
    }
    END {
      split("echo c c1 java rust", all, " ")
      for (q = 1; q <= nm; q++) {
        mo = modes[q]; m = 0
        for (i = 1; i <= 5; i++) if ((mo, all[i]) in tg) T[++m] = all[i]
        print ""; print "### " mo; print ""
        h = "| brokers x topics | clients x topics | route reads/s offered | registrations/s offered |"; s = "|---:|---:|---:|---:|"
        for (i = 1; i <= m; i++) { h = h " " T[i] ": p99 ms, RSS MB, CPU % |"; s = s "---|" }
        print h; print s
        n = ns[mo]; delete ord
        for (i = 1; i <= n; i++) ord[i] = S[mo, i]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (OFF[mo SUBSEP ord[j]] + 0 < OFF[mo SUBSEP ord[i]] + 0) { t = ord[i]; ord[i] = ord[j]; ord[j] = t }
        for (i = 1; i <= n; i++) {
          line = ""; size = ""
          for (j = 1; j <= m; j++) {
            k = mo SUBSEP T[j] SUBSEP ord[i]
            if (!(k in row)) { line = line " |"; continue }
            r = row[k]
            size = g(r, "brokers") " x " g(r, "topics") " | " g(r, "clients") " x " g(r, "client_topics") " | " g(r, "offered_reads") " | " g(r, "offered_regs")
            cell = ms(g(r, "route_p99_us")) ", " mb(g(r, "srv_rss_peak_kb")) ", " g(r, "srv_cpu_pct")
            if (g(r, "verdict") == "fail") cell = "**fail** " cell " (" g(r, "reason") (kept[k] ? "" : "; not kept up") ")"
            if (g(r, "verdict") == "disturbed") cell = "disturbed: " cell " (" g(r, "reason") ")"
            line = line " " cell " |"
          }
          print "| " size " |" line
        }
        print ""
        cap_table(mo, "held", "largest cluster held (p99 under the bound, nothing expired, no error): brokers, clients")
        print ""
        cap_table(mo, "kept", "largest cluster kept up with (nothing expired, no error, 90 % of the reads answered; p99 not judged): brokers, clients")
        print ""
        print "| server | first step failed above the one held: brokers, clients, why | first step not kept up with: brokers, clients, reads/s answered of offered | there: server CPU % | its threads waiting for a CPU % | others on its core % | generator CPU % | generator late p99 ms | reads per server CPU-s |"
        print "|---|---|---|---:|---:|---:|---:|---:|---:|"
        for (j = 1; j <= m; j++) {
          t = T[j]; rf = ""; rn = ""
          for (i = 1; i <= n; i++) {
            k = mo SUBSEP t SUBSEP ord[i]
            if (!(k in row)) continue
            if (rf == "" && g(row[k], "verdict") == "fail" && OFF[mo SUBSEP ord[i]] + 0 > top["held", mo, t] + 0) rf = row[k]
            if (rn == "" && judged[k] && !kept[k]) rn = row[k]
          }
          a = rf == "" ? "none: held every step it ran" : g(rf, "brokers") ", " g(rf, "clients") ", " g(rf, "reason")
          b = rn == "" ? "none: kept up with every step it ran" : g(rn, "brokers") ", " g(rn, "clients") ", " g(rn, "route_rate") " of " g(rn, "offered_reads") (g(rn, "reason") == "-" ? "" : " (" g(rn, "reason") ")")
          r = rn != "" ? rn : rf
          if (r == "") { printf "| %s | %s | %s | | | | | | |\n", t, a, b; continue }
          printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t, a, b, g(r, "srv_cpu_pct"), g(r, "srv_wait_pct"), g(r, "srv_core_others_pct"), g(r, "gen_cpu_pct"), ms(g(r, "sched_lag_p99_us")), per_cpu(r)
        }
      }
    }' "$1"
}

if [[ ${table_only:-0} -eq 1 ]]; then
  print_summary "$table_file" | tee "$out/summary.md"
  exit 0
fi

for b in "$nsbench" "$nscluster"; do
  [[ -x $b ]] || { echo "no $b: build the release preset first" >&2; exit 2; }
done
IFS=, read -r -a target_list <<<"$targets"
IFS=, read -r -a mode_list <<<"$modes"
b0=${start%x*} c0=${start#*x}
nofile=$(ulimit -Hn)
jcp=
rbin=
[[ ,$targets, == *,java,* ]] && jcp=$(java_classpath)
[[ ,$targets, == *,rust,* ]] && rbin=$(rust_binary)
[[ ,$targets, == *,c,* || ,$targets, == *,c1,* ]] && [[ ! -x $mqnamesrv ]] && { echo "no $mqnamesrv" >&2; exit 2; }
echo "$COLUMNS_TSV" | tr ' ' '\t' >"$results"
: >"$out/warmup.tsv"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "capacity run: results in $out; load average $load_start"
planned=0 # runs the ladders would make if every server held every step (--quick checks it)

for mode in "${mode_list[@]}"; do
  active=()
  for t in "${target_list[@]}"; do
    if [[ $mode == tls && ($t == echo || $t == rust) ]]; then
      log "$t has no TLS: not in the tls ladder"
      continue
    fi
    active+=("$t")
  done
  planned=$((planned + ${#active[@]} * steps))
  for t in "${active[@]}"; do
    [[ $t == echo ]] || start_server "$t" "$mode"
  done
  if [[ $server_warmup -eq 1 ]]; then
    for t in "${active[@]}"; do
      [[ $t == echo ]] || warm "$t" "$mode"
    done
  fi
  declare -A alive=() last_pass=() unjudged=()
  for t in "${active[@]}"; do alive[$t]=1 unjudged[$t]=0; done
  for step in $(seq 0 $((steps - 1))); do
    b=$((b0 << step)) c=$((c0 << step))
    if [[ $((b + c + 64)) -gt $nofile ]]; then
      log "step $step ($b brokers, $c clients) needs more connections than ulimit -Hn ($nofile): the ladder stops"
      break
    fi
    any=0
    for t in "${active[@]}"; do
      [[ ${alive[$t]} -eq 1 ]] || continue
      any=1
      attempts "$t" "$mode" "$step" "$b" "$c"
      [[ $STEP_PASSED -eq 1 ]] && last_pass[$t]=$step
      if [[ $STEP_JUDGED -eq 0 ]]; then
        unjudged[$t]=$((unjudged[$t] + 1))
        [[ ${unjudged[$t]} -lt 2 ]] || { alive[$t]=0; log "$t: two disturbed steps in a row: leaves the ladder"; }
        continue
      fi
      unjudged[$t]=0
      [[ $STEP_KEPT -eq 1 || $quick -eq 1 ]] || alive[$t]=0
    done
    [[ $any -eq 1 ]] || break
  done
  if [[ $refine -eq 1 ]]; then
    # Between the largest step held and the next one, failed: 1.5x the one held.
    for t in "${active[@]}"; do
      [[ -n ${last_pass[$t]:-} ]] || continue
      s=${last_pass[$t]}
      grep -qP "^$mode\t$t\t$((s + 1))\t" "$results" || continue # 2x never ran
      b=$(((b0 << s) * 3 / 2)) c=$(((c0 << s) * 3 / 2))
      attempts "$t" "$mode" "$s.5" "$b" "$c"
    done
  fi
  stop_servers
  unset alive last_pass unjudged
done

{
  print_header | sed 's/^/# /'
  echo "# load average: $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; per run in results.tsv (load1)"
  print_summary "$results"
} | tee "$out/summary.md"

if [[ $quick -eq 1 ]]; then
  # The smoke check: every run of the ladder was valid (timings are not judged).
  bad=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) ix[$i] = i; next }
    $(ix["verdict"]) != "pass" { print $1 " " $2 " step " $3 ": " $(ix["reason"]) }' "$results")
  runs=$(awk -F'\t' 'NR > 1' "$results" | wc -l)
  if [[ -n $bad || $runs -ne $planned ]]; then
    keep_out=1
    echo "FAIL: $runs runs of $planned; $bad (logs in $out)"
    exit 1
  fi
  echo "capacity --quick: OK ($runs runs)"
fi
