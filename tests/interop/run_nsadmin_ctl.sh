#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Interop of nsadmin's controller commands (build/debug/tools/nsadmin/nsadmin, the ASan build)
# with mqadmin 5.5.0's, run against the same controller and compared byte for byte (blank lines
# included: mqadmin's controller reports begin with one):
#   getControllerMetaData; getSyncStateSet -b, -c (names from the NameServer), a list for -a;
#   getControllerConfig (modulo line order: mqadmin prints Java hash order);
#   updateControllerConfig; electMaster; cleanBrokerMetadata; and each refusal (the same code
#   and remark from the controller, nothing on stdout), mqadmin's own usage check.
# The controller's state comes from fake brokers of one broker set (controller/ctl_brokers.py:
# ids 1 and 2 alive and in sync, 3 and 4 registered but silent, registered with the NameServer
# too). Figures that legitimately differ between two runs are masked: an election's new master
# and epochs differ between mqadmin's election and nsadmin's (each is checked against the
# controller's state read right after it).
#
# electMaster: Java 5.5.0's controller writes its answer's map keys bare ({1:"addr"}), which
# its own mqadmin fails to read ("not support unquoted name", docs/compatibility.md): against
# it, mqadmin's failure is checked, and mqadmin's successful output is taken through
# controller/quote_relay.py, which quotes the keys (what mqnamesrv's controller sends).
#
#   tests/interop/run_nsadmin_ctl.sh          one Java 5.5.0 NameServer with its embedded
#                                             controller (enableControllerInNamesrv=true)
#   tests/interop/run_nsadmin_ctl.sh --controller IP:PORT --namesrv IP:PORT [--bare-keys]
#                                             a controller already running (mqnamesrv's), and
#                                             the NameServer its brokers register with
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"
it_require java mvn python3

given_controller='' given_namesrv='' given_bare=no
while [[ $# -gt 0 ]]; do
    case $1 in
    --controller) given_controller=$2; shift 2 ;;
    --namesrv) given_namesrv=$2; shift 2 ;;
    --bare-keys) given_bare=yes; shift ;;
    *) echo "usage: run_nsadmin_ctl.sh [--controller IP:PORT --namesrv IP:PORT [--bare-keys]]" >&2
       exit 2 ;;
    esac
done
it_init nsadmin_ctl

NSADMIN=${NSADMIN_BIN:-$IT_ROOT/build/debug/tools/nsadmin/nsadmin}
[[ -x $NSADMIN ]] || { echo "interop: no nsadmin binary at $NSADMIN (build first)" >&2; exit 1; }
CP=$(it_classpath 5.x)
it_java_home "$IT_WORK/mqadmin"

# mq <args>: mqadmin 5.5.0's stdout in MQ_OUT (logback's status block and the blank line that
# ends it dropped; mqadmin's own blank lines kept), its stderr in MQ_ERR.
mq() {
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$IT_WORK/mqadmin java $IT_JAVA_OPTS -Duser.home="$IT_WORK/mqadmin/home" \
        -cp "$CP" org.apache.rocketmq.tools.command.MQAdminStartup "$@" \
        >"$IT_WORK/mq.out" 2>"$IT_WORK/mq.err" || true
    MQ_OUT=$(awk 'BEGIN { s = 1 }
        s && / \|-(INFO|WARN|ERROR) in / { next }
        s && /^$/ { s = 0; next }
        { s = 0; print }' "$IT_WORK/mq.out"; printf x)
    MQ_OUT=${MQ_OUT%x}
    MQ_ERR=$(cat "$IT_WORK/mq.err")
}

# nsa <args>: nsadmin's stdout in OUT (exact), stderr in ERR, exit status in RC; a sanitizer
# report is a failure of its own.
nsa() {
    RC=0
    "$NSADMIN" "$@" >"$IT_WORK/nsa.out" 2>"$IT_WORK/nsa.err" || RC=$?
    OUT=$(cat "$IT_WORK/nsa.out"; printf x)
    OUT=${OUT%x}
    ERR=$(cat "$IT_WORK/nsa.err")
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_WORK/nsa.err"; then
        it_record fail "nsadmin $1 runs sanitizer-clean"
        head -40 "$IT_WORK/nsa.err" >&2
    fi
}

# texts_same "what" <expected text> <text>: byte for byte, not empty, and the last nsadmin
# exited 0.
texts_same() {
    if [[ $RC -eq 0 && -n $3 && $2 == "$3" ]]; then
        it_record pass "$1"
    else
        it_record fail "$1 (nsadmin exit $RC; - expected or mqadmin, + nsadmin):"
        diff <(printf '%s' "$2") <(printf '%s' "$3") | cat -A | head -30 >&2 || true
        printf '%s\n' "$ERR" | head -5 >&2
    fi
}

# same "what" exact|sorted <args...>: mqadmin and nsadmin print the same.
same() {
    local what=$1 how=$2
    shift 2
    mq "$@"
    nsa "$@"
    if [[ $how == sorted ]]; then
        texts_same "$what: nsadmin prints what mqadmin prints (line order aside)" \
            "$(sort <<<"$MQ_OUT")" "$(sort <<<"$OUT")"
    else
        texts_same "$what: nsadmin prints what mqadmin prints" "$MQ_OUT" "$OUT"
    fi
}

# refused "what" <code> <args...>: both get the controller's refusal with the same code and
# remark (mqadmin: "CODE: n  DESC: remark" in its stack trace; nsadmin: exit 1, "answered code
# n: remark"), and print nothing on stdout.
refused() {
    local what=$1 code=$2
    shift 2
    mq "$@"
    nsa "$@"
    local mq_remark ns_remark
    mq_remark=$(grep -o "CODE: $code  DESC: .*" <<<"$MQ_ERR" | head -1 | sed "s/^CODE: $code  DESC: //")
    ns_remark=$(grep -o "answered code $code: .*" <<<"$ERR" | head -1 | sed "s/^answered code $code: //")
    if [[ $RC -eq 1 && -n $mq_remark && $mq_remark == "$ns_remark" && -z $OUT && -z $MQ_OUT ]]; then
        it_record pass "$what: both refused with code $code and the same remark"
    else
        it_record fail "$what: code $code: mqadmin '$mq_remark', nsadmin (exit $RC) '$ns_remark'"
        printf 'mqadmin stdout: %s\nnsadmin stdout: %s\nnsadmin stderr: %s\n' "$MQ_OUT" "$OUT" \
            "$ERR" | head -20 >&2
    fi
}

# elect_expect <controller>: EXPECT gets what electMaster must print for the state the
# controller shows now (the master and epochs read with getSyncStateSet --json).
elect_expect() {
    EXPECT=$("$NSADMIN" getSyncStateSet -a "$1" -b ctlb --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["replicasInfoTable"]["ctlb"]
sys.stdout.write("\n#ClusterName\tCtlCluster\n#BrokerName\tctlb\n#BrokerMasterAddr\t%s\n"
                 "#MasterEpoch\t%d\n#SyncStateSetEpoch\t%d\n"
                 % (s.get("masterAddress"), s["masterEpoch"], s["syncStateSetEpoch"]))'
        printf x)
    EXPECT=${EXPECT%x}
}

# The election's figures (new master, epochs) masked.
mask_elect() {
    sed -E 's/^(#BrokerMasterAddr\t).*/\1ADDR/; s/^(#MasterEpoch\t|#SyncStateSetEpoch\t)[0-9]+$/\1N/'
}

# ctl_suite <label> <controller ip:port> <namesrv ip:port> <bare-keys: yes|no>
ctl_suite() {
    local label=$1 C=$2 N=$3 bare=$4
    it_log "== the controller commands against $label's controller at $C"
    local ready=$IT_WORK/brokers-$label.json
    python3 "$here/controller/ctl_brokers.py" --controller "$C" --namesrv "$N" \
        --cluster CtlCluster --broker ctlb --ready "$ready" --seconds 900 \
        >"$IT_WORK/brokers-$label.log" 2>&1 &
    local brokers_pid=$!
    IT_PIDS+=("$brokers_pid")
    if ! it_wait 180 test -s "$ready"; then
        cat "$IT_WORK/brokers-$label.log" >&2
        it_record fail "$label: the fake brokers register, elect and join the SyncStateSet"
        return
    fi
    it_record pass "$label: the fake brokers register, elect and join the SyncStateSet"
    local b3 b4
    b3=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["brokers"]["3"])' "$ready")
    b4=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["brokers"]["4"])' "$ready")

    same "$label getControllerMetaData" exact getControllerMetaData -a "$C"
    same "$label getSyncStateSet -b" exact getSyncStateSet -a "$C" -b ctlb
    same "$label getSyncStateSet -a list (mqadmin: the first)" exact \
        getSyncStateSet -a "$C;127.0.0.1:1" -b ctlb
    same "$label getSyncStateSet -c" exact getSyncStateSet -a "$C" -c CtlCluster -n "$N"
    mq getSyncStateSet -a "$C" -b nosuch
    nsa getSyncStateSet -a "$C" -b nosuch
    it_check "$label getSyncStateSet of an unknown set: nothing from either" \
        test "$RC" -eq 0 -a -z "$OUT" -a -z "$MQ_OUT"
    same "$label getControllerConfig" sorted getControllerConfig -a "$C"
    same "$label updateControllerConfig" exact updateControllerConfig -a "$C" \
        -k enableElectUncleanMaster -v true
    refused "$label updateControllerConfig of a blacklisted key" 16 \
        updateControllerConfig -a "$C" -k configStorePath -v /tmp/x

    # electMaster: refused while the master lives; mqadmin elects broker 2, nsadmin broker 1
    # (unclean elections on: 1 is no longer in the SyncStateSet then).
    refused "$label electMaster of the live master" 2011 \
        electMaster -a "$C" -c CtlCluster -bn ctlb -b 1
    local via=$C
    if [[ $bare == yes ]]; then
        mq electMaster -a "$C" -c CtlCluster -bn ctlb -b 2
        it_check_contains "$label electMaster: mqadmin 5.5.0 cannot read its controller's answer" \
            "$MQ_ERR" "not support unquoted name"
        nsa getSyncStateSet -a "$C" -b ctlb
        it_check_contains "$label electMaster: the election happened all the same" "$OUT" \
            "#MasterBrokerId	2"
        nsa electMaster -a "$C" -c CtlCluster -bn ctlb -b 1
        elect_expect "$C"
        texts_same "$label electMaster: nsadmin reads the bare keys and prints the new master" \
            "$EXPECT" "$OUT"
        local relay_port
        relay_port=$(it_free_port 1)
        python3 "$here/controller/quote_relay.py" "$relay_port" "$C" "$IT_WORK/relay-$label" \
            >"$IT_WORK/relay-$label.log" 2>&1 &
        IT_PIDS+=("$!")
        it_wait 20 test -s "$IT_WORK/relay-$label" || true
        via=$(cat "$IT_WORK/relay-$label")
    fi
    # mqadmin gives up on an answer after its RPC time-out (3 s), which a loaded machine (two
    # JVMs and a relay on two CPUs) can pass: then it prints nothing, and broker 2 is not the
    # master yet. Asked again then (at most three times), with what it said on stderr logged.
    local tries=0
    while :; do
        mq electMaster -a "$via" -c CtlCluster -bn ctlb -b 2
        [[ -z $MQ_OUT ]] || break
        it_log "mqadmin electMaster printed nothing; stderr: $(tail -c 600 <<<"$MQ_ERR")"
        nsa getSyncStateSet -a "$C" -b ctlb
        [[ $OUT != *"#MasterBrokerId	2"* && $((++tries)) -lt 3 ]] || break
    done
    local mq_elect=$MQ_OUT
    elect_expect "$C"
    RC=0 # the text below is mqadmin's
    texts_same "$label electMaster: what mqadmin prints when it can read the answer" \
        "$EXPECT" "$mq_elect"
    nsa electMaster -a "$C" -c CtlCluster -bn ctlb -b 1
    elect_expect "$C"
    texts_same "$label electMaster: nsadmin prints the new master and epochs" "$EXPECT" "$OUT"
    texts_same "$label electMaster: nsadmin prints what mqadmin prints (master and epochs masked)" \
        "$(mask_elect <<<"$mq_elect")" "$(mask_elect <<<"$OUT")"

    # cleanBrokerMetadata: silent brokers 3 (mqadmin) and 4 (nsadmin); a live one refused.
    refused "$label cleanBrokerMetadata of a live broker" 2009 \
        cleanBrokerMetadata -a "$C" -bn ctlb -c CtlCluster -b 2
    mq cleanBrokerMetadata -a "$C" -bn ctlb -c CtlCluster -b 3
    nsa cleanBrokerMetadata -a "$C" -bn ctlb -c CtlCluster -b 4
    texts_same "$label cleanBrokerMetadata: nsadmin prints what mqadmin prints" "$MQ_OUT" "$OUT"
    nsa getSyncStateSet -a "$C" -b ctlb
    if grep -qF "$b3" <<<"$OUT" || grep -qF "$b4" <<<"$OUT"; then
        it_record fail "$label cleanBrokerMetadata: brokers 3 and 4 are gone"
    else
        it_record pass "$label cleanBrokerMetadata: brokers 3 and 4 are gone"
    fi
    same "$label getSyncStateSet after the elections and cleans" exact \
        getSyncStateSet -a "$C" -b ctlb
    mq cleanBrokerMetadata -a "$C" -bn ctlb -b 2
    nsa cleanBrokerMetadata -a "$C" -bn ctlb -b 2
    local sentence="cleanLivingBroker option is false, clusterName option can not be empty."
    if [[ $RC -eq 2 && $MQ_ERR == *"$sentence"* && $ERR == *"$sentence"* ]]; then
        it_record pass "$label cleanBrokerMetadata without -c or -l: mqadmin's usage refusal"
    else
        it_record fail "$label cleanBrokerMetadata without -c or -l (nsadmin exit $RC): $ERR"
    fi
    kill "$brokers_pid" 2>/dev/null || true
}

if [[ -n $given_controller ]]; then
    [[ -n $given_namesrv ]] || { echo "--controller needs --namesrv" >&2; exit 2; }
    ctl_suite given "$given_controller" "$given_namesrv" "$given_bare"
else
    # Java's DLedger controller now and then elects itself and never leaves 2007 ("not in leader
    # state": its initial proposal never commits); such a controller is started again once, on
    # a fresh store, and the suite runs against whichever one serves.
    for try in 1 2; do
        cport=$(it_free_port 1)
        it_start_java_namesrv "jctl$try" 5.x enableControllerInNamesrv=true \
            controllerDLegerGroup=group1 "controllerDLegerPeers=n0-127.0.0.1:$cport" \
            controllerDLegerSelfId=n0 "controllerStorePath=$IT_WORK/jctl$try-store" \
            scanNotActiveBrokerInterval=1000
        jctl_port_var=jctl${try}_port
        jctl_pid_var=jctl${try}_pid
        if python3 "$here/controller/ctl_brokers.py" --controller "127.0.0.1:$cport" \
            --cluster ProbeCluster --broker probe --ready /dev/null --probe 90; then
            break
        fi
        it_log "java's controller at 127.0.0.1:$cport never left 2007 (try $try)"
        [[ $try -eq 2 ]] || kill "${!jctl_pid_var}" 2>/dev/null || true
    done
    ctl_suite java "127.0.0.1:$cport" "127.0.0.1:${!jctl_port_var}" yes
fi
it_finish
