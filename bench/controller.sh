#!/usr/bin/env bash
# The controller's figures for docs/performance.md (issue 24), against Java 5.5.0's in the same
# run. Not a test: nothing here asserts a time. Loopback only; every process is stopped at exit.
#
#   bench/controller.sh [failover [ROUNDS]] [idle [SETS [SECONDS]]] [rps [SECONDS]]
#                                   (default: all three; ROUNDS 3, SETS 100, SECONDS 60 / 10)
#
#   failover  three NameServers with their controllers (Apache's cluster-3n-namesrv-plugin
#             files, ports changed) and two Java 5.5.0 brokers of one set in controller mode:
#             kill -9 the master, time until the slave is master in every NameServer's route;
#             the killed broker comes back as the slave, and again, ROUNDS times; mqnamesrv's
#             group, then Java's
#   idle      one controller (Apache's controller-standalone.conf, port changed): mqcontroller
#             and Java's ControllerStartup; SETS broker sets of two brokers register, elect and
#             heartbeat every second (bench/ctl_idle.py); RSS and CPU time of the controller
#             process over SECONDS after the set-up
#   rps       one controller, mqcontroller pinned to one core (taskset -c 0), ctlbench on the
#             other: requests per second of 904 (oneway heartbeats) and of 1004
#             (CONTROLLER_GET_REPLICA_INFO) for SECONDS each; Java's ControllerStartup alike
#
# Uses the release build (build/release/mqnamesrv, ctlbench), which it builds when missing.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"
it_require java javac mvn python3 taskset
if [[ ! -x $here/build/release/mqnamesrv || ! -x $here/build/release/bench/ctlbench ]]; then
    cmake --preset release -S "$here" >&2
    cmake --build "$here/build/release" --target mqnamesrv ctlbench >&2
fi
export MQNAMESRV_BIN=$here/build/release/mqnamesrv
CTLBENCH=$here/build/release/bench/ctlbench
it_init bench-controller
# shellcheck source=tests/interop/controller/ctl_lib.sh
source "$here/tests/interop/controller/ctl_lib.sh"

phases=()
ROUNDS=3 SETS=100 IDLE_S=60 RPS_S=10
while [[ $# -gt 0 ]]; do
    case $1 in
    failover) phases+=(failover); [[ ${2:-} =~ ^[0-9]+$ ]] && { ROUNDS=$2; shift; } ;;
    idle)
        phases+=(idle)
        [[ ${2:-} =~ ^[0-9]+$ ]] && { SETS=$2; shift; }
        [[ ${2:-} =~ ^[0-9]+$ ]] && { IDLE_S=$2; shift; }
        ;;
    rps) phases+=(rps); [[ ${2:-} =~ ^[0-9]+$ ]] && { RPS_S=$2; shift; } ;;
    *) echo "usage: bench/controller.sh [failover [ROUNDS]] [idle [SETS [SECONDS]]] [rps [SECONDS]]" >&2; exit 2 ;;
    esac
    shift
done
[[ ${#phases[@]} -gt 0 ]] || phases=(failover idle rps)
RESULTS=()
say() {
    it_log "$*"
    RESULTS+=("$*")
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : int((v[NR/2]+v[NR/2+1])/2)}'; }

# ---- failover ---------------------------------------------------------------------------

# rounds <label> <prefix> <ns...>: ROUNDS failovers of broker-a; prints the times.
rounds() {
    local label=$1 prefix=$2
    shift 2
    local nss=("$@") times=() r master mb sb slave t0 ms sp mpv
    for ((r = 1; r <= ROUNDS; r++)); do
        master=$(watch master "${nss[0]}" broker-a)
        mb=$(broker_by_addr "$prefix" "$master")
        [[ $mb == "${prefix}0" ]] && sb=${prefix}1 || sb=${prefix}0
        sp=${sb}_port mpv=${mb}_pid
        slave=127.0.0.1:${!sp}
        t0=$(now_ms)
        kill -KILL "${!mpv}"
        ms=$(watch wait_master "$t0" 90 "$slave" broker-a "${nss[@]}") || ms=none
        it_log "$label round $r: $ms ms"
        times+=("$ms")
        # the killed broker comes back (its store kept, a new port) and joins as the slave
        wait "${!mpv}" 2>/dev/null || true
        it_launch_broker "$mb" 5.x "$(join "${nss[@]}")" \
            "brokerClusterName = DefaultCluster" "brokerName = broker-a" "brokerId = -1" \
            "brokerRole = SLAVE" "deleteWhen = 04" "fileReservedTime = 48" \
            "enableControllerMode = true" "controllerAddr = $CTLS" "namesrvAddr = $(join "${nss[@]}")" \
            "allAckInSyncStateSet=true"
        it_await_broker "$mb"
        it_wait 120 route_ready "${nss[@]}" || { echo "the broker did not come back" >&2; exit 1; }
        it_wait 60 bash -c "python3 '$WATCH' replica ${CTLS//;/ } broker-a | grep -q 'sss=[0-9]*,'" ||
            { echo "the broker did not rejoin the SyncStateSet" >&2; exit 1; }
    done
    say "failover $label: ${times[*]} ms (median $(printf '%s\n' "${times[@]}" | grep -v none | median) ms)"
}

bench_failover() {
    group_ports o
    group_ports j
    local ns=() i
    for i in 0 1 2; do ours_start "$i"; done
    for i in 0 1 2; do ours_await "$i"; done
    ns=("127.0.0.1:$o_p0" "127.0.0.1:$o_p1" "127.0.0.1:$o_p2")
    CTLS=$(join "127.0.0.1:$o_c0" "127.0.0.1:$o_c1" "127.0.0.1:$o_c2")
    brokers ob "$(join "${ns[@]}")" "$CTLS"
    it_wait 180 route_ready "${ns[@]}"
    it_wait 60 bash -c "python3 '$WATCH' replica ${CTLS//;/ } broker-a | grep -q 'sss=[0-9]*,'"
    rounds mqnamesrv ob "${ns[@]}"
    for b in ob0 ob1; do
        pv=${b}_pid
        kill -KILL "${!pv}" 2>/dev/null || true
    done
    for i in 0 1 2; do ours_stop "$i"; done
    for i in 0 1 2; do java_start "$i"; done
    for i in 0 1 2; do java_await "$i"; done
    ns=("127.0.0.1:$j_p0" "127.0.0.1:$j_p1" "127.0.0.1:$j_p2")
    CTLS=$(join "127.0.0.1:$j_c0" "127.0.0.1:$j_c1" "127.0.0.1:$j_c2")
    brokers jb "$(join "${ns[@]}")" "$CTLS"
    it_wait 180 route_ready "${ns[@]}"
    it_wait 60 bash -c "python3 '$WATCH' replica ${CTLS//;/ } broker-a | grep -q 'sss=[0-9]*,'"
    rounds "Java 5.5.0" jb "${ns[@]}"
    for b in jb0 jb1; do
        pv=${b}_pid
        kill -KILL "${!pv}" 2>/dev/null || true
    done
    for i in 0 1 2; do
        pv=java_pid$i
        kill -TERM "${!pv}" 2>/dev/null || true
    done
}

# ---- one controller: mqcontroller or Java's ControllerStartup ------------------------------

# solo_start <ours|java> <port> [taskset cpu]: a one-peer group (controller-standalone.conf);
# sets SOLO_PID.
solo_start() {
    local kind=$1 port=$2 cpu=${3:-} dir=$IT_WORK/solo-$1-$2 cp pin=()
    mkdir -p "$dir"
    [[ -n $cpu ]] && pin=(taskset -c "$cpu")
    cat >"$dir/controller-standalone.conf" <<EOF
# Apache's controller-standalone.conf: only the port differs.

controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:$port
controllerDLegerSelfId = n0
EOF
    if [[ $kind == ours ]]; then
        (cd "$dir" && HOME=$dir ROCKETMQ_HOME=$here exec "${pin[@]}" "$MQNAMESRV_BIN" --controller \
            -c controller-standalone.conf >"$dir/stdout" 2>&1) &
    else
        it_java_home "$dir"
        cp=$(it_classpath 5.x)
        # shellcheck disable=SC2086
        (cd "$dir" && ROCKETMQ_HOME=$dir exec "${pin[@]}" java $IT_JAVA_OPTS -Duser.home="$dir/home" \
            -cp "$cp" org.apache.rocketmq.controller.ControllerStartup \
            -c controller-standalone.conf >"$dir/stdout" 2>&1) &
    fi
    SOLO_PID=$!
    IT_PIDS+=("$SOLO_PID")
    # mqcontroller: "The ControllerManager boot success", Java: "The Controller Server boot success"
    it_wait 120 grep -q "Controller.* boot success" "$dir/stdout" ||
        { tail -20 "$dir/stdout" >&2; echo "the $kind controller did not start" >&2; exit 1; }
    it_wait 60 watch leader "127.0.0.1:$port" || { echo "no leader" >&2; exit 1; }
}

# cpu_s <pid>: user + system CPU seconds of the process.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

bench_idle() {
    local kind port c0 c1
    for kind in ours java; do
        port=$(it_free_port 1)
        solo_start "$kind" "$port"
        python3 "$here/bench/ctl_idle.py" "$SETS" $((IDLE_S + 30)) "127.0.0.1:$port" \
            >"$IT_WORK/idle-$kind.out" 2>&1 &
        local gen=$!
        IT_PIDS+=("$gen")
        it_wait 120 grep -q '^ready' "$IT_WORK/idle-$kind.out" ||
            { cat "$IT_WORK/idle-$kind.out" >&2; exit 1; }
        sleep 10 # past the set-up's own cost
        c0=$(cpu_s "$SOLO_PID")
        sleep "$IDLE_S"
        c1=$(cpu_s "$SOLO_PID")
        say "idle $kind: $SETS sets x 2 brokers heartbeating each second: RSS $(rss_mb "$SOLO_PID") MB," \
            "CPU $(awk -v a="$c0" -v b="$c1" -v s="$IDLE_S" 'BEGIN {printf "%.2f %%", 100 * (b - a) / s}') of one core"
        kill -TERM "$gen" "$SOLO_PID" 2>/dev/null || true
        wait "$gen" "$SOLO_PID" 2>/dev/null || true
    done
}

bench_rps() {
    local kind port code
    for kind in ours java; do
        port=$(it_free_port 1)
        solo_start "$kind" "$port" 0
        for code in 904 1004; do
            say "rps $kind (controller on one core): $(taskset -c 1 "$CTLBENCH" "127.0.0.1:$port" "$code" "$RPS_S" 4 64)"
        done
        kill -TERM "$SOLO_PID" 2>/dev/null || true
        wait "$SOLO_PID" 2>/dev/null || true
    done
}

for p in "${phases[@]}"; do "bench_$p"; done
echo "== bench/controller.sh ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '   %s\n' "${RESULTS[@]}"
