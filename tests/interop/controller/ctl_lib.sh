# shellcheck shell=bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers
# Helpers of the controller suites (tests/interop/run_controller.sh, bench/controller.sh), sourced
# after tests/interop/lib.sh: controller groups of mqnamesrv or of Java's NameServer (three
# peers with Apache's cluster-3n-namesrv-plugin files, only the ports changed), the brokers of
# one broker set in controller mode (Apache's quick-start broker-n0/n1.conf), and what
# controller/ctl_watch.py sees of them.
CTL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WATCH=$CTL_DIR/ctl_watch.py
export WATCH_DIR=$CTL_DIR
watch() { python3 "$WATCH" "$@"; }
now_ms() { date +%s%3N; }

# plugin_conf <selfId> <listenPort> <c0> <c1> <c2>: namesrv-n<selfId>.conf of Apache's
# cluster-3n-namesrv-plugin (its keys, in its order, after an XML comment block).
plugin_conf() {
    cat <<EOF
<!--
  A NameServer with its controller, in the shape of Apache RocketMQ's
  distribution/conf/controller/cluster-3n-namesrv-plugin/namesrv-$1.conf: only the ports differ.
  -->

#Namesrv config
listenPort = $2
enableControllerInNamesrv = true

#controller config
controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:$3;n1-127.0.0.1:$4;n2-127.0.0.1:$5
controllerDLegerSelfId = $1
EOF
}

# group_ports <prefix>: free ports <prefix>_p0..2 (listenPort) and <prefix>_c0..2 (controller).
group_ports() {
    local i
    for i in 0 1 2; do
        printf -v "$1_p$i" '%s' "$(it_free_port 1)"
        printf -v "$1_c$i" '%s' "$(it_free_port 1)"
    done
}

# ours_start <i>: mqnamesrv n<i> with its plugin file, HOME its directory (the default
# controllerStorePath, kvConfigPath and log are under it); kept across restarts.
ours_start() {
    local i=$1 dir=$IT_WORK/ours-n$1
    mkdir -p "$dir"
    local pv=o_p$i
    plugin_conf "n$i" "${!pv}" "$o_c0" "$o_c1" "$o_c2" >"$dir/namesrv-n$i.conf"
    [[ -f $dir/stdout ]] && mv "$dir/stdout" "$dir/stdout.$(date +%s%N)"
    (cd "$dir" && HOME=$dir ROCKETMQ_HOME=$IT_ROOT ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        exec "$MQNAMESRV_BIN" -c "namesrv-n$i.conf" >"$dir/stdout" 2>&1) &
    local pid=$!
    IT_PIDS+=("$pid")
    printf -v "ours_pid$i" '%s' "$pid"
}

ours_await() {
    local dir=$IT_WORK/ours-n$1
    if ! it_wait 60 grep -q "ControllerManager boot success" "$dir/stdout"; then
        tail -30 "$dir/stdout" >&2
        echo "interop: mqnamesrv n$1 did not start" >&2
        exit 1
    fi
}

# ours_stop <i>: SIGTERM; exit 0 without a sanitizer report.
ours_stop() {
    local pv=ours_pid$1 rc=0 dir=$IT_WORK/ours-n$1
    kill -TERM "${!pv}" 2>/dev/null || true
    wait "${!pv}" || rc=$?
    if [[ $rc -ne 0 ]] || grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$dir/stdout"; then
        it_record fail "mqnamesrv n$1 exits 0 and clean on SIGTERM (exit $rc)"
        tail -30 "$dir/stdout" >&2
    else
        it_record pass "mqnamesrv n$1 exits 0 and clean on SIGTERM"
    fi
}

# java_start <i>: Java's NamesrvStartup n<i> with the same file, user.home its directory.
java_start() {
    local i=$1 dir=$IT_WORK/java-n$1 cp
    it_java_home "$dir"
    cp=$(it_classpath 5.x)
    local pv=j_p$i
    plugin_conf "n$i" "${!pv}" "$j_c0" "$j_c1" "$j_c2" >"$dir/namesrv-n$i.conf"
    # shellcheck disable=SC2086
    (cd "$dir" && ROCKETMQ_HOME=$dir exec java $IT_JAVA_OPTS -Duser.home="$dir/home" -cp "$cp" \
        org.apache.rocketmq.namesrv.NamesrvStartup -c "namesrv-n$i.conf" >"$dir/stdout" 2>&1) &
    local pid=$!
    IT_PIDS+=("$pid")
    printf -v "java_pid$i" '%s' "$pid"
}

java_await() {
    local dir=$IT_WORK/java-n$1
    if ! it_wait 300 grep -q "ControllerManager boot success" "$dir/stdout"; then
        tail -30 "$dir/stdout" >&2
        echo "interop: Java NameServer n$1 did not start its controller" >&2
        exit 1
    fi
}

# brokers <prefix> <ns list> <ctl list>: the two brokers of set broker-a, as Apache's
# quick-start broker-n0/n1.conf (it_launch_broker's lines first: ports and store paths).
brokers() {
    local prefix=$1 ns=$2 ctl=$3 b
    for b in 0 1; do
        it_launch_broker "$prefix$b" 5.x "$ns" \
            "brokerClusterName = DefaultCluster" "brokerName = broker-a" "brokerId = -1" \
            "brokerRole = SLAVE" "deleteWhen = 04" "fileReservedTime = 48" \
            "enableControllerMode = true" "controllerAddr = $ctl" "namesrvAddr = $ns" \
            "allAckInSyncStateSet=true"
    done
    it_await_broker "${prefix}0"
    it_await_broker "${prefix}1"
}

# route_ready <ns...>: every NameServer shows a master of broker-a and two addresses.
route_ready() {
    local ns
    for ns in "$@"; do
        [[ $(watch master "$ns" broker-a) != - ]] || return 1
    done
    python3 - "$@" <<'EOF'
import sys, os
sys.path.insert(0, os.environ["WATCH_DIR"])
from ctl_watch import masters
sys.exit(0 if all(len(masters(ns, "broker-a")) == 2 for ns in sys.argv[1:]) else 1)
EOF
}

# pid_of_addr <prefix> <addr>: the pid of the broker of that prefix listening on addr.
broker_by_addr() {
    local prefix=$1 addr=$2 b pv
    for b in 0 1; do
        pv=${prefix}${b}_port
        if [[ $addr == "127.0.0.1:${!pv}" ]]; then
            echo "$prefix$b"
            return
        fi
    done
    echo "?"
}

join() {
    local IFS=';'
    echo "$*"
}
