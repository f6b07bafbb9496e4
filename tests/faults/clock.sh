#!/usr/bin/env bash
# Clocks (issue 23; docs/operations.md, Faults): the wall clock of the running server jumps
# forward 5 minutes, back 5 minutes, and back 5 more just after a broker fell silent
# (libfaketime's timestamp file, the
# monotonic clock left alone as a real clock step leaves it). No live broker may be expired and
# no dead one kept: mqnamesrv expires on the monotonic clock (uv_now, ns_now_ms). Each step is
# logged once and counted (mqnamesrv_wall_clock_jumps_total).
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out, _metrics are set by fs_start (printf -v)
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fs_init clock
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $faketime_lib ]] || {
    echo "!!!!!!!! FAULTS: no $faketime_lib (Debian's libfaketime): install it" >&2
    exit 1
}

clock=$FS_WORK/faketime
echo "+0" >"$clock"
fs_start clk --env "LD_PRELOAD=$(fs_sanitizer_runtime) $faketime_lib" \
    --env "FAKETIME_TIMESTAMP_FILE=$clock" --env FAKETIME_DONT_FAKE_MONOTONIC=1 \
    --env FAKETIME_CACHE_DURATION=1 -- --set scanNotActiveBrokerInterval=1000
A=$(fs_addr clk)
fs_bg "$FS_WORK/b1.out" "$FAULT_PEER" broker "$A" --name clk-b1 --timeout-ms 6000 --seconds 240
fs_bg "$FS_WORK/b2.out" "$FAULT_PEER" broker "$A" --name clk-b2 --timeout-ms 6000 --seconds 240
b2_pid=$FS_BG
both_live() {
    fs_has_broker "$A" clk-b1 && fs_has_broker "$A" clk-b2
}
gone() { # gone <broker>
    ! fs_has_broker "$A" "$1"
}
expired() {
    fs_metric clk 'mqnamesrv_broker_unregistrations_total{reason="expiry"}'
}
jumps_at_least() {
    fs_ge "$(fs_metric clk mqnamesrv_wall_clock_jumps_total)" "$1"
}
fs_eventually 30 "two brokers register" both_live

step() { # step <offset> <n>: sets the fake clock's offset, waits for the n-th logged jump
    echo "$1" >"$clock"
    fs_eventually 30 "the jump to $1 is noticed and counted" jumps_at_least "$2"
    sleep 8 # longer than the brokers' timeout
    fs_check "after the jump to $1, both live brokers are still registered" both_live
    fs_check "after the jump to $1, no broker was expired" test "$(expired)" = 0
}
step "+300" 1
fs_check "the forward jump is logged" grep -q 'the wall clock jumped forward by [23][0-9]\{5\} ms' "$clk_out"
step "+0" 2
fs_check "the backward jump is logged" grep -q 'the wall clock jumped back by [23][0-9]\{5\} ms' "$clk_out"

# A broker goes silent, then the clock steps 5 minutes back: its last heartbeat is now 5
# minutes "in the future" on the wall clock, yet it must expire after its 6 s.
kill -STOP "$b2_pid"
fs_log "broker clk-b2 is silent from now on (stopped, its connection open)"
echo "-300" >"$clock"
fs_eventually 30 "the jump to -300 is noticed and counted" jumps_at_least 3
fs_eventually 40 "the silent broker expires after its timeout, not 5 minutes later" gone clk-b2
fs_check "the expiry is counted" test "$(expired)" = 1
fs_check "the live broker is still registered" fs_has_broker "$A" clk-b1
kill -CONT "$b2_pid"
fs_stop clk
fs_finish
