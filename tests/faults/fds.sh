#!/usr/bin/env bash
# File descriptors (issue 23; docs/operations.md, Faults): the process at its open-files limit
# (prlimit on the running server), first exactly at it, then below what it already holds (where
# libuv's reserve-descriptor trick has nothing left to close and would call accept() without end).
# mqnamesrv must not spin, must go on serving the peers it has, and must let new peers in once
# descriptors are free again; the pause is logged once and counted.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out, _metrics are set by fs_start (printf -v)
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fs_init fds

last() { # last <hold output> <field>: the field of its last line (answered, waiting, ...)
    tail -1 "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}
all_answered() { # all_answered <hold output> <n>: the last second answered n reads
    [[ $(last "$1" answered) == "$2" ]]
}
some_answered() { # some_answered <hold output>: the last second answered at least one read
    local a
    a=$(last "$1" answered)
    [[ -n $a && $a -gt 0 ]]
}
waiting_many() { # waiting_many <hold output> <n>: at least n reads wait, no connection failed
    local w f
    w=$(last "$1" waiting)
    f=$(last "$1" failed)
    [[ -n $w && $w -ge $2 && $f == 0 ]]
}
cpu_ticks() { # cpu_ticks <pid>: user + system CPU of the process, in clock ticks
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
open_fds() {
    find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l
}
livez() {
    curl -sf --max-time 5 "http://$fd_metrics/livez" >/dev/null
}

fs_start fd -- --set scanNotActiveBrokerInterval=1000
A=$(fs_addr fd)
fs_bg "$FS_WORK/b1.out" "$FAULT_PEER" broker "$A" --name fd-b1 --seconds 240
fs_eventually 30 "a broker registers" fs_has_broker "$A" fd-b1
fs_bg "$FS_WORK/kept.out" "$FAULT_PEER" hold "$A" --conns 20 --seconds 240 --topic fd-b1-t0
fs_bg "$FS_WORK/freed.out" "$FAULT_PEER" hold "$A" --conns 10 --seconds 240 --topic fd-b1-t0
freed_pid=$FS_BG
fs_eventually 30 "20 peers are served" all_answered "$FS_WORK/kept.out" 20
fs_eventually 30 "10 more peers are served" all_answered "$FS_WORK/freed.out" 10

# ---- 1. Exactly at the limit: not one descriptor left -------------------------------------
# Only the soft limit moves: raising a hard limit again needs CAP_SYS_RESOURCE.
hard=$(prlimit --pid "$fd_pid" --nofile --output HARD --noheadings | tr -d ' ')
n=$(open_fds "$fd_pid")
prlimit --pid "$fd_pid" --nofile="$n:$hard"
fs_log "open files limit of the server set to $n, what it holds"
cpu0=$(cpu_ticks "$fd_pid")
fs_bg "$FS_WORK/new.out" "$FAULT_PEER" hold "$A" --conns 30 --seconds 240 --topic fd-b1-t0
# (A descriptor the server frees meanwhile, an exporter scrape's say, lets one of them in.)
fs_eventually 30 "new peers connect (the kernel's backlog) and wait" waiting_many "$FS_WORK/new.out" 25
sleep 5
fs_check "the peers it had are served at the limit" all_answered "$FS_WORK/kept.out" 20
fs_check "the new peers are still waiting, none dropped" waiting_many "$FS_WORK/new.out" 25
ticks=$(($(cpu_ticks "$fd_pid") - cpu0))
hz=$(getconf CLK_TCK)
fs_check "no spin: $ticks CPU ticks ($hz a second) in the ~8 s at the limit" \
    test "$ticks" -lt $((hz * 4))
said=$(fs_count "$fd_out" 'accept failed: Too many open files')
fs_check "the pause is logged once per streak, not per attempt ($said lines)" \
    test "$said" -ge 1 -a "$said" -le 3

kill -TERM "$freed_pid"
fs_log "10 peers closed their connections"
fs_eventually 30 "new peers get in as descriptors free up" some_answered "$FS_WORK/new.out"
fs_check "the peers it had are still served" all_answered "$FS_WORK/kept.out" 20
prlimit --pid "$fd_pid" --nofile="$hard:$hard"
fs_eventually 30 "every new peer is served once the limit is raised" \
    all_answered "$FS_WORK/new.out" 30
fs_check "the listener says it accepts again" grep -q 'accepting connections again' "$fd_out"
fs_eventually 30 "/livez answers (the exporter too was at the limit)" livez
fs_check "the pauses are counted" fs_ge "$(fs_metric fd mqnamesrv_accept_pauses_total)" 1

# ---- 2. Below what it holds: libuv's reserve descriptor would be gone --------------------
pauses=$(fs_metric fd mqnamesrv_accept_pauses_total)
said_before=$(grep -c 'accept failed' "$fd_out")
n=$(open_fds "$fd_pid")
prlimit --pid "$fd_pid" --nofile=$((n - 5)):"$hard"
fs_log "open files limit of the server set to $((n - 5)), below the $n it holds"
cpu0=$(cpu_ticks "$fd_pid")
fs_bg "$FS_WORK/more.out" "$FAULT_PEER" hold "$A" --conns 5 --seconds 240 --topic fd-b1-t0
fs_eventually 30 "more new peers connect and wait" waiting_many "$FS_WORK/more.out" 5
sleep 5
fs_check "the peers it had are served below the limit" all_answered "$FS_WORK/kept.out" 20
ticks=$(($(cpu_ticks "$fd_pid") - cpu0))
fs_check "no spin below the limit: $ticks CPU ticks in the ~8 s" test "$ticks" -lt $((hz * 4))
said=$(($(grep -c 'accept failed' "$fd_out") - said_before))
fs_check "no spin below the limit: $said more line(s) say the listener pauses (a spin: thousands)" \
    test "$said" -ge 1 -a "$said" -le 3
prlimit --pid "$fd_pid" --nofile="$hard:$hard"
fs_eventually 30 "they are served once descriptors are free" all_answered "$FS_WORK/more.out" 5
fs_eventually 30 "/livez answers again" livez
fs_check "the new pauses are counted" \
    fs_ge "$(fs_metric fd mqnamesrv_accept_pauses_total)" $((pauses + 1))
fs_check "the broker was never expired" \
    test "$(fs_metric fd 'mqnamesrv_broker_unregistrations_total{reason="expiry"}')" = 0
fs_stop fd
fs_finish
