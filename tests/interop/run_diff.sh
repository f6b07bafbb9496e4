#!/usr/bin/env bash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir are set by the lib.sh launchers (printf -v)
# Differential test: the Java NameServer (rocketmq-namesrv 5.5.0, artifact set 5.x) and
# mqnamesrv (the ASan build) run side by side; tests/interop/replay.py replays every trace of
# tests/interop/traces/ against both and compares each reply (code, remark, extFields, body;
# see the header of replay.py for the trace format and the comparison rules). One check per
# trace; a failing one prints the first mismatches as a diff. Every trace runs twice: over
# plaintext, then over TLS (both servers in their default permissive mode).
#
#   tests/interop/run_diff.sh                 every trace, in name order
#   tests/interop/run_diff.sh traces/03_*.jsonl   only these
#
# Both servers get the same property set, so that GET_NAMESRV_CONFIG can be compared byte for
# byte: Java is given bindAddress=127.0.0.1 and, as unknown keys it lists like mqnamesrv lists
# its own, the logPath and portFile that lib.sh gives mqnamesrv. The traces run on one pair of
# servers, in order; each trace ends with no broker left (the replayer waits for that).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"
it_require java mvn python3
it_init diff

jdir=$IT_WORK/jns
it_start_java_namesrv jns 5.x bindAddress=127.0.0.1 "logPath=$jdir/mqnamesrv-only.log" \
    "portFile=$jdir/mqnamesrv-only.port"
it_start_mqnamesrv cns

it_check "replayer self test (the comparator can fail)" python3 "$here/replay.py" selftest

if [[ $# -gt 0 ]]; then
    traces=("$@")
else
    traces=("$here"/traces/*.jsonl)
fi
# replay_all <label> [replay.py options]: every trace against both servers.
replay_all() {
    local label=$1 trace name out
    shift
    for trace in "${traces[@]}"; do
        name=$(basename "$trace" .jsonl)
        out=$IT_WORK/$name$label.out
        if python3 "$here/replay.py" run --ref "127.0.0.1:$jns_port" --cand "127.0.0.1:$cns_port" \
            "$@" "$trace" >"$out" 2>&1; then
            it_record pass "diff$label $name: $(tail -1 "$out")"
        else
            it_record fail "diff$label $name: $(tail -1 "$out")"
            grep -v '^NOTE' "$out" | head -80 >&2
        fi
    done
}
replay_all ""
# The same traces over TLS: both servers run in Java's default mode (permissive, test-mode
# self-signed certificate), so TLS and plaintext are served on the same port.
replay_all " over TLS" --tls
# The deliberate differences the comparator allowed (counted), and any "equal as JSON but not
# as bytes" notes in full.
notes=$(cat "$IT_WORK"/*.out | grep '^NOTE' || true)
if [[ -n $notes ]]; then
    it_log "allowed deliberate differences (docs/compatibility.md), steps per entry:"
    grep -o "Deliberate differences, '[^']*'" <<<"$notes" | sort | uniq -c >&2 || true
    grep -v ': allowed: ' <<<"$notes" >&2 || true
fi

it_stop_mqnamesrv cns
it_finish
