#!/usr/bin/env bash
# The fault soak (issue 23): what does not fit CI's time. Repeats the fault suite
# (tests/faults: disk, fds, clock, stall, network, crash_writes) SOAK_ROUNDS times, then puts a
# real Java broker 5.5.0 in a network namespace in front of mqnamesrv and the Java NameServer
# and, for SOAK_SECONDS, cycles its link through lossy, cut and healed, checking after each
# cycle that the broker was not expired while its link carried packets, that both NameServers
# dropped it while it was cut, and that both list it again once healed. Bounded in time; stops at
# the first failure. Needs root, the debug build and Maven's 5.5.0 artifacts.
#
#   bench/faults_soak.sh                 SOAK_ROUNDS=3 SOAK_SECONDS=600 by default
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out are set by the launchers (printf -v)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${SOAK_ROUNDS:-3}
seconds=${SOAK_SECONDS:-600}
build=$here/build/debug
export MQNAMESRV_BIN=${MQNAMESRV_BIN:-$build/mqnamesrv}
export NSADMIN_BIN=${NSADMIN_BIN:-$build/tools/nsadmin/nsadmin}
export FAULT_PEER=${FAULT_PEER:-$build/tests/fault_peer}
export FAULT_SLOW_FSYNC=${FAULT_SLOW_FSYNC:-$build/tests/libfault_slow_fsync.so}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}

for r in $(seq 1 "$rounds"); do
    for t in disk fds clock stall network; do
        echo "== soak round $r/$rounds: faults.$t"
        "$here/tests/faults/$t.sh" >"$here/build/soak-$t.log" 2>&1 ||
            { tail -40 "$here/build/soak-$t.log"; echo "soak: faults.$t failed in round $r"; exit 1; }
        grep -E '== [a-z]+: ' "$here/build/soak-$t.log" | tail -1
    done
    echo "== soak round $r/$rounds: faults.crash_writes"
    "$build/tests/fault_crash_writes" >"$here/build/soak-crash.log" 2>&1 ||
        { tail -40 "$here/build/soak-crash.log"; echo "soak: crash_writes failed in round $r"; exit 1; }
done

# ---- a real Java broker behind a flaky link ------------------------------------------------
# shellcheck source=tests/faults/lib.sh
source "$here/tests/faults/lib.sh"
# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"
fs_init soak
IT_CACHE=$IT_ROOT/build/interop/cache
mkdir -p "$IT_CACHE"
fs_require java mvn iptables
cp=$(it_classpath 5.x)
fs_netns s
fs_start ns --bind "$FS_HOST_IP" -- --set scanNotActiveBrokerInterval=1000
# The Java NameServer beside it, on the same address.
jdir=$FS_WORK/jns
it_java_home "$jdir"
jport=$(it_free_port 1)
printf 'listenPort=%s\nkvConfigPath=%s/kv.json\nconfigStorePath=%s/ns.conf\n' "$jport" "$jdir" \
    "$jdir" >"$jdir/namesrv.conf"
# shellcheck disable=SC2086
ROCKETMQ_HOME=$jdir java $IT_JAVA_OPTS -Duser.home="$jdir/home" -cp "$cp" \
    org.apache.rocketmq.namesrv.NamesrvStartup -c "$jdir/namesrv.conf" >"$jdir/stdout" 2>&1 &
FS_PIDS+=($!)
it_wait 90 grep -q 'boot success' "$jdir/stdout" || { echo "soak: Java NameServer did not start" >&2; exit 1; }
A=$(fs_addr ns)
J=$FS_HOST_IP:$jport
# The broker, in the namespace, registering with both every 10 s (the shortest period).
bdir=$FS_WORK/broker
it_java_home "$bdir"
{
    echo "brokerClusterName=SoakCluster"
    echo "brokerName=soak-b"
    echo "brokerId=0"
    echo "brokerIP1=$FS_NS_IP"
    echo "listenPort=10911"
    echo "namesrvAddr=$A;$J"
    echo "registerNameServerPeriod=10000"
    echo "storePathRootDir=$bdir/store"
    echo "storePathCommitLog=$bdir/store/commitlog"
    echo "mappedFileSizeCommitLog=67108864"
    echo "mappedFileSizeConsumeQueue=600000"
} >"$bdir/broker.conf"
# shellcheck disable=SC2086
fs_bg "$bdir/stdout" ip netns exec "$FS_NS" env ROCKETMQ_HOME="$bdir" java $IT_JAVA_OPTS \
    $IT_BROKER_JAVA_OPTS -Duser.home="$bdir/home" -cp "$cp" \
    org.apache.rocketmq.broker.BrokerStartup -c "$bdir/broker.conf"
both() {
    fs_has_broker "$A" soak-b && fs_has_broker "$J" soak-b
}
neither() {
    ! fs_has_broker "$A" soak-b && ! fs_has_broker "$J" soak-b
}
fs_eventually 180 "the Java broker in the namespace registers with both NameServers" both
deadline=$((SECONDS + seconds))
cycle=0
while ((SECONDS < deadline)) && [[ $FS_FAIL -eq 0 ]]; do
    cycle=$((cycle + 1))
    ip netns exec "$FS_NS" iptables -A INPUT -m statistic --mode random --probability 0.1 -j DROP
    ip netns exec "$FS_NS" iptables -A OUTPUT -m statistic --mode random --probability 0.1 -j DROP
    sleep 60
    fs_check "cycle $cycle: lossy 60 s, the broker still on both" both
    ip netns exec "$FS_NS" iptables -F
    ip netns exec "$FS_NS" iptables -A INPUT -j DROP
    ip netns exec "$FS_NS" iptables -A OUTPUT -j DROP
    fs_eventually 200 "cycle $cycle: cut, both NameServers drop the broker" neither
    ip netns exec "$FS_NS" iptables -F
    fs_eventually 120 "cycle $cycle: healed, both list it again" both
    fs_eventually 60 "cycle $cycle: they agree" "$NSADMIN_BIN" compareNamesrv -n "$A;$J"
done
fs_check "mqnamesrv expired the broker only behind cuts (once per cycle at most)" \
    fs_ge "$cycle" "$(fs_metric ns 'mqnamesrv_broker_unregistrations_total{reason="expiry"}')"
fs_stop ns
fs_finish
