# shellcheck shell=bash
# Shared helpers of the fault suite (sourced, not run): tests/faults/<fault>.sh each put
# mqnamesrv under one kind of fault (disk, file descriptors, clocks, stalls, network, crashes)
# and check that it keeps serving, loses nothing it acknowledged, logs one clear line, counts
# the fault in a metric and heals by itself once the fault is gone (issue 23, docs/operations.md,
# Faults). Everything a script creates (processes, tmpfs mounts, network namespaces) is recorded
# and removed on every exit path.
#
#   source tests/faults/lib.sh
#   fs_init <suite>                     work dir, EXIT trap, checks the tools and root
#   fs_start ns1 [--fiu] [--env K=V ...] [--dir D] [--bind A] [-- mqnamesrv args]
#                                       sets ns1_port, ns1_pid, ns1_dir, ns1_metrics (host:port)
#   fs_stop ns1                         SIGTERM: exit 0, no sanitizer report
#   fs_metric ns1 'name{labels}'        prints the value (0 when absent)
#   fs_check "what" <command ...>       counts a check; fs_eventually <s> "what" <command ...>
#   fs_finish                           prints the tally, exits 1 on any failure
#
# Environment (ctest sets them): MQNAMESRV_BIN, NSADMIN_BIN, FAULT_PEER, FAULT_SLOW_FSYNC.

FS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FS_PIDS=()
FS_MOUNTS=()
FS_NETNS=()
FS_PASS=0
FS_FAIL=0
FS_FAILED=()

fs_log() {
    printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# A missing tool or right fails the suite loudly: CI has them, and a silent skip would hide it.
fs_require() {
    local tool missing=()
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "!!!!!!!! FAULTS: missing tools: ${missing[*]} -- these fault tests CANNOT run" >&2
        echo "!!!!!!!! install them (bin/install-deps --test) and run again" >&2
        exit 1
    fi
}

fs_init() {
    FS_SUITE=$1
    [[ $(id -u) -eq 0 ]] || {
        echo "!!!!!!!! FAULTS: $FS_SUITE needs root (tmpfs mounts, network namespaces, prlimit)" >&2
        exit 1
    }
    MQNAMESRV_BIN=${MQNAMESRV_BIN:-$FS_ROOT/build/debug/mqnamesrv}
    NSADMIN_BIN=${NSADMIN_BIN:-$FS_ROOT/build/debug/tools/nsadmin/nsadmin}
    FAULT_PEER=${FAULT_PEER:-$FS_ROOT/build/debug/tests/fault_peer}
    local bin
    for bin in "$MQNAMESRV_BIN" "$NSADMIN_BIN" "$FAULT_PEER"; do
        [[ -x $bin ]] || { echo "faults: no binary at $bin (build first)" >&2; exit 1; }
    done
    fs_require curl ss prlimit mount umount
    FS_WORK=$(mktemp -d "/tmp/mqnamesrv-faults-$FS_SUITE.XXXXXX")
    trap fs_cleanup EXIT
    fs_log "== fault suite $FS_SUITE (work dir $FS_WORK)"
}

fs_cleanup() {
    local pid m ns
    for pid in "${FS_PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    for ns in "${FS_NETNS[@]}"; do
        # Anything still running in it keeps the namespace (and our veth) alive.
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
        ip netns del "$ns" 2>/dev/null || true
    done
    for m in "${FS_MOUNTS[@]}"; do
        umount -l "$m" 2>/dev/null || true
    done
    [[ -n ${FS_KEEP:-} ]] || rm -rf "$FS_WORK"
}

# fs_bg <out file> <command ...>: runs it in the background, stdout and stderr to the file,
# recorded for the cleanup; FS_BG gets its pid. The command must be a program (or exec one):
# the cleanup kills that pid, and a shell function's children would outlive it.
fs_bg() {
    local out=$1
    shift
    "$@" >"$out" 2>&1 &
    FS_BG=$!
    FS_PIDS+=("$FS_BG")
}

# fs_mount_tmpfs <dir> <size>: a small tmpfs of our own (unmounted on exit).
fs_mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2" tmpfs "$1"
    FS_MOUNTS+=("$1")
}

fs_umount() {
    umount "$1"
    local m kept=()
    for m in "${FS_MOUNTS[@]}"; do
        [[ $m == "$1" ]] || kept+=("$m")
    done
    FS_MOUNTS=("${kept[@]}")
}

# fs_fill <dir>: fills the file system of dir (a file named filler) until it is full.
fs_fill() {
    dd if=/dev/zero of="$1/filler" bs=16k status=none 2>/dev/null || true
}

# The sanitizer runtime the server links (ASan or TSan), or nothing for a plain build.
fs_sanitizer_runtime() {
    ldd "$MQNAMESRV_BIN" | awk '/lib(a|t)san\.so/ { print $3 }'
}

# fs_start <name> [--wrap CMD ...] [--fiu] [--env K=V] [--dir D] [--bind ADDR] [-- args]:
# mqnamesrv on an ephemeral port with its files (KV store, -c config file, route snapshot, log)
# in D (default the work dir's <name>), the Prometheus exporter on an ephemeral loopback port.
# --wrap puts a command in front; --fiu runs it under fiu-run -x (fiu-ctrl <pid> then fails
# POSIX calls); --env adds to its environment. Sets
# <name>_port, <name>_pid, <name>_dir, <name>_out (its stdout), <name>_metrics.
fs_start() {
    local name=$1
    shift
    local dir=$FS_WORK/$name bind=127.0.0.1 wrap=() env=()
    while [[ $# -gt 0 ]]; do
        case $1 in
        --wrap) wrap+=("$2"); shift 2 ;;
        --env) env+=("$2"); shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --bind) bind=$2; shift 2 ;;
        --fiu) # fiu-run's POSIX preload; a sanitizer runtime must come first in LD_PRELOAD (its
            # start-up resolves symbols through malloc, which the preload wraps)
            wrap+=(fiu-run -x sh -c "LD_PRELOAD=\"$(fs_sanitizer_runtime) \$LD_PRELOAD\" exec \"\$0\" \"\$@\"")
            shift ;;
        --) shift; break ;;
        *) break ;;
        esac
    done
    mkdir -p "$dir" "$FS_WORK/$name.run"
    local run=$FS_WORK/$name.run
    rm -f "$run/port"
    [[ -f $dir/namesrv.conf ]] || printf '# -c file of %s (318 rewrites it)\n' "$name" >"$dir/namesrv.conf"
    env ROCKETMQ_HOME="$FS_ROOT" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:verify_asan_link_order=0" \
        "${env[@]}" "${wrap[@]}" "$MQNAMESRV_BIN" -c "$dir/namesrv.conf" \
        --set listenPort=0 --set bindAddress="$bind" --set portFile="$run/port" \
        --set kvConfigPath="$dir/kvConfig.json" --set routeSnapshotPath="$dir/routeSnapshot.bin" \
        --set logPath="$dir/namesrv.log" --set metricsExporterType=PROM \
        --set metricsPromExporterPort=0 --set metricsPromExporterHost=127.0.0.1 \
        "$@" >>"$run/stdout" 2>&1 &
    local pid=$!
    FS_PIDS+=("$pid")
    # Generous: under a loaded machine the start (its test-mode TLS key above all) takes long.
    local deadline=$((SECONDS + 120))
    while [[ ! -s $run/port ]] && ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
    done
    local line
    line=$(grep -o 'metrics exporter (Prometheus) listening on [0-9.:]*' "$run/stdout" | tail -1)
    if [[ ! -s $run/port || -z $line ]]; then
        tail -30 "$run/stdout" >&2
        echo "faults: mqnamesrv $name did not start" >&2
        return 1
    fi
    printf -v "${name}_port" '%s' "$(cat "$run/port")"
    printf -v "${name}_host" '%s' "$bind"
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    printf -v "${name}_out" '%s' "$run/stdout"
    line=${line##* }
    printf -v "${name}_metrics" '%s' "${line%:}"
    fs_log "mqnamesrv $name on $bind:$(cat "$run/port") (pid $pid, metrics ${line%:})"
}

# fs_stop <name>: SIGTERM; the server must exit 0 without a sanitizer report.
fs_stop() {
    local pidvar=${1}_pid outvar=${1}_out rc=0
    kill -TERM "${!pidvar}" 2>/dev/null || true
    wait "${!pidvar}" || rc=$?
    if [[ $rc -ne 0 ]] || grep -qE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "${!outvar}"; then
        fs_record fail "mqnamesrv $1 exits 0 and clean on SIGTERM (exit $rc)"
        tail -40 "${!outvar}" >&2
    else
        fs_record pass "mqnamesrv $1 exits 0 and clean on SIGTERM"
    fi
}

# fs_addr <name>: host:port of a server.
fs_addr() {
    local portvar=${1}_port hostvar=${1}_host
    printf '%s:%s' "${!hostvar}" "${!portvar}"
}

# fs_netns <veth prefix>: a network namespace joined to this one by a veth pair, on a /24 of
# 10.231.0.0/16 that no interface here uses yet. Sets FS_NS (its name), FS_NS_HOST_IF (our
# end), FS_NS_IF (its end), FS_HOST_IP (our address) and FS_NS_IP (its). Removed on exit.
fs_netns() {
    local net n
    for n in $(shuf -i 1-250); do
        ip -4 -o addr show | grep -q " 10\.231\.$n\." || { net=$n; break; }
    done
    [[ -n ${net:-} ]] || { echo "faults: no free 10.231.x.0/24" >&2; return 1; }
    FS_NS=fs$1$$
    FS_NS_HOST_IF=${1}h$$
    FS_NS_IF=${1}n$$
    FS_HOST_IP=10.231.$net.1
    FS_NS_IP=10.231.$net.2
    ip netns add "$FS_NS"
    FS_NETNS+=("$FS_NS")
    ip link add "$FS_NS_HOST_IF" type veth peer name "$FS_NS_IF" netns "$FS_NS"
    ip addr add "$FS_HOST_IP/24" dev "$FS_NS_HOST_IF"
    ip link set "$FS_NS_HOST_IF" up
    ip -n "$FS_NS" addr add "$FS_NS_IP/24" dev "$FS_NS_IF"
    ip -n "$FS_NS" link set "$FS_NS_IF" up
    ip -n "$FS_NS" link set lo up
    fs_log "network namespace $FS_NS: $FS_NS_IP, joined by veth to $FS_HOST_IP"
}

# fs_metric <name> '<series{labels}>': its value from /metrics (0 when absent). A scrape that
# fails (a loaded machine, the process at its fd limit) is tried again, up to 3 times.
fs_metric() {
    local mvar=${1}_metrics text="" try
    for try in 1 2 3; do
        text=$(curl -sf --max-time 10 "http://${!mvar}/metrics") && break
        text=""
        sleep "$try"
    done
    awk -v s="$2" '$1 == s { v = $2 } END { print (v == "" ? 0 : v) }' <<<"$text"
}

# fs_metric_ge <name> '<series{labels}>' <n>: the series is at least n (read anew at each call,
# for fs_eventually).
fs_metric_ge() {
    fs_ge "$(fs_metric "$1" "$2")" "$3"
}

# fs_count <file> <fixed string>: lines of file that contain it.
fs_count() {
    grep -cF -- "$2" "$1" 2>/dev/null || true
}

# fs_has_broker <host:port> <broker name>: the NameServer lists the broker (its output is read
# whole first: grep -q on a pipe would end nsadmin early, and pipefail would see its SIGPIPE).
fs_has_broker() {
    local out
    out=$("$NSADMIN_BIN" clusterList -n "$1" --nsOnly 2>/dev/null) || return 1
    grep -qw -- "$2" <<<"$out"
}

fs_record() {
    local verdict=$1
    shift
    if [[ $verdict == pass ]]; then
        FS_PASS=$((FS_PASS + 1))
        fs_log "PASS: $*"
    else
        FS_FAIL=$((FS_FAIL + 1))
        FS_FAILED+=("$*")
        fs_log "FAIL: $*"
    fi
}

# fs_check "what" <command ...>: passes when the command exits 0.
fs_check() {
    local what=$1
    shift
    if "$@"; then fs_record pass "$what"; else fs_record fail "$what"; fi
}

# fs_eventually <seconds> "what" <command ...>: passes once the command exits 0 (every 0.2 s).
fs_eventually() {
    local secs=$1 what=$2
    shift 2
    local deadline=$((SECONDS + secs))
    while ((SECONDS < deadline)); do
        if "$@" >/dev/null 2>&1; then
            fs_record pass "$what"
            return 0
        fi
        sleep 0.2
    done
    fs_record fail "$what (not within $secs s)"
}

# fs_ge <a> <b>: a >= b (numbers, maybe with a fraction: Prometheus prints 1 or 1.0).
fs_ge() {
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

fs_finish() {
    fs_log "== $FS_SUITE: $FS_PASS passed, $FS_FAIL failed"
    local f
    for f in "${FS_FAILED[@]}"; do
        fs_log "   failed: $f"
    done
    [[ $FS_FAIL -eq 0 ]]
}
