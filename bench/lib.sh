# Shared by bench/compare.sh, bench/capacity.sh and bench/tls.sh (sourced; they set `here`,
# `out` and `nsbench`, and cg_server_args for the callgrind run).
# shellcheck shell=bash disable=SC2154

# The rocketmq-rust NameServer the comparisons run: a pinned crates.io release, built once into
# a cache outside the tree (RUST_NAMESRV_ROOT moves it).
RUST_VERSION=1.0.0
rust_root=${RUST_NAMESRV_ROOT:-$HOME/.cache/mqnamesrv-bench/rocketmq-namesrv-$RUST_VERSION}
rust_bin=$rust_root/bin/rocketmq-namesrv-rust

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# free_port: a loopback port nobody listens on (below the ephemeral range, 32768+ here).
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((10000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "no free port" >&2
  exit 1
}

# java_classpath: the Java NameServer's class path, resolved once with Maven (bench/java/pom.xml).
java_classpath() {
  local cp=$here/build/java-namesrv.classpath
  if [[ ! -s $cp ]]; then
    log "resolving the Java NameServer with Maven (bench/java/pom.xml)"
    mvn -q -B -f "$here/bench/java/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$cp" >"$out/mvn.log" 2>&1 || { cat "$out/mvn.log" >&2; exit 1; }
  fi
  cat "$cp"
}

# callgrind_route_cost DIR COPY BIN [nsbench options]: the docs/performance.md method. BIN runs
# under callgrind with instrumentation off (server options from the array cg_server_args, which
# may be empty), on for 8 s of route reads (16 x 4, 20,000 topics on 200 brokers, width 4), its
# profile copied to COPY. Prints "TOTAL CALLS PER": the instructions, the requests served (calls
# of ns_proc_dispatch and of the fast path ns_proc_route_fast: every request of this load takes
# one or the other) and their ratio. A caller that defines bench_track_pid gets the server's pid.
callgrind_route_cost() {
  local dir=$1 copy=$2 bin=$3 port pid bp total calls per
  shift 3
  mkdir -p "$dir"
  port=$(free_port)
  ROCKETMQ_HOME=$dir valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/cg.out" \
    "$bin" --set listenPort="$port" --set bindAddress=127.0.0.1 --set "kvConfigPath=$dir/kv.json" \
    --set "configStorePath=$dir/ns.properties" --set logPath= --set ioThreads=1 \
    "${cg_server_args[@]+"${cg_server_args[@]}"}" >"$dir/server.out" 2>&1 &
  pid=$!
  if declare -F bench_track_pid >/dev/null; then bench_track_pid "$pid"; fi
  "$nsbench" -w ready -a "127.0.0.1:$port" --timeout-ms 120000 --label cg >/dev/null
  "$nsbench" -w route -a "127.0.0.1:$port" -T 20000 -B 200 -W 4 -c 16 -p 4 -d 14 --warmup 3 \
    "$@" >"$dir/bench.out" 2>&1 &
  bp=$!
  for _ in $(seq 1 600); do
    grep -q '^SETUP' "$dir/bench.out" && break
    sleep 0.2
  done
  sleep 1
  callgrind_control -i on "$pid" >/dev/null 2>&1
  sleep 8
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  wait "$bp" || true
  kill -TERM "$pid"
  wait "$pid" || true
  local dumps=("$dir"/cg.out.*)
  cp "${dumps[0]}" "$copy"
  # (From another directory: where the sources are found, callgrind_annotate drops the callers
  # of functions it annotates.)
  total=$(cd / && callgrind_annotate "$copy" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  calls=$(cd / && callgrind_annotate --tree=caller "$copy" 2>/dev/null | awk '
    /^ *[0-9,]+ .*< .*\(([0-9,]+)x\)/ { l[++n] = $0 }
    /\* .*:(ns_proc_dispatch|ns_proc_route_fast) / {
      f = ($0 ~ /ns_proc_dispatch/) ? "d" : "f"
      if (!(f in done)) for (i = 1; i <= n; i++) { m = l[i]; sub(/.*\(/, "", m); sub(/x\).*/, "", m); gsub(",", "", m); s += m }
      done[f] = 1 }
    /^ *$/ { n = 0 }
    END { print s + 0 }')
  per=$(awk -v t="$total" -v c="$calls" 'BEGIN {if (c > 0) printf "%d", t / c; else print "-"}')
  echo "$total $calls $per"
}

# stop_pid PID: TERM, up to 5 s for it to go, then KILL; reaps it.
stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# stop_targets: stops (stop_pid) every server of the caller's associative array pids
# (TARGET -> pid) and empties it.
stop_targets() {
  local t
  for t in "${!pids[@]}"; do
    stop_pid "${pids[$t]}"
    unset "pids[$t]"
  done
}

java_version() {
  sed -n 's:.*<rocketmq.version>\(.*\)</rocketmq.version>.*:\1:p' "$here/bench/java/pom.xml"
}

# rust_binary: the rocketmq-rust NameServer, built with cargo into the cache when missing
# (crates.io downloads; its search API is not needed: the version is pinned). Prints its path.
rust_binary() {
  if [[ ! -x $rust_bin ]]; then
    command -v cargo >/dev/null || { echo "rust target: no cargo to build rocketmq-namesrv $RUST_VERSION" >&2; exit 2; }
    log "building rocketmq-namesrv $RUST_VERSION (cargo install, release) into $rust_root"
    nice cargo install --locked --root "$rust_root" rocketmq-namesrv --version "$RUST_VERSION" \
      >"$out/cargo.log" 2>&1 || { tail -30 "$out/cargo.log" >&2; exit 1; }
  fi
  echo "$rust_bin"
}

# launch_server KIND DIR PORT [OPTION...]: starts a NameServer in the background on
# 127.0.0.1:PORT, its files and its output (DIR/server.out) in DIR, and sets LAUNCHED_PID (the
# server's own pid: every wrapper execs). KIND: java (classpath in jcp, JVM options in
# java_opts; its log is DIR/logs/rocketmqlogs/namesrv.log), rust (binary in rbin; its log goes
# to server.out) or the path of an mqnamesrv binary (the OPTIONs, e.g. --set ioThreads=1, follow
# its loopback defaults; its log goes to server.out). The words of the array launch_prefix, when
# set, go in front of the server (e.g. taskset -c 1).
launch_server() {
  local kind=$1 dir=$2 port=$3
  shift 3
  local pre=("${launch_prefix[@]+"${launch_prefix[@]}"}")
  case $kind in
    java)
      echo "listenPort=$port" >"$dir/namesrv.conf"
      # shellcheck disable=SC2086
      (cd "$dir" && ROCKETMQ_HOME=$dir exec "${pre[@]+"${pre[@]}"}" java $java_opts \
        -Duser.home="$dir" -cp "$jcp" org.apache.rocketmq.namesrv.NamesrvStartup \
        -c "$dir/namesrv.conf" >"$dir/server.out" 2>&1) &
      ;;
    rust)
      # Its INFO log (a line per registered topic) goes to a file, as Java's does.
      (cd "$dir" && exec "${pre[@]+"${pre[@]}"}" "$rbin" --listenPort "$port" \
        --bindAddress 127.0.0.1 --rocketmqHome "$dir" --kvConfigPath "$dir/kvConfig.json" \
        >"$dir/server.out" 2>&1) &
      ;;
    *)
      ROCKETMQ_HOME=$dir "${pre[@]+"${pre[@]}"}" "$kind" --set listenPort="$port" \
        --set bindAddress=127.0.0.1 --set "kvConfigPath=$dir/kvConfig.json" \
        --set "configStorePath=$dir/namesrv.properties" --set logPath= "$@" \
        >"$dir/server.out" 2>&1 &
      ;;
  esac
  # shellcheck disable=SC2034 # the caller reads it
  LAUNCHED_PID=$!
}
