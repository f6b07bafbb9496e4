#!/usr/bin/env bash
# Interop of aclEnable=true with real RocketMQ peers (docs/operations.md, Security):
#   - mqadmin 5.5.0 and 4.9.8 sign with the credentials of $ROCKETMQ_HOME/conf/tools.yml: an
#     admin account performs updateKvConfig, wipeWritePerm / addWritePerm and
#     updateNamesrvConfig; without tools.yml, or with a non-admin account, each is refused
#     (16, with the reason) and changes nothing;
#   - a 5.5.0 broker signs its registrations (innerClientAuthenticationCredentials); a 4.9.7
#     broker cannot sign and is admitted by globalWhiteRemoteAddresses (it reaches mqnamesrv
#     from 127.0.0.2 through tests/interop/relay.py, as from another host);
#   - anonymous producers and consumers keep reading routes; with aclReadsRequireSignature=true
#     only a producer given an RPC hook (AclClientRPCHook) finds its route, and the Go client
#     (rocketmq-client-go v2) works when given credentials.
# <name>_port, <name>_pid and <name>_dir are set by lib.sh's launchers (printf -v):
# shellcheck disable=SC2154
set -euo pipefail
# shellcheck source=tests/interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

it_require java javac mvn python3 go
it_init acl
N=20

cat >"$IT_WORK/plain_acl.yml" <<'EOF'
# 127.0.0.2 is where the 4.9.7 broker comes from (it cannot sign).
globalWhiteRemoteAddresses:
  - 127.0.0.{2,3}
accounts:
  - accessKey: brokerKey
    secretKey: brokerSecret
  - accessKey: opsViewer
    secretKey: opsViewerSecret
  - accessKey: adminKey
    secretKey: adminSecret
    admin: true
EOF

# ---- start everything -------------------------------------------------------------------

t_start=$SECONDS
it_start_mqnamesrv nsA --set aclEnable=true --set "aclPlainFile=$IT_WORK/plain_acl.yml"
it_start_mqnamesrv nsB --set aclEnable=true --set "aclPlainFile=$IT_WORK/plain_acl.yml" \
    --set aclReadsRequireSignature=true
A=127.0.0.1:$nsA_port
B=127.0.0.1:$nsB_port
relay_port=$(it_free_port 1)
python3 "$IT_ROOT/tests/interop/relay.py" "$relay_port" "$nsA_port" 127.0.0.2 &
IT_PIDS+=("$!")

common=("registerNameServerPeriod=10000" "brokerIP2=127.0.0.1")
# A 5.x broker signs what it sends to NameServers with innerClientAuthenticationCredentials; it
# stores that user in its own auth metadata at start, hence the metadata provider.
it_launch_broker b5 5.x "$A;$B" "${common[@]}" \
    'innerClientAuthenticationCredentials={"accessKey":"brokerKey","secretKey":"brokerSecret"}' \
    authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider
# A 4.9.7 broker sends nothing signed (aclEnable only protects the broker itself).
it_launch_broker b49 4.9-broker "127.0.0.1:$relay_port" "${common[@]}" aclEnable=false
drv_start d5 5.x
drv_start d49 4.9-client
it_await_broker b5
it_await_broker b49
it_log "cluster up after $((SECONDS - t_start)) s"

# tools <driver> <accessKey> <secretKey> | tools <driver> -: mqadmin's credentials file
# ($ROCKETMQ_HOME/conf/tools.yml, read by MQAdminStartup for every command).
tools() {
    local dirvar=drv_${1}_dir
    local f=${!dirvar}/conf/tools.yml
    if [[ $2 == - ]]; then
        rm -f "$f"
    else
        printf 'accessKey: %s\nsecretKey: %s\n' "$2" "$3" >"$f"
    fi
}

has() { it_check_contains "$1" "$R" "$2"; }
lacks() {
    if grep -qF -- "$2" <<<"$R"; then
        it_record fail "$1 (unexpected '$2' in:)"
        printf '%s\n' "$R" | head -20 >&2
    else
        it_record pass "$1"
    fi
}
cl_has() { # cl_has <namesrv> <broker>: clusterList (anonymous read) lists it
    adm d5 clusterList -n "$1"
    grep -qE "^ItCluster +$2 " <<<"$R"
}

# ---- registration -----------------------------------------------------------------------

tools d5 -
it_check "the signed 5.5.0 broker registered with A" it_wait 30 cl_has "$A" b5
it_check "the 4.9.7 broker registered with A from a global white address" it_wait 30 cl_has "$A" b49
it_check "A refused no registration" bash -c "! grep -q 'refused REGISTER_BROKER' '$nsA_dir/stdout'"
adm d5 clusterList -n "$B"
has "B (reads signed) refuses an unsigned clusterList" "GET_BROKER_CLUSTER_INFO (106) refused: missing signature"
tools d5 opsViewer opsViewerSecret
it_check "the signed 5.5.0 broker registered with B; a signed clusterList reads it" \
    it_wait 30 cl_has "$B" b5
tools d5 -

# ---- mqadmin ----------------------------------------------------------------------------

# b5_writable: the route of TBW102 on A gives b5 write permission (an anonymous read).
b5_writable() {
    drv d5 mqadmin topicRoute -n "$A" -t TBW102
    python3 -c '
import json, re, sys
t = re.sub(r"([{,]\s*)(\d+):", lambda k: "%s\x22%s\x22:" % k.groups(), sys.stdin.read())
r = json.loads(t[t.index("{"):t.rindex("}") + 1])
sys.exit(not any(q["brokerName"] == "b5" and q["perm"] & 2 for q in r["queueDatas"]))' <<<"$R"
}
b5_wiped() { ! b5_writable; }
# conf_sum: what the config file holds now (its checksum, or "none").
conf_sum() { sha1sum "$nsA_dir/namesrv.properties" 2>/dev/null || echo none; }

for d in d5 d49; do
    v=$([[ $d == d5 ]] && echo 5.5.0 || echo 4.9.8)
    conf_before=$(conf_sum)
    for who in none viewer; do
        if [[ $who == none ]]; then
            tools "$d" -
            why="missing signature (no AccessKey)"
        else
            tools "$d" opsViewer opsViewerSecret
            why="AccessKey opsViewer is not an admin account"
        fi
        adm "$d" updateKvConfig -n "$A" -s ACLNS -k "k-$v" -v v1
        has "[$v, $who] updateKvConfig refused: $why" "PUT_KV_CONFIG (100) refused: $why"
        adm "$d" wipeWritePerm -n "$A" -b b5
        has "[$v, $who] wipeWritePerm reports the failure" "in name server[$A] Failed"
        has "[$v, $who] wipeWritePerm refused: $why" "WIPE_WRITE_PERM_OF_BROKER (205) refused: $why"
        adm "$d" updateNamesrvConfig -n "$A" -k waitSecondsForService -v 77
        lacks "[$v, $who] updateNamesrvConfig does not succeed" "success"
        has "[$v, $who] updateNamesrvConfig refused: $why" "UPDATE_NAMESRV_CONFIG (318) refused: $why"
    done
    tools "$d" -
    drv "$d" kvlist "$A" ACLNS
    lacks "[$v] the refused updateKvConfig left no key" "k-$v="
    it_check "[$v] the refused wipeWritePerm left b5 writable" b5_writable
    it_check "[$v] the refused updateNamesrvConfig left the config file as it was" \
        [ "$(conf_sum)" = "$conf_before" ]

    tools "$d" adminKey adminSecret
    adm "$d" updateKvConfig -n "$A" -s ACLNS -k "k-$v" -v v1
    has "[$v, admin] updateKvConfig succeeds" "create or update kv config to namespace success."
    adm "$d" wipeWritePerm -n "$A" -b b5
    has "[$v, admin] wipeWritePerm succeeds" "wipe write perm of broker[b5] in name server[$A] OK"
    it_check "[$v, admin] ... and b5 lost write permission" b5_wiped
    adm "$d" addWritePerm -n "$A" -b b5
    has "[$v, admin] addWritePerm succeeds" "add write perm of broker[b5] in name server[$A] OK"
    adm "$d" updateNamesrvConfig -n "$A" -k waitSecondsForService -v "7${#v}"
    has "[$v, admin] updateNamesrvConfig succeeds" "update name server config success!"
    tools "$d" -
    drv "$d" kvlist "$A" ACLNS
    has "[$v] the KV store holds the admin's update" "k-$v=v1"
done
it_check "the config file holds the admin's update" grep -q '^waitSecondsForService=7' \
    "$nsA_dir/namesrv.properties"
it_check "A logged the refusals with the peer" \
    grep -q 'WARN .* peer=127.0.0.1:[0-9]* ACL: refused PUT_KV_CONFIG (100): missing signature' \
    "$nsA_dir/stdout"

# ---- clients ----------------------------------------------------------------------------

# Anonymous clients on A: routes are reads, open to all.
it_check "b5 writable again" b5_writable
drv d5 producer p1 "$A" it_p1 -
drv d5 consumer c1 "$A" it_c1 TA -
drv d5 send p1 TA m5 "$N" 3
has "anonymous 5.5.0 producer sends through A" "sent $N/$N"
drv d49 producer q1 "$A" it_q1 -
drv d49 send q1 TA m49 "$N" 3
has "anonymous 4.9.8 producer sends through A" "sent $N/$N"
drv d5 await c1 m5 "$N" 120000
has "anonymous 5.5.0 consumer receives through A" "received $N/$N"
drv d5 await c1 m49 "$N" 120000
has "... the 4.9.8 producer's messages too" "received $N/$N"

# B wants signed reads: only a producer given the ACL RPC hook finds a route.
drv d5 producer p2 "$B" it_p2 -
drv d5 send p2 TB x 1 1
lacks "an anonymous producer finds no route through B" "sent 1/1"
drv d5 credentials opsViewer opsViewerSecret
drv d5 producer p3 "$B" it_p3 -
drv d5 send p3 TB y "$N" 3
has "a producer with an RPC hook (AclClientRPCHook) sends through B" "sent $N/$N"
drv d5 credentials -

# The Go client signs with primitive.Credentials (its ACL interceptor): its producer, consumer
# and admin client through B, every check of tests/interop/go/main.go.
go_client=$IT_CACHE/go/goclient
mkdir -p "$IT_CACHE/go"
if (cd "$IT_ROOT/tests/interop/go" && GOFLAGS="-mod=readonly -buildvcs=false" \
    go build -o "$go_client.acl.tmp" .) >"$IT_WORK/go-build.log" 2>&1; then
    mv "$go_client.acl.tmp" "$go_client.acl"
    rc=0
    "$go_client.acl" -namesrv "$B" -topic "GoAcl_$$" -n 10 -broker-name b5 \
        -broker-addr "127.0.0.1:$b5_port" -cluster ItCluster -timeout 60s \
        -access-key opsViewer -secret-key opsViewerSecret >"$IT_WORK/go.out" 2>"$IT_WORK/go.log" ||
        rc=$?
    # rocketmq-client-go v2.1.2's admin client does not sign (admin.WithCredentials reaches no
    # interceptor: NewAdmin builds its NameServer client without SetCredentials), so its two
    # checks must be refused; producer and consumer must pass every check.
    count=0
    while read -r verdict what; do
        count=$((count + 1))
        case $what in
        "route of GoAcl_"*" found through the NameServer"*)
            it_check_contains "go admin client (does not sign) refused by B" "$what" \
                "GET_ROUTEINFO_BY_TOPIC (105) refused: missing signature" ;;
        "admin topic list"*)
            it_check "go admin topic list (unsigned) gets nothing from B" [ "$verdict" = fail ] ;;
        *) it_record "$verdict" "go (signed, through B): $what" ;;
        esac
    done < <(sed -n 's/^RESULT \(pass\|fail\) /\1 /p' "$IT_WORK/go.out")
    it_check "the signed Go client ran all its checks (exit $rc, $count checks)" [ "$count" -ge 9 ]
else
    cat "$IT_WORK/go-build.log" >&2
    it_record fail "the Go client program builds"
fi

it_check "B refused the anonymous producer's route read" \
    grep -q 'ACL: refused GET_ROUTEINFO_BY_TOPIC (105): missing signature' "$nsB_dir/stdout"

drv d5 close p1
drv d5 close c1
drv d49 close q1
drv d5 close p2
drv d5 close p3
it_stop_mqnamesrv nsA
it_stop_mqnamesrv nsB
it_log "acl suite took $((SECONDS - t_start)) s"
it_finish
