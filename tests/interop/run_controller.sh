#!/usr/bin/env bash
# Interop, issue 24: RocketMQ 5.x automatic master failover (controller mode) on mqnamesrv's
# embedded controller, with real Java 5.5.0 brokers, producer and push consumer; then the same
# scenario on Java's embedded controller, and the failover times of both.
#
# Set-up as an operator would make it: three mqnamesrv with Apache's
# conf/controller/cluster-3n-namesrv-plugin/namesrv-n{0,1,2}.conf (the same keys and shape, an
# XML comment block first; only the ports differ, and each peer its own HOME for its default
# store paths), two brokers of one broker set in the shape of Apache's quick-start
# broker-n{0,1}.conf (brokerId -1, SLAVE, enableControllerMode, allAckInSyncStateSet=true).
#   1  the brokers register with the controllers and elect a master; every NameServer's route
#      shows it and the slave
#   2  a producer sends every 50 ms, a push consumer consumes; kill -9 the master broker: the
#      slave becomes master and every NameServer's route shows it (the failover time), the
#      producer keeps sending, and every message it had acknowledged reaches the consumer
#   3  kill -9 the controller leader (its mqnamesrv): a new leader, the broker carries on
#      (sends go on, the replica info is unchanged); the killed peer comes back and rejoins
#   4  SIGTERM all three and start them again: the state comes back from disk (the same master,
#      epochs and SyncStateSet), the broker carries on
#   5  mqadmin's controller commands against mqnamesrv and against Java: getSyncStateSet,
#      getControllerMetaData, getControllerConfig (outputs compared, addresses and numbers
#      aside)
#   6  faults (controller/ctl_faults.py, fake brokers, three mqcontroller with Apache's
#      cluster-3n-independent controller-n{0,1,2}.conf, their stores on small tmpfs): the leader
#      paused past the election timeout, a minority killed, the leader's disk filled, all
#      restarted: never two masters with one epoch, no acknowledged decision lost, clear log lines
# Java 5.5.0's NameServers with the same files run steps 1-3 (step 3 without the peer's return)
# with their own pair of brokers, once mqnamesrv's part is over; both failover times are
# printed (bench/controller_failover.sh repeats the measurement).
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require java javac mvn python3
it_init controller
TOPIC=CtlTopic
# shellcheck source=tests/interop/controller/ctl_lib.sh
source "$here/controller/ctl_lib.sh"
# failover <label> <prefix> <ns...>: step 2 on one group; sets FAILOVER_MS and NEW_MASTER.
failover() {
    local label=$1 prefix=$2
    shift 2
    local nss=("$@") nslist master slave mb sb t0 ms
    nslist=$(
        IFS=';'
        echo "${nss[*]}"
    )
    master=$(watch master "${nss[0]}" broker-a)
    mb=$(broker_by_addr "$prefix" "$master")
    [[ $mb == "${prefix}0" ]] && sb=${prefix}1 || sb=${prefix}0
    local sp=${sb}_port mpv=${mb}_pid sdir=${sb}_dir
    slave=127.0.0.1:${!sp}
    it_log "$label: master $mb ($master), slave $sb ($slave)"
    # the topic on the master; the slave takes it over with its periodic sync of the master's
    # metadata, which the new master must have (its topics.json on disk says so)
    adm d5 updateTopic -n "$nslist" -c DefaultCluster -t "$TOPIC" -r 4 -w 4
    eventually 60 "$label: the slave has the topic from the master" \
        grep -q "\"$TOPIC\"" "${!sdir}/store/config/topics.json"
    drv d5 consumer "c$label" "$nslist" "G$label" "$TOPIC" -
    drv d5 producer "p$label" "$nslist" "P$label" -
    drv d5 ticker "p$label" "$TOPIC" 50
    sleep 4
    t0=$(now_ms)
    kill -KILL "${!mpv}"
    local watched lost
    if watched=$(watch wait_master_route "$t0" 90 "$slave" broker-a "$TOPIC" "${nss[@]}"); then
        read -r ms lost <<<"$watched"
        it_record pass "$label: the slave became master in every NameServer's route ($ms ms after kill -9 of the master)"
        FAILOVER_MS=$ms
        # mqnamesrv's routes keep the set's topic (its queues on broker-a) while its master
        # changes, polled every 20 ms on every NameServer; Java's may lose it (recorded only)
        it_log "$label: the topic's route while the master changed: $lost"
        [[ $label != ours ]] || it_check "$label: every NameServer answered the topic's route with its queues throughout" \
            test "$lost" = topic_lost=0
    else
        ms=$watched
        it_record fail "$label: the slave became master in every NameServer's route: $ms"
        FAILOVER_MS=none
    fi
    NEW_MASTER=$slave
    sleep 4
    drv d5 tickstop "p$label"
    local ticks=$R
    it_log "$label: producer ticking every 50 ms through the failover: $(head -1 <<<"$ticks")"
    R=$ticks
    has "$label: the producer kept sending through the failover" "ok="
    # The producer's noroute count is recorded, not checked, with either NameServer: between the
    # old master's leaving and the new one's registration the route has no master, and a
    # client polling in that window (every second here) has nothing to send to, which its
    # client library reports as "No route info of this topic". What the NameServer must not do,
    # lose the topic, is checked above.
    drv d5 await_ticks "c$label" "p$label" 90000
    it_log "$label: $(head -1 <<<"$R")"
    local got acked
    read -r got acked < <(sed -n 's#^ticks received \([0-9]*\)/\([0-9]*\).*#\1 \2#p' <<<"$R")
    it_check "$label: every acknowledged message reached the consumer ($got/$acked)" \
        test "${got:-0}" = "${acked:-x}" -a "${acked:-0}" -gt 0
    GAP_MS=$(sed -n 's/.*gap_ms=\([0-9]*\).*/\1/p' <<<"$ticks")
}

# leader_addr <ctl...>: the controller address of the leader (ctl_watch leader prints its id).
leader_index() {
    local id
    id=$(watch leader "$@") || return 1
    echo "${id#n}"
}

drv_start d5 5.x

# ==== mqnamesrv ========================================================================
group_ports o
group_ports j
NS_OURS=("127.0.0.1:$o_p0" "127.0.0.1:$o_p1" "127.0.0.1:$o_p2")
CTL_OURS=("127.0.0.1:$o_c0" "127.0.0.1:$o_c1" "127.0.0.1:$o_c2")
NS_JAVA=("127.0.0.1:$j_p0" "127.0.0.1:$j_p1" "127.0.0.1:$j_p2")
CTL_JAVA=("127.0.0.1:$j_c0" "127.0.0.1:$j_c1" "127.0.0.1:$j_c2")
for i in 0 1 2; do ours_start "$i"; done
# Java's NameServers boot meanwhile: they idle until their brokers come, after step 4.
for i in 0 1 2; do java_start "$i"; done
for i in 0 1 2; do ours_await "$i"; done
eventually 60 "mqnamesrv: the three controllers elect a leader" watch leader "${CTL_OURS[@]}"

# ---- step 6 first: the faults need no JVM (Java's NameServers boot meanwhile) -------------
mkdir -p "$IT_WORK/faults"
if ROCKETMQ_HOME=$IT_ROOT python3 "$here/controller/ctl_faults.py" "$MQNAMESRV_BIN" \
    "$IT_WORK/faults" >"$IT_WORK/faults.log" 2>&1; then
    it_record pass "faults: $(grep -c PASS "$IT_WORK/faults.log") checks (faults.log)"
else
    it_record fail "faults (faults.log):"
    grep -v PASS "$IT_WORK/faults.log" | tail -30 >&2
fi

brokers ob "$(join "${NS_OURS[@]}")" "$(join "${CTL_OURS[@]}")"
eventually 180 "mqnamesrv: a master and a slave of broker-a in every NameServer's route" \
    route_ready "${NS_OURS[@]}"
eventually 60 "mqnamesrv: the slave joins the SyncStateSet" \
    bash -c "python3 '$WATCH' replica ${CTL_OURS[*]} broker-a | grep -q 'sss=[0-9]*,'"
it_log "mqnamesrv: $(watch replica "${CTL_OURS[@]}" broker-a)"
adm d5 getSyncStateSet -a "$(join "${CTL_OURS[@]}")" -b broker-a
OURS_SSS=$R

failover ours ob "${NS_OURS[@]}"
OURS_FAILOVER=$FAILOVER_MS OURS_GAP=$GAP_MS
REPLICA=$(watch replica "${CTL_OURS[@]}" broker-a)
it_check_contains "mqnamesrv: the controller names the new master" "$REPLICA" "master=$NEW_MASTER"

# ---- step 3: the controller leader killed --------------------------------------------
li=$(leader_index "${CTL_OURS[@]}")
pv=ours_pid$li
it_log "mqnamesrv: killing the controller leader n$li (pid ${!pv})"
kill -KILL "${!pv}"
wait "${!pv}" 2>/dev/null || true
others=()
for i in 0 1 2; do [[ $i == "$li" ]] || others+=("127.0.0.1:$(eval echo "\$o_c$i")"); done
eventually 30 "mqnamesrv: a new controller leader among the two left" watch leader "${others[@]}"
drv d5 ticker pours "$TOPIC" 50
sleep 6
drv d5 tickstop pours
it_log "mqnamesrv: sends with the leader gone: $(head -1 <<<"$R")"
has "mqnamesrv: the broker carries on without the old leader (no failed send)" "other=0 "
it_check_same "mqnamesrv: the replica info is unchanged by the new leader" \
    "$(watch replica "${others[@]}" broker-a)" "$REPLICA"
ours_start "$li"
ours_await "$li"
eventually 30 "mqnamesrv: the killed peer rejoins (the three agree on the leader)" \
    watch agree "${CTL_OURS[@]}"

# ---- step 4: all three restarted ---------------------------------------------------
for i in 0 1 2; do ours_stop "$i"; done
for i in 0 1 2; do ours_start "$i"; done
for i in 0 1 2; do ours_await "$i"; done
eventually 60 "mqnamesrv: the restarted controllers elect a leader" watch leader "${CTL_OURS[@]}"
it_check_same "mqnamesrv: after a restart of all three, the state is back from disk" \
    "$(watch replica "${CTL_OURS[@]}" broker-a)" "$REPLICA"
drv d5 producer prest "$(join "${NS_OURS[@]}")" Prest -
drv d5 ticker prest "$TOPIC" 50
sleep 6
drv d5 tickstop prest
it_log "mqnamesrv: sends after the restart: $(head -1 <<<"$R")"
has "mqnamesrv: the broker carries on after the restart (no failed send)" "other=0 "
has "mqnamesrv: the broker carries on after the restart (sends acknowledged)" "ok="
drv d5 await_ticks cours prest 60000
read -r got acked < <(sed -n 's#^ticks received \([0-9]*\)/\([0-9]*\).*#\1 \2#p' <<<"$R")
it_check "mqnamesrv: the messages sent after the restart are consumed ($got/$acked)" \
    test "${got:-0}" = "${acked:-x}"
adm d5 getControllerMetaData -a "${CTL_OURS[0]}"
OURS_META=$R
adm d5 getControllerConfig -a "${CTL_OURS[0]}"
OURS_CONF=$R
# the mqnamesrv part is over: its processes go, so that Java's part has the machine
drv d5 close pours
drv d5 close prest
drv d5 close cours
for b in ob0 ob1; do
    pv=${b}_pid
    kill -KILL "${!pv}" 2>/dev/null || true
done
for i in 0 1 2; do ours_stop "$i"; done

# ==== Java's embedded controller ============================================================
for i in 0 1 2; do java_await "$i"; done
eventually 60 "Java: the three controllers elect a leader" watch leader "${CTL_JAVA[@]}"

brokers jb "$(join "${NS_JAVA[@]}")" "$(join "${CTL_JAVA[@]}")"
eventually 180 "Java: a master and a slave of broker-a in every NameServer's route" \
    route_ready "${NS_JAVA[@]}"
eventually 60 "Java: the slave joins the SyncStateSet" \
    bash -c "python3 '$WATCH' replica ${CTL_JAVA[*]} broker-a | grep -q 'sss=[0-9]*,'"
it_log "Java: $(watch replica "${CTL_JAVA[@]}" broker-a)"

# ---- step 5: mqadmin's controller commands, against both (addresses and numbers aside) ---
# the command's own lines (a first command of the JVM prints more around them)
norm() {
    grep -E '^(#|InSyncReplica|NotInSyncReplica|[A-Za-z]+[: ])' |
        sed -E 's/127\.0\.0\.1:[0-9]+/ADDR/g; s/\bn[0-9]\b/nX/g; s/[0-9]+/N/g'
}
# A broker whose APPLY_BROKER_ID is answered after its 3 s wait (a loaded host: the entry must be
# on a majority's disks first) logs 'fail to apply broker id: N', gives the id up and asks for
# another; the controller had applied N, which stays listed as a replica that is not alive, in
# Java's controller as in ours. Such a line (that id, not alive) is left out of the comparison.
without_abandoned() { # <broker dir prefix> <getSyncStateSet output>
    local out=$2 id ids
    ids=$(grep -hoE 'fail to apply broker id: [0-9]+' \
        "$IT_WORK/$1"*/home/logs/rocketmqlogs/broker.log 2>/dev/null | sed -E 's/.*: //' | sort -u)
    while read -r id; do
        [[ -n $id ]] || continue
        it_log "getSyncStateSet: brokerId=$id of $1* was given up by its broker (apply timed out)"
        out=$(awk -v id="brokerId=$id," '!(/^NotInSyncReplica/ && index($0, id) && /alive=false/)' \
            <<<"$out")
    done <<<"$ids"
    printf '%s\n' "$out"
}
adm d5 getSyncStateSet -a "$(join "${CTL_JAVA[@]}")" -b broker-a
printf '%s\n' "$OURS_SSS" >"$IT_WORK/getSyncStateSet.ours"
printf '%s\n' "$R" >"$IT_WORK/getSyncStateSet.java"
it_check_same "mqadmin getSyncStateSet: the same output from both" \
    "$(without_abandoned ob "$OURS_SSS" | norm)" "$(without_abandoned jb "$R" | norm)"
adm d5 getControllerMetaData -a "${CTL_JAVA[0]}"
printf '%s\n' "$OURS_META" >"$IT_WORK/getControllerMetaData.ours"
printf '%s\n' "$R" >"$IT_WORK/getControllerMetaData.java"
it_check_same "mqadmin getControllerMetaData: the same output from both" \
    "$(norm <<<"$OURS_META" | sort)" "$(norm <<<"$R" | sort)"
conf_keys() { sed -n 's/^\([A-Za-z.<>!-]*\) *=.*/\1/p' | grep -v '^jraft\|^jRaft' | sort -u; }
adm d5 getControllerConfig -a "${CTL_JAVA[0]}"
it_check_same "mqadmin getControllerConfig: the same keys from both" \
    "$(conf_keys <<<"$OURS_CONF")" "$(conf_keys <<<"$R")"

failover java jb "${NS_JAVA[@]}"
JAVA_FAILOVER=$FAILOVER_MS JAVA_GAP=$GAP_MS
li=$(leader_index "${CTL_JAVA[@]}")
pv=java_pid$li
kill -KILL "${!pv}"
others=()
for i in 0 1 2; do [[ $i == "$li" ]] || others+=("127.0.0.1:$(eval echo "\$j_c$i")"); done
eventually 60 "Java: a new controller leader among the two left" watch leader "${others[@]}"

it_log "== failover (master broker killed -> the slave is master in every NameServer's route):"
it_log "   mqnamesrv ${OURS_FAILOVER} ms (longest gap between acknowledged sends ${OURS_GAP} ms)"
it_log "   Java 5.5.0 ${JAVA_FAILOVER} ms (longest gap between acknowledged sends ${JAVA_GAP} ms)"
echo "FAILOVER mqnamesrv_ms=$OURS_FAILOVER java_ms=$JAVA_FAILOVER mqnamesrv_gap_ms=$OURS_GAP java_gap_ms=$JAVA_GAP"
it_finish
