#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Interop of nsadmin (build/debug/tools/nsadmin/nsadmin, the ASan build) with the Java
# NameServer (rocketmq-namesrv 5.5.0) and a real 5.5.0 broker registered with it and with
# mqnamesrv:
#   1  the read commands print what mqadmin 5.5.0 prints, run by both against the Java
#      NameServer: clusterList (the broker's live figures masked, the NameServer's columns exact),
#      topicRoute, topicRoute -l, topicList -c byte for byte; topicList and getNamesrvConfig
#      modulo line order (mqadmin prints Java hash-map order); nsadmin gives the same answers
#      from mqnamesrv and from Java
#   2  compareNamesrv: Java and mqnamesrv agree; then made to disagree by a permission wiped,
#      a KV entry, a topic deleted on one side, and an empty NameServer (brokers missing)
#   3  bad peers: an HTTP server, a closed port
#   4  a second Java NameServer over TLS (-Dtls.server.mode=enforcing, test mode): nsadmin --tls
#      is served where plaintext is refused and prints what mqadmin -Dtls.enable=true prints;
#      --tlsTrustCert checks its self-signed certificate (refused); signed writes (--ak/--sk)
#      are taken (a Java NameServer ignores the signature)
# One Java NameServer, one broker, one mqadmin JVM per compared command.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"
it_require java mvn python3
it_init nsadmin

NSADMIN=${NSADMIN_BIN:-$IT_ROOT/build/debug/tools/nsadmin/nsadmin}
[[ -x $NSADMIN ]] || { echo "interop: no nsadmin binary at $NSADMIN (build first)" >&2; exit 1; }

it_start_java_namesrv jns 5.x
it_start_mqnamesrv cns
J=127.0.0.1:$jns_port
C=127.0.0.1:$cns_port
it_start_broker b1 5.x "$J;$C"

# nsa <args>: nsadmin's stdout in OUT, stderr in ERR, exit status in RC; a sanitizer report
# is a failure of its own.
# A write is answered once it is on disk, which can take seconds on a loaded machine (nsadmin's
# default wait is 5 s).
WRITE_WAIT=(--timeout 30000)
nsa() {
    RC=0
    "$NSADMIN" "$@" >"$IT_WORK/nsa.out" 2>"$IT_WORK/nsa.err" || RC=$?
    OUT=$(cat "$IT_WORK/nsa.out")
    ERR=$(cat "$IT_WORK/nsa.err")
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_WORK/nsa.err"; then
        it_record fail "nsadmin $1 runs sanitizer-clean"
        head -40 "$IT_WORK/nsa.err" >&2
    fi
}

# rc_is "what" <status>: the last nsadmin exited so; otherwise shows what it printed.
rc_is() {
    if [[ $RC -eq $2 ]]; then
        it_record pass "$1"
    else
        it_record fail "$1 (exit $RC, not $2:)"
        printf '%s\n%s\n' "$OUT" "$ERR" | head -30 >&2
    fi
}

# The broker registers with both NameServers a moment after its boot line.
registered() {
    nsa clusterList -n "$1" --nsOnly
    grep -q "127.0.0.1:$b1_port" <<<"$OUT"
}
it_check "the broker is registered with the Java NameServer" it_wait 60 registered "$J"
it_check "the broker is registered with mqnamesrv" it_wait 60 registered "$C"

# ---- 1: the same output as mqadmin ---------------------------------------------------------

# Both outputs filtered alike (it_mqadmin drops logback's status lines and empty lines).
filtered() { grep -v ' |-INFO in \| |-WARN in \|^$' || true; }

# clusterList's data rows end in the broker's own live figures, read from the broker for each
# run: #InTPS, #OutTPS and #Timer(Progress) (its timer's backlog, which moves while it starts
# up), #PCWait, #Hour and #SPACE (wall clock, disk usage of a shared machine). Their numbers
# are masked, and the padding, which follows their width; the columns the NameServer answers
# (cluster, broker name, id, address, version) and #ACTIVATED stay exact.
mask_cluster() {
    python3 -c '
import re, sys
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.startswith("#"):
        m = re.match(r"^((?:\S+\s+){5})(.*?)(\s+\S+)$", line)
        if m:
            live = re.sub(r"\s+", " ", re.sub(r"\d+", "9", m.group(2)))
            line = m.group(1) + live + m.group(3)
    print(line)
'
}

# same "what" <how: exact|sorted|cluster> <mqadmin args...>: mqadmin and nsadmin on the Java
# NameServer print the same.
same() {
    local what=$1 how=$2
    shift 2
    local m=$IT_WORK/mqadmin.txt n=$IT_WORK/nsadmin.txt
    it_mqadmin 5.x "$@" -n "$J" | filtered >"$m"
    nsa "$@" -n "$J"
    filtered <<<"$OUT" >"$n"
    case $how in
    sorted)
        sort -o "$m" "$m"
        sort -o "$n" "$n"
        ;;
    cluster)
        mask_cluster <"$m" >"$m.masked" && mv "$m.masked" "$m"
        mask_cluster <"$n" >"$n.masked" && mv "$n.masked" "$n"
        ;;
    esac
    if [[ $RC -eq 0 && -s $n ]] && cmp -s "$m" "$n"; then
        it_record pass "$what: nsadmin prints what mqadmin prints ($how)"
    else
        it_record fail "$what: nsadmin (exit $RC) differs from mqadmin ($how):"
        diff "$m" "$n" | head -30 >&2 || true
        printf '%s\n' "$ERR" | head -5 >&2
    fi
}

same "clusterList" cluster clusterList
same "topicRoute" exact topicRoute -t TBW102
same "topicRoute -l" exact topicRoute -t TBW102 -l
same "topicList" sorted topicList
same "topicList -c" sorted topicList -c
same "getNamesrvConfig" sorted getNamesrvConfig

# nsadmin reads the same from both servers (mqnamesrv sorts what Java leaves in hash order).
both_same() {
    local what=$1
    shift
    nsa "$@" -n "$J"
    local from_java=$OUT
    nsa "$@" -n "$C"
    if [[ $RC -eq 0 && -n $OUT ]] && [[ "$(sort <<<"$from_java")" == "$(sort <<<"$OUT")" ]]; then
        it_record pass "$what: the same from Java and from mqnamesrv"
    else
        it_record fail "$what: Java and mqnamesrv differ:"
        diff <(sort <<<"$from_java") <(sort <<<"$OUT") | head -20 >&2 || true
    fi
}
both_same "clusterList --nsOnly" clusterList --nsOnly
both_same "topicRoute" topicRoute -t TBW102
both_same "topicList" topicList
both_same "getBrokerMemberGroup" getBrokerMemberGroup -c ItCluster -b b1

# ---- 2: compareNamesrv ----------------------------------------------------------------------

nsa compareNamesrv -n "$J;$C" --kv
rc_is "compareNamesrv: Java and mqnamesrv with the same broker agree (exit 0)" 0
it_check_contains "compareNamesrv: its summary" "$OUT" "2 NameServers agree: 1 cluster, 1 broker,"

nsa wipeWritePerm "${WRITE_WAIT[@]}" -n "$J" -b b1
nsa compareNamesrv -n "$J;$C"
rc_is "compareNamesrv: a permission wiped on Java only is a difference (exit 1)" 1
it_check_contains "compareNamesrv: the perm line" "$OUT" \
    "topic TBW102 on broker b1: perm differs: 5 on $J; 7 on $C"
# addWritePerm sets RW (6), as Java's operateWritePermOfBroker does, so a topic that had the
# inherit bit too (TBW102: 7) still differs from the NameServer that was not touched...
nsa addWritePerm "${WRITE_WAIT[@]}" -n "$J" -b b1
nsa compareNamesrv -n "$J;$C"
it_check_contains "compareNamesrv: addWritePerm leaves TBW102 at RW only" "$OUT" \
    "topic TBW102 on broker b1: perm differs: 6 on $J; 7 on $C"
if grep -qF "topic BenchmarkTest on broker b1" <<<"$OUT"; then
    it_record fail "compareNamesrv: a topic of perm 6 is back to 6 (it still differs)"
else
    it_record pass "compareNamesrv: a topic of perm 6 is back to 6"
fi
# ...until the same is done there.
nsa wipeWritePerm "${WRITE_WAIT[@]}" -n "$C" -b b1
nsa addWritePerm "${WRITE_WAIT[@]}" -n "$C" -b b1
nsa compareNamesrv -n "$J;$C"
rc_is "compareNamesrv: agree again once both had the same wipe and add" 0

nsa updateKvConfig "${WRITE_WAIT[@]}" -n "$C" -s ORDER_TOPIC_CONFIG -k TBW102 -v b1:8
nsa compareNamesrv -n "$J;$C" --kv
rc_is "compareNamesrv --kv: an entry on mqnamesrv only (exit 1)" 1
it_check_contains "compareNamesrv --kv: the KV line" "$OUT" "kv ORDER_TOPIC_CONFIG/TBW102: missing on $J"
nsa updateKvConfig "${WRITE_WAIT[@]}" -n "$J" -s ORDER_TOPIC_CONFIG -k TBW102 -v b1:4
nsa compareNamesrv -n "$J;$C" --kv --json
it_check_contains "compareNamesrv --kv --json: a value difference" "$OUT" \
    "\"kv ORDER_TOPIC_CONFIG/TBW102: value differs: \\\"b1:4\\\" on $J; \\\"b1:8\\\" on $C\""

nsa deleteTopic "${WRITE_WAIT[@]}" -n "$J" -t SELF_TEST_TOPIC -c ItCluster
it_check_contains "deleteTopic on the Java NameServer" "$OUT" "delete topic [SELF_TEST_TOPIC] from NameServer success."
nsa compareNamesrv -n "$J;$C"
it_check_contains "compareNamesrv: a topic deleted on Java only" "$OUT" "topic SELF_TEST_TOPIC: missing on $J"

it_start_mqnamesrv empty
E=127.0.0.1:$empty_port
nsa compareNamesrv -n "$J;$E"
rc_is "compareNamesrv: an empty NameServer disagrees (exit 1)" 1
it_check_contains "compareNamesrv: the broker is missing on it" "$OUT" \
    "broker ItCluster/b1 id 0 (127.0.0.1:$b1_port): missing on $E"
it_check_contains "compareNamesrv: and its topics" "$OUT" "topic TBW102: missing on $E"

# ---- 3: bad peers ---------------------------------------------------------------------------

# An HTTP server waits for a request line that a remoting frame never ends: no reply. (One
# that answers at once is tests/integration/test_nsadmin.c's.)
http_port=$(it_free_port 1)
python3 -m http.server "$http_port" --bind 127.0.0.1 >"$IT_WORK/http.log" 2>&1 &
IT_PIDS+=("$!")
it_wait 20 python3 -c "import socket; socket.create_connection(('127.0.0.1', $http_port))" || true
nsa topicList -n "127.0.0.1:$http_port" --timeout 1000
rc_is "an HTTP server: exit 3" 3
it_check_contains "an HTTP server: the reason and the address" "$ERR" \
    "nsadmin topicList: 127.0.0.1:$http_port: no reply within 1000 ms"
nsa topicList -n "127.0.0.1:$http_port;$J" --timeout 1000
rc_is "an HTTP server first, then the Java NameServer answers" 0
closed_port=$(it_free_port 1)
nsa clusterList -n "127.0.0.1:$closed_port"
rc_is "a closed port: exit 3" 3
it_check_contains "a closed port: the reason and the address" "$ERR" \
    "127.0.0.1:$closed_port: connect: Connection refused"

# ---- 4: a Java NameServer over TLS ----------------------------------------------------------

IT_JAVA_OPTS="$IT_JAVA_OPTS -Dtls.server.mode=enforcing" it_start_java_namesrv jtls 5.x
JT=127.0.0.1:$jtls_port
nsa getNamesrvConfig -n "$JT"
rc_is "Java over TLS (enforcing): plaintext nsadmin gets nothing (exit 3)" 3
nsa getNamesrvConfig -n "$JT" --tls
rc_is "Java over TLS: nsadmin --tls is served" 0
IT_JAVA_OPTS="$IT_JAVA_OPTS -Dtls.enable=true" it_mqadmin 5.x getNamesrvConfig -n "$JT" |
    filtered | sort >"$IT_WORK/mqadmin-tls.txt"
filtered <<<"$OUT" | sort >"$IT_WORK/nsadmin-tls.txt"
if [[ -s $IT_WORK/nsadmin-tls.txt ]] && cmp -s "$IT_WORK/mqadmin-tls.txt" "$IT_WORK/nsadmin-tls.txt"; then
    it_record pass "Java over TLS: getNamesrvConfig --tls prints what mqadmin -Dtls.enable=true prints"
else
    it_record fail "Java over TLS: nsadmin --tls differs from mqadmin -Dtls.enable=true:"
    diff "$IT_WORK/mqadmin-tls.txt" "$IT_WORK/nsadmin-tls.txt" | head -20 >&2 || true
fi
nsa updateKvConfig "${WRITE_WAIT[@]}" -n "$JT" --tls -s NSA_TLS -k k1 -v v1 --ak nsadminAk --sk nsadminSecret
rc_is "Java over TLS: a signed write (--ak/--sk) is taken" 0
nsa getKvConfig -n "$JT" --tls -s NSA_TLS -k k1
it_check_contains "Java over TLS: and read back" "$OUT" "v1"
nsa clusterList -n "$JT" --tlsTrustCert /etc/ssl/certs/ca-certificates.crt
rc_is "Java over TLS: --tlsTrustCert refuses its self-signed test certificate (exit 3)" 3
it_check_contains "Java over TLS: the reason" "$ERR" "certificate verify failed"

it_stop_mqnamesrv empty
it_stop_mqnamesrv cns
it_finish
