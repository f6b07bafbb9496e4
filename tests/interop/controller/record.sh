#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port etc. are set with printf -v
# Records the golden answers of the Java 5.5.0 embedded controller (README.md in this folder):
# starts Java NameServers with enableControllerInNamesrv=true and lets CtlGolden.java drive a
# scripted sequence of every controller request code against them, writing each request and
# Java's reply to a replayable file. Not part of the test run: its output is committed data.
#
#   tests/interop/controller/record.sh one     one node  -> golden_one.jsonl
#   tests/interop/controller/record.sh three   three nodes (the official plugin files' shape,
#                                              XML comment block first) -> golden_three.jsonl
#   tests/interop/controller/record.sh check one|three   replays the committed golden file
#                                              against fresh Java NameServers (ctl_replay.py):
#                                              the replayer checked against Java itself
#   tests/interop/controller/record.sh props   what Java's Properties and -p make of such a
#                                              file (plugin-n0.conf) -> props_java.txt
#
# OUT=<file> writes elsewhere (check.sh records into its work dir and compares).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/../lib.sh"
it_require java javac mvn python3
which=${1:?usage: record.sh one|three|props|check one|three}
it_init "ctl-record-$which${2:+-$2}" --no-server

classes=$(it_javac 5.x "$here/CtlGolden.java")
cp=$(it_classpath 5.x)
golden() { # CtlGolden with the 5.x classpath; logback's status lines dropped
    # shellcheck disable=SC2086
    java $IT_JAVA_OPTS -Duser.home="$IT_WORK/home" -cp "$classes:$cp" CtlGolden "$@" |
        grep -v ' |-INFO in \| |-WARN in \|^$' || true
}
# record <scenario> <node=addr,pid ...>: the recording run; fails when the script does.
record() {
    local scenario=$1
    shift
    # shellcheck disable=SC2086
    if ! java $IT_JAVA_OPTS -Duser.home="$IT_WORK/home" -cp "$classes:$cp" CtlGolden record \
        "$scenario" "$IT_WORK/golden.jsonl" "$IT_WORK" "$@" >"$IT_WORK/record.out" \
        2>"$IT_WORK/record.log"; then
        tail -30 "$IT_WORK/record.log" >&2
        echo "record: the $scenario sequence failed against Java (log: $IT_WORK/record.log)" >&2
        exit 1
    fi
}

# ctl_conf <selfId> <peers> <listenPort> <dir>: a NameServer config in the shape of Apache's
# conf/controller/cluster-3n-namesrv-plugin/namesrv-n*.conf: an XML comment block first (our own
# words; Java's Properties reads its lines as junk keys), "key = value" with blanks.
ctl_conf() {
    cat <<EOF
<!--
  A controller peer in the shape of the official cluster-3n-namesrv-plugin files: they
  begin with an XML comment block like this one, which java.util.Properties does not skip.

      https://rocketmq.apache.org/docs/deploymentOperations/03autoswitchdeploy

  Every line of it becomes a key: the opening one, "A", "https" and the closing one.
  -->

#Namesrv config
listenPort = $3
enableControllerInNamesrv = true
kvConfigPath = $4/kvConfig.json
configStorePath = $4/namesrv.properties

#controller config
controllerDLegerGroup = group1
controllerDLegerPeers = $2
controllerDLegerSelfId = $1
controllerStorePath = $4/ctlstore
mappedFileSize = 10485760
scanNotActiveBrokerInterval = 1000
EOF
}

# start_node <name> <selfId> <peers> <listenPort>: a Java NameServer with its controller.
start_node() {
    local name=$1 dir=$IT_WORK/$1
    it_java_home "$dir"
    ctl_conf "$2" "$3" "$4" "$dir" >"$dir/namesrv.conf"
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$dir java $IT_JAVA_OPTS -Duser.home="$dir/home" -cp "$cp" \
        org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" >"$dir/stdout" 2>&1 &
    local pid=$!
    IT_PIDS+=("$pid")
    printf -v "${name}_pid" '%s' "$pid"
    it_log "Java NameServer $name (controller $2) launched (pid $pid)"
}

await_node() {
    local dir=$IT_WORK/$1
    if ! it_wait 400 grep -q 'ControllerManager boot success' "$dir/stdout"; then
        tail -40 "$dir/stdout" >&2
        echo "record: Java NameServer $1 did not start its controller" >&2
        exit 1
    fi
}

case $which in
props)
    out=${OUT:-$here/props_java.txt}
    conf=${CONF:-$here/plugin-n0.conf}
    ctl_conf n0 "n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858" 9876 /DIR >"$conf"
    {
        echo "# What Java 5.5.0 makes of plugin-n0.conf, a NameServer config in the shape of the"
        echo "# official cluster-3n-namesrv-plugin files (tests/interop/controller/record.sh props)."
        echo "# -- java.util.Properties.load, keys sorted"
        golden props "$conf"
        echo "# -- ControllerConfig as NamesrvStartup fills it (user.home=/HOME), -p's order"
        ROCKETMQ_HOME='' golden print "$conf" | sed "s#$IT_WORK/home#/HOME#"
    } >"$out"
    it_log "wrote $conf and $out"
    ;;
one)
    out=${OUT:-$here/golden_one.jsonl}
    p0=$(it_free_port 1)
    c0=$(it_free_port 1)
    start_node n0 n0 "n0-127.0.0.1:$c0" "$p0"
    await_node n0
    record one "n0=127.0.0.1:$c0,$n0_pid"
    mv "$IT_WORK/golden.jsonl" "$out"
    it_log "wrote $out"
    ;;
three)
    out=${OUT:-$here/golden_three.jsonl}
    peers=
    for n in 0 1 2; do
        printf -v "p$n" '%s' "$(it_free_port 1)"
        printf -v "c$n" '%s' "$(it_free_port 1)"
        cv=c$n
        peers+="n$n-127.0.0.1:${!cv};"
    done
    peers=${peers%;}
    for n in 0 1 2; do
        pv=p$n
        start_node "n$n" "n$n" "$peers" "${!pv}"
    done
    for n in 0 1 2; do await_node "n$n"; done
    record three "n0=127.0.0.1:$c0,$n0_pid" "n1=127.0.0.1:$c1,$n1_pid" "n2=127.0.0.1:$c2,$n2_pid"
    mv "$IT_WORK/golden.jsonl" "$out"
    it_log "wrote $out"
    ;;
check)
    scenario=${2:?usage: record.sh check one|three}
    n=1
    [[ $scenario == three ]] && n=3
    peers=
    for ((i = 0; i < n; i++)); do
        printf -v "p$i" '%s' "$(it_free_port 1)"
        printf -v "c$i" '%s' "$(it_free_port 1)"
        cv=c$i
        peers+="n$i-127.0.0.1:${!cv};"
    done
    peers=${peers%;}
    args=()
    for ((i = 0; i < n; i++)); do
        pv=p$i cv=c$i
        start_node "n$i" "n$i" "$peers" "${!pv}"
    done
    for ((i = 0; i < n; i++)); do
        await_node "n$i"
        pidv=n${i}_pid cv=c$i
        args+=(--node "n$i=127.0.0.1:${!cv}" --pid "n$i=${!pidv}")
    done
    it_check "the golden file of scenario $scenario replays against Java 5.5.0 itself" \
        python3 "$here/ctl_replay.py" "${args[@]}" "$here/golden_$scenario.jsonl"
    it_finish
    ;;
*)
    echo "usage: record.sh one|three|props|check one|three" >&2
    exit 2
    ;;
esac
