#!/usr/bin/env bash
# Interop with real RocketMQ Java peers: 5.5.0 and 4.9.7 brokers, mqadmin of 5.5.0 and 4.9.8,
# producers and push consumers of 5.5.0 and 4.9.8, all finding each other only through
# mqnamesrv (build/debug/mqnamesrv, the ASan build).
#
# One cluster serves every scenario: two mqnamesrv (A and B), a 5.x master b5 with its slave
# b5s, and a 4.9.7 master b49, all registered with "A;B". The mqadmin calls and the clients run
# in two long-lived JVMs (tests/interop/java/apps/ItDriver.java, one per artifact set), so a
# call costs milliseconds instead of a JVM start. Order:
#   1  registration (both broker versions, clusterList, the server's log)
#   4  master/slave: route and clusterList show both, the slave learns its master from the
#      REGISTER_BROKER reply (its own log, its HA client)
#   6  kill -9 B; clients keep working through A; B restarted empty on its port
#   2  mqadmin 5.x and 4.9.8, every NameServer subcommand, effects checked
#   3  producer -> push consumer with 5.5.0 and with 4.9.8 clients
#   1  periodic re-registration: the restarted B got every broker back without any restart
#      of theirs; b5 (heartbeat timeout shortened to HB_MS) still listed after HB_MS
#   6  SIGTERM A (must exit 0, ASan clean); clients keep working through B
#   5  SIGTERM b49 (unregisters); kill -STOP b5 (expires after its heartbeatTimeoutMillis,
#      and the slave gets NOTIFY_MIN_BROKER_ID_CHANGE once 318 switched it on); kill -9 b5s
#      (connection closes)
# <name>_port, <name>_pid and <name>_dir are set by lib.sh's launchers (printf -v):
# shellcheck disable=SC2154
set -euo pipefail
# shellcheck source=tests/interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

it_require java javac mvn python3
it_init java

# b5's heartbeat timeout. A 5.x broker puts heartbeatTimeoutMillis in REGISTER_BROKER only with
# enableSlaveActingMaster=true, and then sends brokerNotActiveTimeoutMillis (default 10000);
# it also heartbeats every brokerHeartbeatInterval (1 s), so 8 s leaves room for a slow machine.
HB_MS=8000
# Messages per send; bodies are <prefix>-0 .. <prefix>-(N-1), checked one by one.
N=40
# Brokers re-register every registerNameServerPeriod, clamped by the broker to >= 10000 ms.
PERIOD_MS=10000

# The driver JVMs (drv_start, drv, adm) and the checks on their last reply (has, lacks,
# eventually) live in lib.sh.

# The topicRoute JSON (fastjson's pretty print: bare integer keys, layout varying by version)
# as lines
#   qd <brokerName> r=<read> w=<write> perm=<perm>
#   bd <brokerName> <id>=<addr>[,<id>=<addr>...]
#   order <orderTopicConf>
# or "none" when the reply holds no route.
route_sum() {
    python3 -c '
import json, re, sys
text = sys.stdin.read()
m = re.search(r"^\{$.*?^\}$", text, re.S | re.M)
if not m:
    print("none")
    sys.exit(0)
try:
    r = json.loads(re.sub(r"([{,]\s*)(\d+):", lambda k: "%s\x22%s\x22:" % k.groups(), m.group(0)))
except ValueError as e:
    print("unparsable route (%s):" % e, file=sys.stderr)
    print(text, file=sys.stderr)
    print("unparsable")
    sys.exit(0)
for q in sorted(r.get("queueDatas", []), key=lambda q: q["brokerName"]):
    print("qd %s r=%d w=%d perm=%d" % (q["brokerName"], q["readQueueNums"], q["writeQueueNums"], q["perm"]))
for b in sorted(r.get("brokerDatas", []), key=lambda b: b["brokerName"]):
    addrs = sorted(b["brokerAddrs"].items(), key=lambda kv: int(kv[0]))
    print("bd %s %s" % (b["brokerName"], ",".join("%s=%s" % kv for kv in addrs)))
if "orderTopicConf" in r:
    print("order %s" % r["orderTopicConf"])
' <<<"$R"
}

# route <driver> <namesrv> <topic>: topicRoute, summarized into RS.
route() {
    adm "$1" topicRoute -n "$2" -t "$3"
    RS=$(route_sum)
}

route_has() { it_check_contains "$1" "$RS" "$2"; }

# route_is <driver> <namesrv> <topic> <line>: the route summary has that line.
route_is() {
    route "$1" "$2" "$3"
    grep -qxF -- "$4" <<<"$RS"
}

# route_gone <driver> <namesrv> <topic>: the NameServer answered 17 (no route), not an error.
route_gone() {
    route "$1" "$2" "$3"
    [[ $RS == none ]] && grep -qF "CODE: 17" <<<"$R"
}

# cl_row <brokerName> <brokerId> <addr> [<version>]: the clusterList row of that broker (with
# that version column), or nothing.
cl_row() {
    awk -v n="$1" -v id="$2" -v a="$3" -v v="${4:-}" \
        '$1 == "ItCluster" && $2 == n && $3 == id && $4 == a && (v == "" || $5 == v)' <<<"$R"
}

cl_lists() {
    local what=$1
    shift
    local row
    row=$(cl_row "$@")
    if [[ -n $row ]]; then
        it_record pass "$what"
    else
        it_record fail "$what (no row '$*' in:)"
        printf '%s\n' "$R" | head -20 >&2
    fi
}

# cl_all <driver> <namesrv>: clusterList lists all three brokers.
cl_all() {
    adm "$1" clusterList -n "$2"
    [[ -n $(cl_row b5 0 "$B5") && -n $(cl_row b5 1 "$B5S") && -n $(cl_row b49 0 "$B49") ]]
}

log_has() { grep -qF -- "$2" "$1"; }

log_lacks() { ! grep -qF -- "$2" "$1"; }

# no_line <line> <text>: no line of the text is exactly <line>.
no_line() { ! grep -qxF -- "$1" <<<"$2"; }

# topic_is_order <broker dir> <topic>: the broker persisted the topic with order=true.
topic_is_order() {
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["topicConfigTable"].get(sys.argv[2]); sys.exit(not (t and t["order"]))' \
        "$1/store/config/topics.json" "$2"
}

# logs_have <dir> <text>: some log file of a Java process under <dir>/home has the text.
logs_have() { grep -rqF -- "$2" "$1/home/logs"; }

# ---- start everything -------------------------------------------------------------------

t_start=$SECONDS
# A logs every request (DEBUG): the binary-header clients are checked in its log.
it_start_mqnamesrv nsA --set scanNotActiveBrokerInterval=1000 --set logLevel=DEBUG
# B is restarted on its port later: take one below the ephemeral range (it_free_port), so that
# no outgoing connection can hold it meanwhile.
it_start_mqnamesrv nsB --set scanNotActiveBrokerInterval=1000 --set "listenPort=$(it_free_port 1)"
A=127.0.0.1:$nsA_port
B=127.0.0.1:$nsB_port

common=("registerNameServerPeriod=$PERIOD_MS" "brokerIP2=127.0.0.1")
# Two non-default broker settings widen what real peers exercise: b5 announces topics it creates
# with REGISTER_TOPIC_IN_NAMESRV (217, enableSingleTopicRegister) instead of a one-topic
# REGISTER_BROKER, and b49 sends zlib-compressed REGISTER_BROKER bodies (compressedRegister).
# b5s and the periodic registrations of b5 keep the default JSON REGISTER_BROKER path.
it_launch_broker b5 5.x "$A;$B" "${common[@]}" enableSingleTopicRegister=true \
    enableSlaveActingMaster=true "brokerNotActiveTimeoutMillis=$HB_MS"
it_launch_broker b5s 5.x "$A;$B" "${common[@]}" brokerName=b5 brokerId=1 brokerRole=SLAVE \
    enableSlaveActingMaster=true "brokerNotActiveTimeoutMillis=$HB_MS"
it_launch_broker b49 4.9-broker "$A;$B" "${common[@]}" compressedRegister=true
drv_start d5 5.x
drv_start d49 4.9-client
# Every request of this one carries a ROCKETMQ binary header (RemotingCommand's
# rocketmq.serialize.type), to NameServers and brokers alike.
drv_start dbin 5.x -Drocketmq.serialize.type=ROCKETMQ
B5=127.0.0.1:$b5_port
B5S=127.0.0.1:$b5s_port
B49=127.0.0.1:$b49_port
it_await_broker b5
it_await_broker b5s
it_await_broker b49
it_log "cluster up after $((SECONDS - t_start)) s"

# ---- 1: registration --------------------------------------------------------------------

it_log "-- 1: registration"
# "boot success" does not mean registered: a 5.x broker registers at start only with the
# NameServers its scan thread has already found reachable, else PERIOD_MS later.
eventually $((PERIOD_MS / 1000 + 20)) "all three brokers registered with A" cl_all d5 "$A"
t_b5=$SECONDS
eventually 20 "all three brokers registered with B" cl_all d5 "$B"
adm d5 clusterList -n "$A"
cl_lists "clusterList (5.x) on A lists the 5.x master b5 as V5_5_0" b5 0 "$B5" V5_5_0
cl_lists "clusterList (5.x) on A lists the 4.9.7 master b49 as V4_9_7" b49 0 "$B49" V4_9_7
# (4.9.8's clusterList prints a NullPointerException instead of the row of a 5.x slave, whose
# runtime stats lack getTransferedTps: a tools/broker mismatch, so only masters are checked.)
adm d49 clusterList -n "$B"
cl_lists "clusterList (4.9.8) on B lists b5" b5 0 "$B5" V5_5_0
cl_lists "clusterList (4.9.8) on B lists b49" b49 0 "$B49" V4_9_7
for b in "$B5" "$B49"; do
    it_check "A logs the registration of $b with its HA address" log_has "$nsA_dir/namesrv.log" \
        "new broker registered, BrokerIdentityInfo [clusterName=ItCluster, brokerAddr=$b] HAService: ${b%:*}:$((${b##*:} + 1))"
done

# ---- 4: master and slave ----------------------------------------------------------------

it_log "-- 4: master and slave"
adm d5 clusterList -n "$A"
cl_lists "clusterList lists the slave b5s as b5 id 1" b5 1 "$B5S" V5_5_0
route d5 "$A" b5
route_has "route of topic b5 holds master and slave addresses" "bd b5 0=$B5,1=$B5S"
eventually 10 "route on B holds master and slave too" route_is d5 "$B" b5 "bd b5 0=$B5,1=$B5S"
# A slave without haMasterAddress in its config learns both addresses only from the
# masterAddr/haServerAddr of a REGISTER_BROKER reply (BrokerController.handleRegisterBrokerResult).
# The first one may come before the master registered; the next comes PERIOD_MS later.
B5HA=127.0.0.1:$((b5_port + 1))
eventually 40 "slave logs the master address from the registration reply" \
    logs_have "$b5s_dir" "Update master address from null to $B5"
eventually 10 "slave logs the master HA address from the registration reply" \
    logs_have "$b5s_dir" "update master ha address, OLD: null NEW: $B5HA"
eventually 20 "slave HA client connects to the master's HA port" \
    logs_have "$b5s_dir" "HAClient connect to master $B5HA"

# survives <when> <tag> <x>: one of the two NameServers is gone. The running producer p6 and
# push consumer c6 (both on "A;B") go on, and a new application finds topic T6<x>. Producer
# p6<x> and consumer c6<x> share one client instance (as with the default instance name). Its
# first lookup may go to the dead NameServer: a 5.x client then fails that call and uses the next
# NameServer for the next one, so the send may need a retry (a 5.x push consumer whose first
# lookup fails does not start at all, hence the producer goes first). A new push consumer whose
# first rebalance found no route rebalances again only 20 s later (RebalanceService), and a
# loaded machine adds to that: message waits here allow two minutes and end at the last message.
survives() {
    local when=$1 tag=$2 x=$3
    drv d5 send p6 T6 "$tag" "$N" 3
    has "producer keeps sending $when" "sent $N/$N "
    drv d5 await c6 "$tag" "$N" 120000
    has "consumer keeps receiving $when" "received $N/$N "
    drv d5 producer "p6$x" "$A;$B" "it_p6$x" "f$x"
    drv d5 send "p6$x" "T6$x" fresh "$N" 3
    has "a new producer on A;B finds T6$x $when" "sent $N/$N "
    drv d5 consumer "c6$x" "$A;$B" "it_c6$x" "T6$x" "f$x"
    has "a new consumer on A;B starts $when" "consumer c6$x started"
    drv d5 await "c6$x" fresh "$N" 120000
    has "a new consumer on A;B finds T6$x $when" "received $N/$N "
}

# ---- 6a: kill -9 B, clients keep working through A ---------------------------------------

it_log "-- 6: two NameServers, B killed"
# pollNameServerInterval is 30 s by default: a client whose first lookup went to the dead
# NameServer would retry only then. The clients here poll every second (ItDriver sets it).
adm d5 updateTopic -n "$A" -c ItCluster -t T6 -r 4 -w 4
has "updateTopic T6 on b5" "create topic to $B5 success."
has "updateTopic T6 on b49" "create topic to $B49 success."
for t in T6x T6y; do adm d5 updateTopic -n "$A" -c ItCluster -t "$t" -r 2 -w 2; done
eventually 15 "route of T6 reaches B" route_is d5 "$B" T6 "qd b49 r=4 w=4 perm=6"
eventually 15 "route of T6y reaches B" route_is d5 "$B" T6y "qd b5 r=2 w=2 perm=6"
drv d5 producer p6 "$A;$B" it_p6 -
has "5.5.0 producer on A;B starts" "producer p6 started"
drv d5 consumer c6 "$A;$B" it_c6 T6 -
has "5.5.0 consumer on A;B starts" "consumer c6 started"
drv d5 send p6 T6 before "$N" 1
has "5.5.0 producer on A;B sends $N messages" "sent $N/$N "
drv d5 await c6 before "$N" 120000
has "5.5.0 consumer on A;B receives all $N" "received $N/$N "
kill -KILL "$nsB_pid"
wait "$nsB_pid" 2>/dev/null || true
survives "after B is killed" afterB x
drv d5 close c6x
drv d5 close p6x

# B comes back empty on the same port; only periodic registrations can fill it (checked below).
it_start_mqnamesrv nsB2 --set scanNotActiveBrokerInterval=1000 --set "listenPort=$nsB_port"
t_b2=$SECONDS
# An order-topic config on both NameServers: brokers learn it from the body of the
# REGISTER_BROKER reply (checked below, once they re-registered).
adm d5 updateOrderConf -n "$A;$B" -t T6 -m put -v "b5:4;b49:4"
has "updateOrderConf put T6 on A and the restarted B" "update orderConf success. topic=[T6]"

# ---- 2: mqadmin -------------------------------------------------------------------------

# admin_checks <driver> <tools version> <topic> <broker> <kv namespace> <waitSeconds value>
admin_checks() {
    local d=$1 v=$2 t=$3 bk=$4 ns=$5 wsv=$6
    it_log "-- 2: mqadmin $v"
    adm "$d" updateTopic -n "$A" -c ItCluster -t "$t" -r 3 -w 5
    has "[$v] updateTopic $t created it on b5" "create topic to $B5 success."
    has "[$v] updateTopic $t created it on b49" "create topic to $B49 success."
    eventually 15 "[$v] topicRoute $t: b5 has 3 read / 5 write queues" \
        route_is "$d" "$A" "$t" "qd b5 r=3 w=5 perm=6"
    eventually 15 "[$v] topicRoute $t: b49 has 3 read / 5 write queues" \
        route_is "$d" "$A" "$t" "qd b49 r=3 w=5 perm=6"
    route_has "[$v] topicRoute $t lists b5 with master and slave" "bd b5 0=$B5,1=$B5S"
    route_has "[$v] topicRoute $t lists b49" "bd b49 0=$B49"
    adm "$d" topicList -n "$A"
    it_check "[$v] topicList has $t" grep -qxF "$t" <<<"$R"
    it_check "[$v] topicList has the system topic TBW102" grep -qxF TBW102 <<<"$R"
    adm "$d" topicList -n "$A" -c
    it_check "[$v] topicList -c has ItCluster $t" \
        grep -qE "^ItCluster +$t( |\$)" <<<"$R"

    adm "$d" wipeWritePerm -n "$A" -b "$bk"
    has "[$v] wipeWritePerm $bk reports OK" "wipe write perm of broker[$bk] in name server[$A] OK"
    route "$d" "$A" "$t"
    route_has "[$v] after wipeWritePerm $bk lost write on $t" "qd $bk r=3 w=5 perm=4"
    adm "$d" addWritePerm -n "$A" -b "$bk"
    has "[$v] addWritePerm $bk reports OK" "add write perm of broker[$bk] in name server[$A] OK"
    route "$d" "$A" "$t"
    route_has "[$v] after addWritePerm $bk can write $t again" "qd $bk r=3 w=5 perm=6"

    adm "$d" updateKvConfig -n "$A" -s "$ns" -k k1 -v v1
    has "[$v] updateKvConfig k1 succeeds" "create or update kv config to namespace success."
    adm "$d" updateKvConfig -n "$A" -s "$ns" -k k2 -v "v2 with blanks"
    drv "$d" kvlist "$A" "$ns"
    it_check "[$v] KV list of $ns is k1, k2" [ "$R" = $'k1=v1\nk2=v2 with blanks\n' ]
    adm "$d" deleteKvConfig -n "$A" -s "$ns" -k k1
    has "[$v] deleteKvConfig k1 succeeds" "delete kv config from namespace success."
    drv "$d" kvlist "$A" "$ns"
    it_check "[$v] KV list of $ns is k2 alone" [ "$R" = $'k2=v2 with blanks\n' ]
    it_check "[$v] kvConfig.json holds k2, not k1" \
        python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["configTable"][sys.argv[2]]; sys.exit(t != {"k2": "v2 with blanks"})' \
        "$nsA_dir/kvConfig.json" "$ns"

    adm "$d" updateOrderConf -n "$A" -t "$t" -m put -v "b5:3;b49:3"
    has "[$v] updateOrderConf put" "update orderConf success. topic=[$t], orderConf=[b5:3;b49:3]"
    adm "$d" updateOrderConf -n "$A" -t "$t" -m get
    has "[$v] updateOrderConf get returns it" "get orderConf success. topic=[$t], orderConf=[b5:3;b49:3]"
    route "$d" "$A" "$t"
    it_check "[$v] no orderTopicConf in the route while orderMessageEnable=false" \
        [ "$(grep -c '^order' <<<"$RS")" = 0 ]
    adm "$d" updateNamesrvConfig -n "$A" -k orderMessageEnable -v true
    has "[$v] updateNamesrvConfig orderMessageEnable=true succeeds" "update name server config success!"
    adm "$d" getNamesrvConfig -n "$A"
    it_check "[$v] getNamesrvConfig shows orderMessageEnable = true" \
        grep -qE '^orderMessageEnable +=  true$' <<<"$R"
    route "$d" "$A" "$t"
    route_has "[$v] the route now carries orderTopicConf" "order b5:3;b49:3"
    adm "$d" updateOrderConf -n "$A" -t "$t" -m delete
    has "[$v] updateOrderConf delete" "delete orderConf success. topic=[$t]"
    adm "$d" updateOrderConf -n "$A" -t "$t" -m get
    lacks "[$v] updateOrderConf get finds nothing after delete" "get orderConf success"
    has "[$v] ... because GET_KV_CONFIG answers 22" "CODE: 22"
    route "$d" "$A" "$t"
    it_check "[$v] no orderTopicConf in the route after delete" [ "$(grep -c '^order' <<<"$RS")" = 0 ]
    adm "$d" updateNamesrvConfig -n "$A" -k orderMessageEnable -v false
    adm "$d" updateNamesrvConfig -n "$A" -k waitSecondsForService -v "$wsv"
    has "[$v] updateNamesrvConfig waitSecondsForService succeeds" "update name server config success!"
    adm "$d" updateNamesrvConfig -n "$A" -k kvConfigPath -v /tmp/it-not-allowed
    lacks "[$v] updateNamesrvConfig refuses the blacklisted kvConfigPath" "success"
    adm "$d" getNamesrvConfig -n "$A"
    has "[$v] getNamesrvConfig names A" "============$A============"
    it_check "[$v] getNamesrvConfig shows waitSecondsForService = $wsv" \
        grep -qE "^waitSecondsForService +=  $wsv\$" <<<"$R"
    it_check "[$v] getNamesrvConfig shows orderMessageEnable = false" \
        grep -qE '^orderMessageEnable +=  false$' <<<"$R"
    it_check "[$v] getNamesrvConfig shows kvConfigPath unchanged" \
        grep -qE "^kvConfigPath +=  $nsA_dir/kvConfig.json\$" <<<"$R"
    it_check "[$v] A persisted waitSecondsForService=$wsv" \
        grep -qx "waitSecondsForService=$wsv" "$nsA_dir/namesrv.properties"

    adm "$d" deleteTopic -n "$A" -c ItCluster -t "$t"
    has "[$v] deleteTopic reports the NameServer" "delete topic [$t] from NameServer success."
    route "$d" "$A" "$t"
    it_check "[$v] topicRoute $t after deleteTopic: no route" [ "$RS" = none ]
    has "[$v] ... answered with code 17" "CODE: 17"
    adm "$d" topicList -n "$A"
    it_check "[$v] topicList no longer has $t" no_line "$t" "$R"
    # The brokers deleted it too, so their next registrations must not bring it back.
}

admin_checks d5 5.5.0 T2 b5 ItNs5 31
admin_checks d49 4.9.8 T2o b49 ItNs49 32

# ---- 3: producer and push consumer ------------------------------------------------------

clients() {
    local d=$1 v=$2 t=$3
    it_log "-- 3: clients $v"
    adm "$d" updateTopic -n "$A" -c ItCluster -t "$t" -r 4 -w 4
    eventually 15 "[$v] route of $t on A covers b5" route_is "$d" "$A" "$t" "qd b5 r=4 w=4 perm=6"
    eventually 15 "[$v] route of $t on A covers b49" route_is "$d" "$A" "$t" "qd b49 r=4 w=4 perm=6"
    drv "$d" consumer "c3" "$A" "it_c3_${v//./_}" "$t" -
    has "[$v] push consumer starts with namesrvAddr=A" "consumer c3 started"
    drv "$d" producer "p3" "$A" "it_p3_${v//./_}" -
    has "[$v] producer starts with namesrvAddr=A" "producer p3 started"
    drv "$d" send p3 "$t" "m$v" "$N" 1
    has "[$v] producer sends $N messages, each on the first try" "sent $N/$N retries=0"
    drv "$d" await c3 "m$v" "$N" 120000
    has "[$v] push consumer receives all $N bodies" "received $N/$N "
    has "[$v] ... and nothing else" "unexpected=0"
    drv "$d" close p3
    drv "$d" close c3
}

clients d5 5.5.0 T3
clients d49 4.9.8 T3o
clients dbin 5.5.0-binary T3b
it_check "[5.5.0-binary] A served them in ROCKETMQ binary headers" grep -qE \
    "code=105 \(GET_ROUTEINFO_BY_TOPIC\) opaque=[0-9]+ version=[0-9]+ ROCKETMQ -> 0" "$nsA_dir/namesrv.log"

# ---- 1: periodic re-registration and heartbeats ------------------------------------------

it_log "-- 1: periodic re-registration"
# B2 started empty while every broker was up: each entry in it comes from a periodic
# REGISTER_BROKER over a new connection.
eventually $((PERIOD_MS / 1000 + 15)) "every broker re-registered with the restarted B" \
    cl_all d5 "$B"
for b in "$B5" "$B5S" "$B49"; do
    it_check "restarted B logs the periodic registration of $b" log_has "$nsB2_dir/namesrv.log" \
        "new broker registered, BrokerIdentityInfo [clusterName=ItCluster, brokerAddr=$b]"
done
it_log "restarted B had all brokers $((SECONDS - t_b2)) s after its start"
for b in b5 b49; do
    dv=${b}_dir
    eventually $((PERIOD_MS / 1000 + 10)) \
        "$b marked T6 order=true from a REGISTER_BROKER reply (its topics.json)" \
        topic_is_order "${!dv}" T6
done
# b5 told A to expire it after HB_MS without news; it must still be there well after that.
# (Only a very fast run gets here sooner; then time itself is the condition.)
left=$((HB_MS / 1000 + 2 - (SECONDS - t_b5)))
((left <= 0)) || sleep "$left"
route d5 "$A" b5
route_has "b5 (heartbeat timeout ${HB_MS} ms) is still routed on A $((SECONDS - t_b5)) s after it registered" \
    "bd b5 0=$B5,1=$B5S"
it_check "A expired no broker so far" log_lacks "$nsA_dir/namesrv.log" "The broker channel expired"

# ---- 6b: A stops, clients keep working through the restarted B --------------------------

it_log "-- 6: A stopped"
it_stop_mqnamesrv nsA
survives "after A stopped" afterA y
for c in p6 c6 p6y c6y; do drv d5 close "$c"; done

# ---- 5: broker shutdown, crash, freeze ---------------------------------------------------

it_log "-- 5: broker shutdown, crash and freeze (on B)"
# A 4.9.7 broker spends some seconds in its own shutdown before it sends UNREGISTER_BROKER
# (its remoting servers' NettyEventExecutor stall); the route must go as soon as it does.
kill -TERM "$b49_pid"
t0=$SECONDS
eventually 30 "SIGTERM: b49's route goes when it unregisters" route_gone d5 "$B" b49
it_log "b49 gone after $((SECONDS - t0)) s"
it_check "SIGTERM: b49 unregistered itself (UNREGISTER_BROKER)" log_has "$nsB2_dir/namesrv.log" \
    "unregisterBroker, remove from brokerLiveTable OK, BrokerIdentityInfo [clusterName=ItCluster, brokerAddr=$B49]"
it_check "SIGTERM: ... not through its connection closing" log_lacks "$nsB2_dir/namesrv.log" \
    "the broker's channel destroyed, submit the unregister request at once, broker info: UnRegisterBrokerRequestHeader [brokerName=b49, brokerAddr=$B49,"
wait "$b49_pid" 2>/dev/null || true

# The master b5 freezes while its slave lives on: B expires it after the broker's own heartbeat
# timeout, and, with notifyMinBrokerIdChanged switched on through mqadmin (318), tells the slave
# that it is the group's smallest id now (NOTIFY_MIN_BROKER_ID_CHANGE, 905): the slave's
# AdminBrokerProcessor logs the notice it decoded.
adm d5 updateNamesrvConfig -n "$B" -k notifyMinBrokerIdChanged -v true
has "updateNamesrvConfig notifyMinBrokerIdChanged=true on B" "update name server config success!"
kill -STOP "$b5_pid"
t_stop=$SECONDS
route d5 "$B" b5
route_has "kill -STOP: b5 is still routed while its connection is open" "bd b5 0=$B5,1=$B5S"
eventually $((HB_MS / 1000 + 10)) "kill -STOP: b5 expires within its heartbeat timeout + 10 s" \
    route_is d5 "$B" b5 "bd b5 1=$B5S"
t_gone=$((SECONDS - t_stop))
it_log "b5 expired $t_gone s after SIGSTOP (timeout $HB_MS ms)"
it_check "kill -STOP: ... not before $((HB_MS / 1000 - 1)) s" [ "$t_gone" -ge $((HB_MS / 1000 - 1)) ]
it_check "kill -STOP: expired with the broker's own ${HB_MS} ms timeout" log_has "$nsB2_dir/namesrv.log" \
    "The broker channel expired, BrokerIdentityInfo [clusterName=ItCluster, brokerAddr=$B5] ${HB_MS}ms"
it_check "905: B sends NOTIFY_MIN_BROKER_ID_CHANGE to the slave" log_has "$nsB2_dir/namesrv.log" \
    "min broker id changed to 1, notify [$B5S], offline broker addr $B5"
# AdminBrokerProcessor.notifyMinBrokerIdChange logs "prev" as the broker knew it: its own
# member-group sync may have learned the change first.
eventually 10 "905: the real slave received and decoded it (minBrokerId 1)" \
    grep -rqE -- "min broker id changed, prev [0-9]+, new 1$" "$b5s_dir/home/logs"
kill -KILL "$b5_pid"
kill -CONT "$b5_pid" 2>/dev/null || true
wait "$b5_pid" 2>/dev/null || true

kill -KILL "$b5s_pid"
wait "$b5s_pid" 2>/dev/null || true
t0=$SECONDS
eventually 5 "kill -9: the slave's route goes at once" route_gone d5 "$B" b5
it_log "b5s gone after $((SECONDS - t0)) s"
it_check "kill -9: removed because its connection closed" log_has "$nsB2_dir/namesrv.log" \
    "the broker's channel destroyed, submit the unregister request at once, broker info: UnRegisterBrokerRequestHeader [brokerName=b5, brokerAddr=$B5S, clusterName=ItCluster, brokerId=1]"
adm d5 clusterList -n "$B"
it_check "clusterList on B is empty at the end" [ -z "$(awk '$1 == "ItCluster"' <<<"$R")" ]

it_stop_mqnamesrv nsB2
it_log "run time $((SECONDS - t_start)) s"
it_finish
