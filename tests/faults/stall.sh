#!/usr/bin/env bash
# The server itself stalled (issue 23; docs/route.md, Stalls): SIGSTOP for longer than the
# brokers' timeout and the idle timeout, then SIGCONT. Java's scan then expires every broker at
# once, before the registrations waiting in their sockets are read. mqnamesrv's scan notices its
# own stall (much more time since its last run than its interval) and gives each broker a
# registration period to be heard; each I/O loop does not count the stall against its
# connections' idle time. The live brokers stay, the client stays connected, a broker that really
# died during the stall still expires, and the stall is logged once and counted.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out, _metrics are set by fs_start (printf -v)
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fs_init stall

fs_start st -- --set scanNotActiveBrokerInterval=1000 --set serverChannelMaxIdleTimeSeconds=5
A=$(fs_addr st)
for b in st-b1 st-b2 st-dead; do
    # Each waits for an answer as long as a real broker does (registerBrokerTimeoutMills, 24 s):
    # the stall must not make it give up on its connection.
    fs_bg "$FS_WORK/$b.out" "$FAULT_PEER" broker "$A" --name "$b" --timeout-ms 4000 \
        --period-ms 1000 --answer-ms 24000 --seconds 240
done
dead_pid=$FS_BG
fs_bg "$FS_WORK/client.out" "$FAULT_PEER" hold "$A" --conns 2 --seconds 240 --topic st-b1-t0
live() { # live <broker ...>: every one is registered
    local b
    for b in "$@"; do
        fs_has_broker "$A" "$b" || return 1
    done
}
gone() {
    ! fs_has_broker "$A" "$1"
}
metric() {
    fs_metric st "$1"
}
fs_eventually 30 "three brokers register" live st-b1 st-b2 st-dead
fs_eventually 30 "a client is served" grep -q 'answered=2 waiting=0 failed=0' "$FS_WORK/client.out"

# The dead broker stops a moment before the server does: its connection stays open, silent.
kill -STOP "$dead_pid"
kill -STOP "$st_pid"
fs_log "server stopped (SIGSTOP) for 10 s: longer than the brokers' 4 s and the idle 5 s"
sleep 10
kill -CONT "$st_pid"
fs_log "server continued (SIGCONT)"
sleep 2
fs_check "the live brokers are still registered after the stall" live st-b1 st-b2
fs_eventually 30 "the stall is counted" \
    fs_metric_ge st 'mqnamesrv_stalls_detected_total{timer="broker_scan"}' 1
fs_check "every loop noticed it too" \
    fs_ge "$(metric 'mqnamesrv_stalls_detected_total{timer="idle_check"}')" 1
# (The dead one at least: a live one's registration may have been read before the scan ran.)
fs_check "the brokers past their timeout were spared" \
    fs_ge "$(metric mqnamesrv_brokers_spared_after_stall_total)" 1
fs_check "the stall is logged once" \
    test "$(fs_count "$st_out" 'the server did not run for')" -eq 1
fs_eventually 30 "the broker that died during the stall goes after its grace" gone st-dead
# (Expired after its grace, or unregistered when its silent connection was cut as idle: both
# are right for it, and nothing else may have left.)
n=$(($(metric 'mqnamesrv_broker_unregistrations_total{reason="expiry"}') + \
    $(metric 'mqnamesrv_broker_unregistrations_total{reason="connection_close"}')))
fs_check "it is the only broker removed ($n removals)" test "$n" = 1
# (The dead broker's own silent connection may be: that is right.)
fs_check "no live connection was closed as idle" \
    test "$(metric 'mqnamesrv_connections_cut_total{reason="idle"}')" -le 1
sleep 3
fs_check "the client was served throughout, its connections kept" \
    bash -c "tail -1 '$FS_WORK/client.out' | grep -q 'answered=2 waiting=0 failed=0'"
fs_check "the live brokers are still registered" live st-b1 st-b2
kill -CONT "$dead_pid"
fs_stop st
fs_finish
