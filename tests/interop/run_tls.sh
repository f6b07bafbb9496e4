#!/usr/bin/env bash
# Interop over TLS and through HAProxy: real RocketMQ peers started with -Dtls.enable=true find
# each other only through mqnamesrv (build/debug/mqnamesrv, the ASan build).
#
#   nsP  permissive, test mode (Java's defaults): TLS and plaintext on one port
#   nsE  enforcing: plaintext refused
#   nsM  enforcing, mutual TLS: our CA-signed certificate, need.client.auth=require,
#        authClient=true against our CA
#   nsH  permissive, behind a real HAProxy (frontends with send-proxy and send-proxy-v2, the
#        backend connections from 127.0.0.2, so that the proxy's address and the clients' differ)
#   nsR  permissive, test mode, route snapshot every 500 ms: a TLS client's connection is cut
#        from the server's side (ss -K kills the server's socket), then nsR is restarted on its
#        port with its snapshot; the client reconnects (a full handshake: RocketMQ's Java clients
#        never offer a session, see docs/operations.md) and carries on
#
#   b49  4.9.7 broker, -Dtls.enable=true (test mode), registered with nsP, nsE and, through the
#        send-proxy frontend, nsH
#   b5   5.5.0 broker, -Dtls.enable=true, registered with nsP, nsE, nsR and, through the
#        send-proxy-v2 frontend, nsH
#   b5m  5.5.0 broker, mutual TLS: -Dtls.test.mode.enable=false and tls.client.* (our CA-signed
#        client certificate, authServer against our CA), registered with nsM
#
# Clients: 5.5.0 and 4.9.8 producers and push consumers and mqadmin with -Dtls.enable=true
# (ItDriver JVMs), a plaintext 5.5.0 mqadmin, a 5.5.0 mutual-TLS client, and the Go client
# (rocketmq-client-go master, WithTls; the released v2.1.2 has no TLS; it makes a new TLS
# configuration without a session cache for every connection, so it never resumes and is not
# part of section 4). The certificates are made here by tests/data/make_certs.sh.
# <name>_port, <name>_pid and <name>_dir are set by lib.sh's launchers (printf -v):
# shellcheck disable=SC2154
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require java javac mvn python3 go openssl haproxy ss
it_init tls

N=20
PKI=$IT_WORK/pki
bash "$IT_ROOT/tests/data/make_certs.sh" "$PKI"

# ---- the Go TLS client (its own module: it needs the client's master branch) ---------------
build_go_tls() {
    local out=$IT_CACHE/go/gotlsclient
    mkdir -p "$IT_CACHE/go"
    if ! (cd "$here/go-tls" && GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$out.tmp" .) \
        >"$IT_WORK/go-build.log" 2>&1; then
        cat "$IT_WORK/go-build.log" >&2
        echo "interop: building the Go TLS client failed" >&2
        return 1
    fi
    mv "$out.tmp" "$out"
    GO_TLS_CLIENT=$out
}
build_go_tls

# ---- servers -------------------------------------------------------------------------------
ns_common=(--set logLevel=DEBUG --set tls.config.file=)
it_start_mqnamesrv nsP "${ns_common[@]}"
it_start_mqnamesrv nsE "${ns_common[@]}" --set tls.server.mode=enforcing
it_start_mqnamesrv nsM "${ns_common[@]}" --set tls.server.mode=enforcing \
    --set tls.test.mode.enable=false --set "tls.server.certPath=$PKI/server.pem" \
    --set "tls.server.keyPath=$PKI/server.key" --set tls.server.need.client.auth=require \
    --set tls.server.authClient=true --set "tls.server.trustCertPath=$PKI/ca.pem"
it_start_mqnamesrv nsH "${ns_common[@]}"
ns_reconnect=(--set routeSnapshotIntervalMillis=500)
it_start_mqnamesrv nsR "${ns_common[@]}" "${ns_reconnect[@]}"
P=127.0.0.1:$nsP_port
E=127.0.0.1:$nsE_port
M=127.0.0.1:$nsM_port
RS=127.0.0.1:$nsR_port

hap_v1=$(it_free_port 1)
hap_v2=$(it_free_port 1)
mkdir -p "$IT_WORK/haproxy"
cat >"$IT_WORK/haproxy/haproxy.cfg" <<EOF
global
    maxconn 256
defaults
    mode tcp
    timeout connect 5s
    timeout client 300s
    timeout server 300s
frontend v1
    bind 127.0.0.1:$hap_v1
    default_backend ns_v1
frontend v2
    bind 127.0.0.1:$hap_v2
    default_backend ns_v2
backend ns_v1
    server nsH 127.0.0.1:$nsH_port send-proxy source 127.0.0.2
backend ns_v2
    server nsH 127.0.0.1:$nsH_port send-proxy-v2 source 127.0.0.2
EOF
haproxy -db -f "$IT_WORK/haproxy/haproxy.cfg" >"$IT_WORK/haproxy/out" 2>&1 &
IT_PIDS+=("$!")
it_wait 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $hap_v2)).close()" ||
    { cat "$IT_WORK/haproxy/out" >&2; echo "interop: haproxy did not start" >&2; exit 1; }
H1=127.0.0.1:$hap_v1
H2=127.0.0.1:$hap_v2
it_log "HAProxy on $H1 (send-proxy) and $H2 (send-proxy-v2) in front of nsH"

# ---- brokers and client JVMs ---------------------------------------------------------------
TLS=(-Dtls.enable=true)
MTLS=(-Dtls.enable=true -Dtls.test.mode.enable=false "-Dtls.client.certPath=$PKI/client.pem"
    "-Dtls.client.keyPath=$PKI/client.pk8" -Dtls.client.authServer=true
    "-Dtls.client.trustCertPath=$PKI/ca.pem")
common=(registerNameServerPeriod=10000 brokerIP2=127.0.0.1)
IT_BROKER_JAVA_OPTS="$IT_BROKER_JAVA_OPTS ${TLS[*]}" \
    it_launch_broker b49 4.9-broker "$P;$E;$H1" "${common[@]}"
IT_BROKER_JAVA_OPTS="$IT_BROKER_JAVA_OPTS ${TLS[*]}" \
    it_launch_broker b5 5.x "$P;$E;$H2;$RS" "${common[@]}"
# A broker outside test mode serves its own port with a certificate too (Java needs one).
IT_BROKER_JAVA_OPTS="$IT_BROKER_JAVA_OPTS ${MTLS[*]} -Dtls.server.certPath=$PKI/server.pem -Dtls.server.keyPath=$PKI/server.pk8" \
    it_launch_broker b5m 5.x "$M" "${common[@]}" brokerClusterName=MtlsCluster
drv_start t5 5.x "${TLS[@]}"
drv_start t49 4.9-client "${TLS[@]}"
drv_start plain 5.x
drv_start m5 5.x "${MTLS[@]}"
it_await_broker b49
it_await_broker b5
it_await_broker b5m
B49=127.0.0.1:$b49_port
B5=127.0.0.1:$b5_port
B5M=127.0.0.1:$b5m_port

# lists <driver> <namesrv> <broker name> <addr>...: clusterList through that NameServer shows
# every one of the brokers.
lists() {
    local d=$1 ns=$2
    shift 2
    adm "$d" clusterList -n "$ns"
    while [[ $# -gt 0 ]]; do
        awk -v n="$1" -v a="$2" '$2 == n && $4 == a {found = 1} END {exit !found}' <<<"$R" ||
            return 1
        shift 2
    done
}

log_has() { grep -qE -- "$2" "$1"; }

# ---- 1: brokers register over TLS -------------------------------------------------------------
it_log "-- 1: registration over TLS"
eventually 40 "4.9.7 and 5.5.0 brokers registered with the permissive nsP over TLS" \
    lists t5 "$P" b49 "$B49" b5 "$B5"
eventually 20 "both brokers registered with the enforcing nsE over TLS" \
    lists t5 "$E" b49 "$B49" b5 "$B5"
eventually 40 "the mutual-TLS 5.5.0 broker registered with nsM" lists m5 "$M" b5m "$B5M"
for ns in nsP nsE; do
    d=${ns}_dir
    it_check "$ns: the brokers' connections are TLS sessions" \
        log_has "${!d}/namesrv.log" "TLS handshake done: TLSv1\\.[23]"
    it_check "$ns: REGISTER_BROKER served" log_has "${!d}/namesrv.log" "code=103 \\(REGISTER_BROKER\\)"
done
it_check "nsM: the broker presented our CA-signed client certificate" \
    log_has "$nsM_dir/namesrv.log" "peer certificate CN=test-client"

# ---- 2: clients over TLS ----------------------------------------------------------------------
it_log "-- 2: producers, push consumers and mqadmin over TLS"
# pubsub <driver> <namesrv> <tag>: a producer sends N bodies to a new topic (created by the
# first send), a push consumer of a new group receives all of them.
pubsub() {
    local d=$1 ns=$2 tag=$3
    drv "$d" producer "p$tag" "$ns" "it_p$tag" -
    has "$tag: producer on $ns starts" "producer p$tag started"
    drv "$d" send "p$tag" "T$tag" "$tag" "$N" 3
    has "$tag: producer sends $N messages" "sent $N/$N "
    drv "$d" consumer "c$tag" "$ns" "it_c$tag" "T$tag" -
    has "$tag: push consumer starts" "consumer c$tag started"
    drv "$d" await "c$tag" "$tag" "$N" 120000
    has "$tag: push consumer receives all $N" "received $N/$N "
    drv "$d" close "c$tag"
    drv "$d" close "p$tag"
}
pubsub t5 "$P" tls5perm
pubsub t5 "$E" tls5enf
pubsub t49 "$E" tls49enf
pubsub m5 "$M" mtls5
adm t49 topicList -n "$E"
has "4.9.8 mqadmin over TLS lists topics of nsE" "Ttls49enf"

# Plaintext: served by the permissive server, refused by the enforcing one.
adm plain topicList -n "$P"
has "plaintext 5.5.0 mqadmin is served by the permissive nsP" "Ttls5perm"
adm plain topicList -n "$E"
lacks "plaintext mqadmin gets nothing from the enforcing nsE" "Ttls5enf"
it_check "nsE logs the refused plaintext connection" log_has "$nsE_dir/namesrv.log" \
    "plaintext request, but tls.server.mode is enforcing"
# Mutual TLS: a TLS client without a certificate is refused by nsM.
adm t5 topicList -n "$M"
lacks "a TLS client without a certificate gets nothing from nsM" "Tmtls5"
it_check "nsM logs the refused handshake" log_has "$nsM_dir/namesrv.log" \
    "TLS handshake failed: peer did not return a certificate"

# The Go client, over TLS to the NameServer and the broker.
# The topic is created by the first send, on both brokers (autoCreateTopicEnable).
run_client go-tls 3 "$GO_TLS_CLIENT" -namesrv "$P" -topic "GoTls_$$_$RANDOM" -n "$N" -brokers b5,b49

# ---- 3: HAProxy ---------------------------------------------------------------------------------
it_log "-- 3: through HAProxy (PROXY v1 and v2)"
eventually 40 "both brokers registered with nsH through HAProxy" \
    lists t5 "$H2" b49 "$B49" b5 "$B5"
pubsub t5 "$H2" hap5
# The broker's own socket to HAProxy is the peer nsH names, not HAProxy's from 127.0.0.2.
# local_port <pid> <port>: the local port of the process's connection to 127.0.0.1:<port>.
local_port() {
    ss -Htnp state established "( dport = :$2 )" | grep "pid=$1," | awk '{print $3}' |
        sed 's/.*://' | head -1
}
for b in b49:v1:$hap_v1 b5:v2:$hap_v2; do
    IFS=: read -r name ver port <<<"$b"
    pidv=${name}_pid
    lp=$(local_port "${!pidv}" "$port")
    if [[ -n $lp ]]; then
        it_check "nsH names $name's own address 127.0.0.1:$lp (PROXY $ver header)" \
            log_has "$nsH_dir/namesrv.log" "connection 127\\.0\\.0\\.2:[0-9]+ id=[0-9]+: client 127\\.0\\.0\\.1:$lp \\(PROXY $ver header\\)"
        it_check "nsH logs $name's REGISTER_BROKER with peer 127.0.0.1:$lp" \
            log_has "$nsH_dir/namesrv.log" "peer=127\\.0\\.0\\.1:$lp code=103 "
    else
        it_record fail "$name has a connection to HAProxy port $port (ss)"
    fi
done
it_check "nsH never names HAProxy's address as a peer" \
    bash -c "! grep -qE 'peer=127\\.0\\.0\\.2' '$nsH_dir/namesrv.log'"
it_check "nsH: a TLS client came through the send-proxy-v2 frontend" \
    log_has "$nsH_dir/namesrv.log" "TLS handshake done"

# ---- 4: a TLS client whose connection is cut, and a restart ------------------------------------
it_log "-- 4: reconnecting after the server cut the connection, and after a restart"
eventually 40 "the 5.5.0 broker registered with nsR over TLS" lists t5 "$RS" b5 "$B5"
# handshakes_done <log>: the TLS handshakes nsR logged so far.
handshakes_done() { grep -c 'TLS handshake done' "$1" || true; }
drv t5 producer prc "$RS" it_prc -
has "a TLS producer on nsR starts" "producer prc started"
drv t5 send prc TrcBefore rcb "$N" 3
has "it sends $N messages to a topic routed by nsR" "sent $N/$N "
# Cut from the server's side: ss -K aborts nsR's end of every connection but the broker's (the
# client gets a reset), as a server that drops a peer would.
b5_local=$(local_port "$b5_pid" "$nsR_port")
before=$(handshakes_done "$nsR_dir/namesrv.log")
cut=0
if [[ -n $b5_local ]]; then
    cut=$(ss -K -Htn state established "( sport = :$nsR_port and dport != :$b5_local )" |
        wc -l) || true
else
    it_record fail "b5 has a connection to nsR (ss)"
fi
it_check "ss -K cut the client's TLS connection on nsR's side (needs CAP_NET_ADMIN)" \
    test "$cut" -ge 1
drv t5 send prc TrcCut rcc "$N" 3
has "after the cut, the producer reconnects and sends $N messages to a new topic" "sent $N/$N "
it_check "nsR saw a new TLS handshake after the cut" \
    test "$(handshakes_done "$nsR_dir/namesrv.log")" -gt "$before"
# A restart with the route snapshot: new ticket keys, the client gets a full handshake.
cp "$nsR_dir/namesrv.log" "$nsR_dir/namesrv.log.before-restart"
it_stop_mqnamesrv nsR
: >"$nsR_dir/namesrv.log"
it_start_mqnamesrv nsR "${ns_common[@]}" "${ns_reconnect[@]}" --set listenPort="$nsR_port"
it_check "nsR restarted with its route snapshot" \
    grep -q "route snapshot .* loaded" "$nsR_dir/namesrv.log" "$nsR_dir/stdout"
drv t5 send prc TrcRestart rcr "$N" 3
has "after the restart, the producer reconnects and sends $N messages to a new topic" "sent $N/$N "
drv t5 send prc TrcBefore rcb2 "$N" 3
has "... and to the topic it used before" "sent $N/$N "
drv t5 close prc
it_check "the restarted nsR served TLS handshakes" grep -q 'TLS handshake done' "$nsR_dir/namesrv.log"
it_check "nsR refused no handshake (a session it cannot resume is a full handshake, no alert)" \
    bash -c "! grep -hq 'TLS handshake failed' '$nsR_dir/namesrv.log' '$nsR_dir/namesrv.log.before-restart'"
resumed=$(cat "$nsR_dir/namesrv.log.before-restart" "$nsR_dir/namesrv.log" | grep -c '(resumed)' || true)
it_log "nsR: $resumed of the TLS handshakes resumed a session (RocketMQ's Java clients offer none)"

# ---- the end ------------------------------------------------------------------------------------
for ns in nsP nsE nsM nsH nsR; do
    d=${ns}_dir
    bad=$(grep -E ' ERROR | runtime error' "${!d}/namesrv.log" || true)
    it_check "$ns logged no ERROR line" test -z "$bad"
    [[ -z $bad ]] || printf '%s\n' "$bad" | head -10 >&2
done
for ns in nsP nsE nsM nsH nsR; do
    it_stop_mqnamesrv "$ns"
done
it_finish
