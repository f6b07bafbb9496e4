#!/usr/bin/env bash
# The network (issue 23; docs/operations.md, Faults): a broker and a client in a network
# namespace of their own, joined to two NameServers by a veth pair, behind a lossy link (10 %
# of packets dropped each way, iptables' statistic match), a slow one (tbf at 256 kbit/s each
# way, a registration of 100 topics) and a link cut towards one NameServer only (every packet
# dropped, silently, as a dead router does). This kernel has no sch_netem: loss and cuts are
# iptables rules in the namespace, slowness a token bucket.
#
# Lossy and slow: the broker is never expired. Cut: the NameServer behind the cut expires the
# broker after its timeout (never before) and closes its connection, and closes the client's as
# idle (no half-open connection is kept: TCP keepalive is off as in Java, the idle bound
# serverChannelMaxIdleTimeSeconds is what ends them); the other NameServer keeps the broker.
# Healed: the broker registers again and both NameServers agree (nsadmin compareNamesrv).
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out, _metrics are set by fs_start (printf -v)
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fs_init network
fs_require ip iptables tc shuf

fs_netns n
in_ns() { # (not for fs_bg: its pid must be the program's, which ip netns exec becomes)
    ip netns exec "$FS_NS" "$@"
}
TIMEOUT_MS=8000
fs_start na --bind "$FS_HOST_IP" -- --set scanNotActiveBrokerInterval=1000 \
    --set serverChannelMaxIdleTimeSeconds=12
fs_start nb --bind "$FS_HOST_IP" -- --set scanNotActiveBrokerInterval=1000 \
    --set serverChannelMaxIdleTimeSeconds=12
A=$(fs_addr na)
B=$(fs_addr nb)
fs_bg "$FS_WORK/broker.out" ip netns exec "$FS_NS" "$FAULT_PEER" broker "$A,$B" --name net-b1 \
    --timeout-ms $TIMEOUT_MS --period-ms 1000 --seconds 280
fs_bg "$FS_WORK/client.out" ip netns exec "$FS_NS" "$FAULT_PEER" hold "$A" --conns 1 --seconds 280 \
    --topic net-b1-t0

on() { # on <host:port> <broker>
    fs_has_broker "$1" "$2"
}
both_on() {
    on "$A" "$1" && on "$B" "$1"
}
off() {
    ! fs_has_broker "$1" "$2"
}
expired() { # expired <ns>
    fs_metric "$1" 'mqnamesrv_broker_unregistrations_total{reason="expiry"}'
}
repeats() {
    fs_metric "$1" mqnamesrv_broker_registrations_repeated_total
}
established_from_ns() { # established_from_ns <port>: connections from the namespace to it
    ss -Htn state established "( sport = :$1 )" | grep -c "$FS_NS_IP:" || true
}
fs_eventually 30 "the broker in the namespace registers with both NameServers" both_on net-b1
fs_eventually 30 "the client in the namespace is served" \
    grep -q 'answered=1 waiting=0 failed=0' "$FS_WORK/client.out"

# ---- 1. Lossy: 10 % of packets dropped each way -------------------------------------------
in_ns iptables -A INPUT -m statistic --mode random --probability 0.1 -j DROP
in_ns iptables -A OUTPUT -m statistic --mode random --probability 0.1 -j DROP
before=$(repeats na)
fs_log "link lossy (10 % each way) for 20 s"
sleep 20
in_ns iptables -F
fs_check "lossy link: the broker was never expired on A" test "$(expired na)" = 0
fs_check "lossy link: the broker was never expired on B" test "$(expired nb)" = 0
fs_check "lossy link: its registrations kept arriving" fs_ge "$(repeats na)" $((before + 10))
fs_check "lossy link: it is registered on both" both_on net-b1

# ---- 2. Slow: 256 kbit/s each way, a 100-topic registration ---------------------------------
tc qdisc add dev "$FS_NS_HOST_IF" root tbf rate 256kbit burst 16kbit latency 5s
in_ns tc qdisc add dev "$FS_NS_IF" root tbf rate 256kbit burst 16kbit latency 5s
fs_bg "$FS_WORK/big.out" ip netns exec "$FS_NS" "$FAULT_PEER" broker "$A,$B" --name net-big --topics 100 \
    --timeout-ms $TIMEOUT_MS --period-ms 1000 --seconds 30
fs_log "link slow (256 kbit/s each way) for 20 s, a broker of 100 topics behind it"
fs_eventually 30 "slow link: the large broker registers" on "$A" net-big
sleep 15
fs_check "slow link: no broker was expired on A" test "$(expired na)" = 0
fs_check "slow link: no broker was expired on B" test "$(expired nb)" = 0
fs_check "slow link: the client is still served" \
    bash -c "tail -1 '$FS_WORK/client.out' | grep -q 'failed=0'"
tc qdisc del dev "$FS_NS_HOST_IF" root
in_ns tc qdisc del dev "$FS_NS_IF" root
fs_eventually 40 "the large broker unregisters when it stops (its connection closes)" off "$A" net-big

# ---- 3. Cut towards A only: every packet dropped, silently ----------------------------------
in_ns iptables -A OUTPUT -p tcp -d "$FS_HOST_IP" --dport "$na_port" -j DROP
in_ns iptables -A INPUT -p tcp -s "$FS_HOST_IP" --sport "$na_port" -j DROP
cut_at=$(date +%s%N)
fs_log "link to A cut"
fs_eventually 60 "cut: A expires the broker" off "$A" net-b1
waited_ms=$((($(date +%s%N) - cut_at) / 1000000))
fs_check "cut: not before its timeout ($waited_ms ms after the cut; timeout $TIMEOUT_MS, period 1000)" \
    test "$waited_ms" -ge $((TIMEOUT_MS - 1000 - 500))
fs_check "cut: A says so" grep -q 'The broker channel expired, .* 8000ms' "$na_out"
fs_check "cut: A closed the broker's connection" \
    fs_ge "$(fs_metric na 'mqnamesrv_connections_cut_total{reason="broker_expired"}')" 1
fs_eventually 40 "cut: A closes the client's connection as idle (no half-open connection kept)" \
    fs_metric_ge na 'mqnamesrv_connections_cut_total{reason="idle"}' 1
none_established() {
    test "$(established_from_ns "$na_port")" -eq 0
}
fs_eventually 30 "cut: no connection from the namespace is established on A" none_established
fs_check "cut: B keeps the broker" on "$B" net-b1
fs_check "cut: B never expired it" test "$(expired nb)" = 0

# ---- 4. Healed ---------------------------------------------------------------------------
in_ns iptables -F
fs_log "link to A healed"
fs_eventually 60 "healed: the broker registers with A again" on "$A" net-b1
fs_eventually 60 "healed: both NameServers agree (nsadmin compareNamesrv)" \
    "$NSADMIN_BIN" compareNamesrv -n "$A;$B"
fs_stop na
fs_stop nb
fs_finish
