#!/usr/bin/env bash
# nsadmin.sh: wall time and peak memory of one admin command, nsadmin against mqadmin, on the
# same small cluster: a Java NameServer (rocketmq-namesrv 5.5.0) and mqnamesrv with one real
# 5.5.0 broker registered with both (tests/interop/lib.sh starts them). Each run is a whole
# process, start-up included, timed by /usr/bin/time; nsadmin and mqadmin run in turn
# (A B A B ...) so that a change in the machine's load hits both alike. Prints the median,
# min and max of each and the median ratio.
#
#   bench/nsadmin.sh [--runs N] [--command 'clusterList']
#
# mqadmin runs as RocketMQ's bin/tools.sh starts it (-server -Xms1g -Xmx1g -Xmn256m
# -XX:MetaspaceSize=128m -XX:MaxMetaspaceSize=128m, override with MQADMIN_JAVA_OPTS); both
# ask the broker for its statistics, as clusterList does. Needs a release build
# (cmake --preset release && cmake --build build/release), java and mvn.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=10
command=clusterList
while [[ $# -gt 0 ]]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --command) command=$2; shift 2 ;;
    *) echo "usage: bench/nsadmin.sh [--runs N] [--command 'clusterList']" >&2; exit 2 ;;
    esac
done
NSADMIN=$here/build/release/tools/nsadmin/nsadmin
export MQNAMESRV_BIN=$here/build/release/mqnamesrv
[[ -x $NSADMIN && -x $MQNAMESRV_BIN ]] || { echo "build the release preset first" >&2; exit 1; }
MQADMIN_JAVA_OPTS=${MQADMIN_JAVA_OPTS:--server -Xms1g -Xmx1g -Xmn256m -XX:MetaspaceSize=128m -XX:MaxMetaspaceSize=128m}

# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"
it_init bench-nsadmin
it_start_java_namesrv jns 5.x
it_start_mqnamesrv cns
# shellcheck disable=SC2154 # set by the lib.sh launchers
J=127.0.0.1:$jns_port C=127.0.0.1:$cns_port
it_start_broker b1 5.x "$J;$C"
it_wait 60 sh -c "'$NSADMIN' clusterList -n '$J' --nsOnly | grep -q b1"
it_wait 60 sh -c "'$NSADMIN' clusterList -n '$C' --nsOnly | grep -q b1"
cp=$(it_classpath 5.x)
it_java_home "$IT_WORK/mqadmin"

# one <file> <command...>: appends "wall_seconds max_rss_kib" of one run to file.
one() {
    local file=$1
    shift
    /usr/bin/time -f '%e %M' -a -o "$file" "$@" >/dev/null 2>&1 || true
}

read -r -a words <<<"$command"
for ns in "$J" "$C"; do
    n=$IT_WORK/nsadmin-$ns.txt m=$IT_WORK/mqadmin-$ns.txt
    : >"$n"
    : >"$m"
    for ((i = 0; i < runs + 1; i++)); do # the first pair warms the page cache, not counted
        [[ $i -eq 1 ]] && { : >"$n"; : >"$m"; }
        one "$n" "$NSADMIN" "${words[@]}" -n "$ns"
        # shellcheck disable=SC2086
        ROCKETMQ_HOME=$IT_WORK/mqadmin one "$m" java $MQADMIN_JAVA_OPTS \
            -Duser.home="$IT_WORK/mqadmin/home" -cp "$cp" \
            org.apache.rocketmq.tools.command.MQAdminStartup "${words[@]}" -n "$ns"
    done
    python3 - "$n" "$m" "$ns" "$command" <<'EOF'
import statistics, sys
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip() and l[0].isdigit()]
    return [r[0] for r in rows], [r[1] / 1024 for r in rows]
nw, nm = load(sys.argv[1])
mw, mm = load(sys.argv[2])
print("%s against %s, %d runs each (wall s: median [min-max]; peak RSS MiB: median)" % (sys.argv[4], sys.argv[3], len(nw)))
for name, w, m in (("nsadmin", nw, nm), ("mqadmin", mw, mm)):
    print("  %-8s %8.3f [%.3f-%.3f]  %7.1f" % (name, statistics.median(w), min(w), max(w), statistics.median(m)))
print("  mqadmin / nsadmin wall: %.0fx" % (statistics.median(mw) / statistics.median(nw)))
EOF
done
it_finish >/dev/null
