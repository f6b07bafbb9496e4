#!/usr/bin/env bash
# Disk faults (issue 23; docs/operations.md, Faults): a full disk (ENOSPC, on a small tmpfs of
# our own) and a failing one (EIO, short writes, a failing fsync: fiu-run's POSIX preload, on the
# system calls of exactly one file's writer), under kvConfig.json, the -c config file that
# UPDATE_NAMESRV_CONFIG rewrites, the route snapshot and the log; then an fsync that takes as
# long as the test holds it (slow_fsync.so), during which registrations and route reads must
# not wait. mqnamesrv keeps serving, acknowledges nothing that is not on disk, logs one line per
# failure streak, counts it, and heals by itself once the disk does.
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out, _metrics are set by fs_start (printf -v)
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fs_init disk
fs_require fiu-run fiu-ctrl jq
FAULT_SLOW_FSYNC=${FAULT_SLOW_FSYNC:-$FS_ROOT/build/debug/tests/libfault_slow_fsync.so}
[[ -f $FAULT_SLOW_FSYNC ]] || { echo "faults: no $FAULT_SLOW_FSYNC (build first)" >&2; exit 1; }

put() { # put <ns> <namespace> <key> <value>: prints the answer ("code=N remark=R")
    "$FAULT_PEER" request "$(fs_addr "$1")" 100 namespace="$2" key="$3" value="$4"
}
get() { # get <ns> <namespace> <key>: the value, exit 1 when there is none
    "$NSADMIN_BIN" getKvConfig -n "$(fs_addr "$1")" -s "$2" -k "$3" 2>/dev/null
}
absent() { # absent <ns> <namespace> <key>
    ! get "$@" >/dev/null
}
update_config() { # update_config <ns> <key=value>: 318, prints the answer
    "$FAULT_PEER" request "$(fs_addr "$1")" 318 --body "$2"
}
config_shows() { # config_shows <ns> <key> <value>: 319 shows key=value
    local out
    out=$("$NSADMIN_BIN" getNamesrvConfig -n "$(fs_addr "$1")" 2>/dev/null) || return 1
    grep -qE "^ *$2 *= *$3\$" <<<"$out"
}
route_ok() { # route_ok <ns> <topic>: a route read answers with the route
    "$NSADMIN_BIN" topicRoute -n "$(fs_addr "$1")" -t "$2" >/dev/null 2>&1
}
has_broker() { # has_broker <ns> <broker name>
    fs_has_broker "$(fs_addr "$1")" "$2"
}
answered() { # answered <file> <code>: the request's output file says code=<code>
    grep -q "^code=$2 " "$1" 2>/dev/null
}

# ---- 1. A full disk (ENOSPC): every file of the server on one small tmpfs ----------------------
disk=$FS_WORK/full
fs_mount_tmpfs "$disk" 2m
fs_start full --dir "$disk" -- --set routeSnapshotIntervalMillis=300 \
    --set scanNotActiveBrokerInterval=1000
fs_bg "$FS_WORK/full-b1.out" "$FAULT_PEER" broker "$(fs_addr full)" --name full-b1 --seconds 240
fs_eventually 30 "a broker registers" has_broker full full-b1
fs_check "a KV write before the fault is acknowledged" answered <(put full FAULT k_before v1) 0
fs_eventually 30 "the route snapshot is written" fs_metric_ge full \
    mqnamesrv_route_snapshot_writes_total 1

fs_fill "$disk"
fs_log "tmpfs $disk is full: $(df -h "$disk" | tail -1)"
out=$(put full FAULT k_during v2)
fs_check "a KV write on the full disk is refused (code 1, the reason): $out" \
    grep -q '^code=1 remark=persist kvConfig failed: .*space' <<<"$out"
fs_check "the refused write is undone: its key is absent" absent full FAULT k_during
fs_check "what was acknowledged before is still there" test "$(get full FAULT k_before)" = v1
put full FAULT k_during2 v3 >/dev/null
fs_check "one ERROR line for the KV store's failure streak (two refused writes)" \
    test "$(fs_count "$full_out" 'persist kvconfig Exception')" -eq 1
fs_check "the KV store's failures are counted" \
    fs_metric_ge full 'mqnamesrv_persist_failures_total{store="kv"}' 2

out=$(update_config full "enableTopicList=false")
fs_check "an UPDATE_NAMESRV_CONFIG on the full disk answers code 1, in force: $out" \
    grep -q '^code=1 remark=persist config failed: .*in force' <<<"$out"
fs_check "the update is in force (319 shows it)" config_shows full enableTopicList false
fs_check "the config file's failure is counted" \
    fs_metric_ge full 'mqnamesrv_persist_failures_total{store="config"}' 1

fs_bg "$FS_WORK/full-b2.out" "$FAULT_PEER" broker "$(fs_addr full)" --name full-b2 --seconds 240
fs_eventually 30 "a second broker registers while the disk is full" has_broker full full-b2
fs_eventually 30 "the route snapshot's failure is counted" \
    fs_metric_ge full 'mqnamesrv_persist_failures_total{store="route_snapshot"}' 1
fs_eventually 30 "the log file's lost lines are counted" \
    fs_metric_ge full mqnamesrv_log_write_failures_total 1
fs_check "one line on stdout says the log file fails" \
    test "$(fs_count "$full_out" 'write failed: No space left on device; log lines go to stdout')" -eq 1
fs_check "route reads are served while the disk is full" route_ok full full-b1-t0
fs_check "a KV read is served while the disk is full" test "$(get full FAULT k_before)" = v1

rm -f "$disk/filler"
fs_log "tmpfs $disk has room again"
fs_eventually 60 "the config file is written again by itself (the update in it)" \
    grep -q '^enableTopicList=false' "$disk/namesrv.conf"
fs_eventually 30 "the route snapshot is written again by itself" \
    grep -q 'route snapshot .* written' "$full_out"
fs_eventually 30 "the log file says how many lines it lost" \
    grep -q 'writable again: [0-9]* line(s) were lost' "$disk/namesrv.log"
fs_check "a KV write after the fault is acknowledged" answered <(put full FAULT k_after v4) 0
fs_check "one WARN line says the KV store writes again" \
    test "$(fs_count "$full_out" 'persist kvconfig '"$disk"'/kvConfig.json: written again')" -eq 1
fs_stop full
fs_start full --dir "$disk" -- --set routeSnapshotIntervalMillis=300
fs_check "after a restart: what was acknowledged before the fault is there" \
    test "$(get full FAULT k_before)" = v1
fs_check "after a restart: what was acknowledged after it is there" \
    test "$(get full FAULT k_after)" = v4
fs_check "after a restart: nothing refused came back" bash -c "! grep -q k_during '$disk/kvConfig.json'"
fs_check "after a restart: the config update is in force" config_shows full enableTopicList false
fs_check "after a restart: the route snapshot loads" grep -q 'route snapshot .* loaded' "$full_out"
fs_stop full
fs_umount "$disk"

# ---- 2. A failing disk (EIO, short writes), on exactly one writer's calls (fiu) -------------
fs_start eio --fiu -- --set routeSnapshotIntervalMillis=300 \
    --set scanNotActiveBrokerInterval=1000
fiu() { fiu-ctrl -c "$1" "$eio_pid"; }
fail_in() { # fail_in <point> <function>: the point fails with EIO inside that function only
    fiu "enable_stack_by_name name=$1,failinfo=5,func_name=$2"
}
fs_bg "$FS_WORK/eio-b1.out" "$FAULT_PEER" broker "$(fs_addr eio)" --name eio-b1 --seconds 240
fs_eventually 30 "a broker registers (under fiu-run)" has_broker eio eio-b1

fail_in posix/io/rw/write ns__kv_write_file
out=$(put eio FAULT k_eio v1)
fs_check "EIO on kvConfig.json's write: code 1 with the reason: $out" \
    grep -q '^code=1 remark=persist kvConfig failed: .*[Ii]/[Oo] error' <<<"$out"
fs_check "the refused write is undone" bash -c "! grep -q k_eio '$eio_dir/kvConfig.json' 2>/dev/null"
fs_check "registrations go on meanwhile" route_ok eio eio-b1-t0
fiu "disable name=posix/io/rw/write"
fail_in posix/io/sync/fsync ns__kv_write_file
out=$(put eio FAULT k_fsync v1)
fs_check "EIO on kvConfig.json's fsync: code 1 (never retried on the same file): $out" \
    grep -q '^code=1 ' <<<"$out"
fiu "disable name=posix/io/sync/fsync"
fs_check "once the disk works: a KV write is acknowledged" answered <(put eio FAULT k_ok v1) 0
long=$(printf 'x%.0s' $(seq 1 3000))
fiu "enable_stack_by_name name=posix/io/rw/write/reduce,func_name=ns__kv_write_file"
fs_check "short writes of kvConfig.json: the write is completed and acknowledged" \
    answered <(put eio FAULT k_short "$long") 0
fiu "disable name=posix/io/rw/write/reduce"
fs_check "the file holds the whole value after short writes" \
    test "$(jq -r '.configTable.FAULT.k_short' "$eio_dir/kvConfig.json")" = "$long"

fail_in posix/io/rw/write ns__config_write_file
out=$(update_config eio "enableTopicList=false")
fs_check "EIO on the config file: code 1, in force: $out" \
    grep -q '^code=1 remark=persist config failed: .*in force' <<<"$out"
fiu "disable name=posix/io/rw/write"
fs_eventually 60 "the config file is written again by itself" \
    grep -q '^enableTopicList=false' "$eio_dir/namesrv.conf"

fail_in posix/io/rw/write ns_snapshot_write
fs_bg "$FS_WORK/eio-b2.out" "$FAULT_PEER" broker "$(fs_addr eio)" --name eio-b2 --seconds 240
fs_eventually 30 "EIO on the route snapshot is counted" \
    fs_metric_ge eio 'mqnamesrv_persist_failures_total{store="route_snapshot"}' 1
fs_check "route reads are served meanwhile" route_ok eio eio-b2-t0
fiu "disable name=posix/io/rw/write"
fs_eventually 30 "the route snapshot is written again by itself" \
    grep -q 'route snapshot .* written' "$eio_out"

# (The snapshot writer's own log lines failed with it, as they ran inside ns_snapshot_write.)
lost=$(fs_metric eio mqnamesrv_log_write_failures_total)
said=$(fs_count "$eio_out" 'write failed: Input/output error; log lines go to stdout')
fail_in posix/io/rw/write ns__log_write_file
fs_eventually 30 "EIO on the log file is counted" \
    fs_metric_ge eio mqnamesrv_log_write_failures_total $((lost + 1))
fs_check "one line on stdout says the log file fails" \
    test "$(fs_count "$eio_out" 'write failed: Input/output error; log lines go to stdout')" -eq $((said + 1))
fiu "disable name=posix/io/rw/write"
fs_eventually 30 "the log file takes lines again and says how many it lost" \
    grep -q 'writable again: [0-9]* line(s) were lost' "$eio_dir/namesrv.log"
fs_stop eio

# ---- 3. An fsync that takes as long as we hold it: nothing but the KV answers waits ---------
gate=$FS_WORK/fsync.gate
fs_start slow --env "LD_PRELOAD=$FAULT_SLOW_FSYNC" --env "FAULT_FSYNC_GATE=$gate" \
    --env FAULT_FSYNC_MATCH=kvConfig.json -- --set scanNotActiveBrokerInterval=1000
fs_bg "$FS_WORK/slow-b1.out" "$FAULT_PEER" broker "$(fs_addr slow)" --name slow-b1 --period-ms 500 --seconds 240
fs_eventually 30 "a broker registers" has_broker slow slow-b1
writes_before=$(fs_metric slow 'mqnamesrv_persist_writes_total{store="kv"}')
touch "$gate"
fs_bg "$FS_WORK/put1.out" "$FAULT_PEER" request "$(fs_addr slow)" 100 namespace=SLOW key=k1 \
    value=v1 --timeout-ms 200000
fs_eventually 30 "the KV write's fsync is held" test -e "$gate.waiting"
for k in k2 k3; do
    fs_bg "$FS_WORK/put-$k.out" "$FAULT_PEER" request "$(fs_addr slow)" 100 namespace=SLOW \
        key=$k value=v1 --timeout-ms 200000
done
fs_eventually 30 "the writes made meanwhile are visible (applied, not yet on disk)" \
    bash -c "'$NSADMIN_BIN' getKvConfig -n $(fs_addr slow) -s SLOW -k k2 && '$NSADMIN_BIN' getKvConfig -n $(fs_addr slow) -s SLOW -k k3"
# While the fsync is held: new brokers register, routes and KV values are read.
"$FAULT_PEER" broker "$(fs_addr slow)" --name slow-b2 --period-ms 300 --seconds 3 \
    >"$FS_WORK/b2.out"
fs_check "a new broker registers while a KV fsync is held" grep -q registered "$FS_WORK/b2.out"
fs_check "route reads are served while a KV fsync is held" route_ok slow slow-b1-t0
fs_check "the held write's value is visible to readers (as in Java)" test "$(get slow SLOW k1)" = v1
fs_check "a heartbeat keeps the first broker alive meanwhile" has_broker slow slow-b1
fs_check "the KV write is not acknowledged while its fsync is held" test ! -s "$FS_WORK/put1.out"
fs_check "the fsync is still held" test -e "$gate.waiting"
rm -f "$gate"
fs_eventually 60 "the held KV write is acknowledged once its fsync returns" \
    answered "$FS_WORK/put1.out" 0
fs_eventually 30 "the writes made meanwhile are acknowledged" \
    bash -c "grep -q '^code=0 ' '$FS_WORK/put-k2.out' && grep -q '^code=0 ' '$FS_WORK/put-k3.out'"
writes=$(($(fs_metric slow 'mqnamesrv_persist_writes_total{store="kv"}') - writes_before))
fs_check "the three writes took two file writes (the two made meanwhile coalesced): $writes" \
    test "$writes" -eq 2
fs_stop slow

fs_finish
