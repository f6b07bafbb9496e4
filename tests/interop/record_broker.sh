#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Records real RocketMQ traffic into replayable traces (tests/interop/traces/1*_recorded_*.jsonl).
# Not part of the test run: its output is committed data. A recording proxy (replay.py record)
# sits between the peers and a Java NameServer and writes every request frame it forwards as a
# trace step, the Java reply's code and remark as a comment, and probe steps (cluster info and
# topic list after each registration; a bounded poll after each close).
#
#   tests/interop/record_broker.sh 5.x     5.5.0 master + slave (acting-master mode on the
#                                          slave), their periodic registrations, a topic created
#                                          with mqadmin, mqadmin queries, graceful shutdown
#   tests/interop/record_broker.sh 4.9     4.9.7 master with compressedRegister=true (zlib
#                                          bodies with a real CRC), shutdown
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"
it_require java mvn python3
which=${1:?usage: record_broker.sh 5.x|4.9}
it_init "record-$which"
rec=$IT_WORK/rec
mkdir -p "$rec"

it_start_java_namesrv jns 5.x
python3 "$here/replay.py" record --upstream "127.0.0.1:$jns_port" --listen "master:$rec/master.port" \
    --listen "slave:$rec/slave.port" --listen "tool:$rec/tool.port" --out "$rec/steps.jsonl" \
    --stop-file "$rec/stop" --max-seconds 900 >"$rec/recorder.log" 2>&1 &
IT_PIDS+=("$!")
rec_pid=$!
it_wait 10 test -s "$rec/tool.port" || { echo "recorder did not start" >&2; exit 1; }
mport=$(cat "$rec/master.port") sport=$(cat "$rec/slave.port") tport=$(cat "$rec/tool.port")

stop_broker() { # graceful: the shutdown hook sends UNREGISTER_BROKER
    local pidvar=${1}_pid
    kill -TERM "${!pidvar}"
    wait "${!pidvar}" 2>/dev/null || true
}

case $which in
5.x)
    it_start_broker recm 5.x "127.0.0.1:$mport" brokerClusterName=RecCluster brokerName=rec-5 \
        registerNameServerPeriod=10000
    it_start_broker recs 5.x "127.0.0.1:$sport" brokerClusterName=RecCluster brokerName=rec-5 \
        brokerId=1 brokerRole=SLAVE registerNameServerPeriod=10000 enableSlaveActingMaster=true \
        compatibleWithOldNameSrv=false
    it_mqadmin 5.x updateTopic -n "127.0.0.1:$tport" -b "127.0.0.1:$recm_port" -t RecTopic -r 3 -w 3
    it_mqadmin 5.x updateOrderConf -n "127.0.0.1:$tport" -t RecTopic -v "rec-5:3" -m put
    it_mqadmin 5.x clusterList -n "127.0.0.1:$tport"
    it_mqadmin 5.x topicRoute -n "127.0.0.1:$tport" -t RecTopic
    it_mqadmin 5.x topicList -n "127.0.0.1:$tport"
    it_mqadmin 5.x updateOrderConf -n "127.0.0.1:$tport" -t RecTopic -m delete
    it_mqadmin 5.x getNamesrvConfig -n "127.0.0.1:$tport"
    sleep 12 # one periodic re-registration of each broker
    stop_broker recs
    stop_broker recm
    out=$here/traces/10_recorded_broker_5x.jsonl
    what="a RocketMQ 5.5.0 master (rec-5, id 0) and slave (id 1, enableSlaveActingMaster=true,
# compatibleWithOldNameSrv=false), registerNameServerPeriod=10000, in cluster RecCluster; mqadmin
# 5.5.0 updateTopic (-b, so the master sends a one-topic registration), updateOrderConf put and
# delete, clusterList, topicRoute, topicList, getNamesrvConfig; then SIGTERM to the slave and the
# master (graceful shutdown: UNREGISTER_BROKER, then close)"
    ;;
4.9)
    # (lib.sh opens the JDK packages a 4.9.x shutdown hook needs to send UNREGISTER_BROKER)
    it_start_broker rec49 4.9-broker "127.0.0.1:$mport" brokerClusterName=RecCluster49 \
        brokerName=rec-49 compressedRegister=true registerNameServerPeriod=10000
    sleep 12
    stop_broker rec49
    out=$here/traces/11_recorded_broker_49.jsonl
    what="a RocketMQ 4.9.7 master (rec-49, cluster RecCluster49) with compressedRegister=true
# (zlib bodies, bodyCrc32) and registerNameServerPeriod=10000; then SIGTERM (UNREGISTER_BROKER)"
    ;;
*)
    echo "usage: record_broker.sh 5.x|4.9" >&2
    exit 1
    ;;
esac

touch "$rec/stop"
wait "$rec_pid" || true
{
    echo "# RECORDED traffic (data, not code), made by tests/interop/record_broker.sh $which on $(date -u +%Y-%m-%d):"
    echo "# $what."
    echo "# The real peers talked to a Java 5.5.0 NameServer through the recording proxy of replay.py;"
    echo "# every request frame is a step (header fields and body as sent; opaques are re-numbered on"
    echo "# replay), '# ... reply' comments are the Java answers at recording time, and steps on the"
    echo "# connection 'probe' were added by the recorder. Broker addresses are the ports of that run;"
    echo "# the NameServer never connects to them, so they need no normalisation."
    cat "$rec/steps.jsonl"
} >"$out"
it_log "wrote $out ($(grep -c '^{' "$out") steps)"
