#!/usr/bin/env bash
# Runs the whole test suite (tests/run) on fresh clones of this checkout's HEAD, N times in a row,
# while busy loops keep every CPU busy at normal priority: the proof that no test depends on an
# idle machine (CI machines are often loaded). The loops are bounded (--max-minutes, default 120)
# and stop with the script. Exits 0 only when every run passed; prints each run's time and the
# load average seen. Logs: <work>/run-<i>.log.
#   tests/tools/loaded_run.sh [--runs N] [--max-minutes M] [--work DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runs=2 max_minutes=120 work=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --max-minutes) max_minutes=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--max-minutes M] [--work DIR]" >&2; exit 2 ;;
  esac
done
work=${work:-$(mktemp -d /tmp/loaded-run.XXXXXX)}
mkdir -p "$work"

busy_pids=()
trap 'kill "${busy_pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq "$(nproc)"); do
  timeout "$((max_minutes * 60))" sh -c 'while :; do :; done' &
  busy_pids+=($!)
done
echo "== $(nproc) busy loops at normal priority (at most $max_minutes min): ${busy_pids[*]}"

failed=0
for i in $(seq "$runs"); do
  clone=$work/clone-$i
  rm -rf "$clone"
  git clone -q "$here" "$clone"
  start=$SECONDS
  if (cd "$clone" && tests/run) >"$work/run-$i.log" 2>&1; then
    verdict=passed
  else
    verdict=FAILED
    failed=1
  fi
  echo "== run $i of $runs: $verdict in $((SECONDS - start)) s (load average now: $(cut -d' ' -f1-3 /proc/loadavg)); log $work/run-$i.log"
  [[ $verdict == passed ]] || break
done
exit "$failed"
