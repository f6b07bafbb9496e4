#!/usr/bin/env bash
# container.sh: the mqnamesrv image (packaging/oci/build.sh) against a stand-in for Apache's
# image's NameServer, in podman on this machine, with the same run flags:
#   mqnamesrv  the image as built from this checkout (`nameserver`, its default command)
#   java       Debian bookworm (mmdebstrap, minbase) + openjdk-17-jre-headless + the Java
#              NameServer 5.5.0 and its dependencies from Maven Central (bench/java/pom.xml),
#              run as Apache's image runs it: user 3000, ROCKETMQ_HOME, the heap of
#              rocketmq-docker's runserver (-Xms1g -Xmx1g -Xmn512m; G1, CMS being gone in 17)
# Measured per image: its size (the compressed layers, what a pull moves, and unpacked, what
# podman stores); then --runs times: cold start to ready (from `podman run -d` to the first
# route answer through the published port, nsbench -w ready), RSS at idle (5 s after ready),
# and RSS at the peak and the rate of the route benchmark (nsbench -w route: 4 brokers x 1,000
# topics, width 4, 64 readers x 1, --duration s after a --warmup s pass), from /proc of the
# container's process; and podman's share of the start (until `podman run -d` returns).
# Prints a Markdown table (docs/performance.md, Containers).
#
#   bench/container.sh [--runs N] [--duration S] [--warmup S] [--out DIR]
#
# Needs root, podman, runc, mmdebstrap, umoci, java and mvn (for the classpath); builds the
# release preset's nsbench when missing. Bounded: every nsbench run has a fixed duration, every
# container is removed at the end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=3
duration=10
warmup=10
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
out=${out:-$here/build/bench-container}
mkdir -p "$out"
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
for tool in podman runc mmdebstrap umoci java mvn; do
  command -v "$tool" >/dev/null || { echo "container.sh: missing $tool" >&2; exit 2; }
done
nsbench=$here/build/release/bench/nsbench
if [[ ! -x $nsbench ]]; then
  log "building nsbench (release preset)"
  (cd "$here" && cmake --preset release >/dev/null && cmake --build build/release --target nsbench >/dev/null)
fi

# podman as the tests run it (tests/package/container.sh): plain, else runc + cgroupfs.
printf '[containers]\ndefault_ulimits = []\n' >"$out/containers.conf"
PM=(podman)
RUN_EXTRA=()
names=()
images=()
cleanup() {
  local n
  for n in "${names[@]}"; do "${PM[@]}" rm -f -v "$n" >/dev/null 2>&1 || true; done
  for n in "${images[@]}"; do "${PM[@]}" rmi "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

# ---- the images -------------------------------------------------------------------------------
tag=$$
ns_image=localhost/mqnamesrv-bench:$tag
java_image=localhost/namesrv-java-bench:$tag
images=("$ns_image" "$java_image")
log "building the mqnamesrv image"
"$here/packaging/oci/build.sh" --name "$ns_image" --out "$out/mqnamesrv.oci.tar" >"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; exit 1; }

cache=${XDG_CACHE_HOME:-$HOME/.cache}/mqnamesrv-oci
java_base=$cache/java-bench-bookworm.tar
if [[ ! -s $java_base ]]; then
  log "Java base root: mmdebstrap bookworm minbase + openjdk-17-jre-headless (first run only)"
  mmdebstrap --variant=minbase --format=tar --include=openjdk-17-jre-headless \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
    bookworm "$java_base.tmp" >"$out/mmdebstrap-java.log" 2>&1 || { tail -20 "$out/mmdebstrap-java.log" >&2; exit 1; }
  mv "$java_base.tmp" "$java_base"
fi
work=$(mktemp -d /tmp/container-bench.XXXXXX)
trap 'cleanup; rm -rf "$work"' EXIT
root=$work/java-root
mkdir -p "$root"
tar -C "$root" -xf "$java_base"
rmq_home=/home/rocketmq/rocketmq-5.5.0
install -d "$root$rmq_home/lib" "$root$rmq_home/conf"
install -d -o 3000 -g 3000 "$root/home/rocketmq" "$root/home/rocketmq/logs" "$root/home/rocketmq/namesrv"
IFS=: read -r -a jars <<<"$(java_classpath)"
cp "${jars[@]}" "$root$rmq_home/lib/"
echo "rocketmq:x:3000:3000::/home/rocketmq:/bin/sh" >>"$root/etc/passwd"
echo "rocketmq:x:3000:" >>"$root/etc/group"
tar -C "$root" --numeric-owner -cf "$work/layer.tar" .
umoci init --layout "$work/layout"
umoci new --image "$work/layout:bench"
umoci raw add-layer --image "$work/layout:bench" "$work/layer.tar"
umoci config --image "$work/layout:bench" --config.user 3000:3000 \
  --config.env HOME=/home/rocketmq --config.env ROCKETMQ_HOME=$rmq_home \
  --config.workingdir "$rmq_home" --config.entrypoint java \
  --config.cmd=-server --config.cmd=-Xms1g --config.cmd=-Xmx1g --config.cmd=-Xmn512m \
  --config.cmd=-XX:+UseG1GC --config.cmd=-cp --config.cmd="$rmq_home/lib/*" \
  --config.cmd=org.apache.rocketmq.namesrv.NamesrvStartup
umoci gc --layout "$work/layout"
# Named in the index as build.sh names ours, so that podman loads it under this run's name.
python3 - "$work/layout/index.json" "$java_image" <<'EOF'
import json, sys
index = json.load(open(sys.argv[1]))
for m in index["manifests"]:
    m["annotations"] = {"org.opencontainers.image.ref.name": sys.argv[2]}
json.dump(index, open(sys.argv[1], "w"))
EOF
(cd "$work/layout" && tar -cf "$out/java.oci.tar" oci-layout index.json blobs)
"${PM[@]}" load -i "$out/mqnamesrv.oci.tar" >/dev/null
"${PM[@]}" load -i "$out/java.oci.tar" >/dev/null

# Compressed: the layer blobs (gzip, as a registry stores them); unpacked: podman's size.
layer_kb() { tar -tvf "$1" | awk '$6 ~ /^blobs\/sha256\// && $3 > 100000 {s += $3} END {printf "%d", s / 1024}'; }
ns_gz=$(layer_kb "$out/mqnamesrv.oci.tar")
java_gz=$(layer_kb "$out/java.oci.tar")
ns_size=$("${PM[@]}" image inspect --format '{{.Size}}' "$ns_image")
java_size=$("${PM[@]}" image inspect --format '{{.Size}}' "$java_image")

if ! "${PM[@]}" run --rm "$ns_image" --version >/dev/null 2>&1; then
  PM=(env CONTAINERS_CONF="$out/containers.conf" podman --runtime runc --cgroup-manager=cgroupfs)
  RUN_EXTRA=(--ulimit host)
fi

# ---- runs ---------------------------------------------------------------------------------------
results=$out/results.tsv
printf 'target\trun\tready_ms\tidle_rss_kb\troute_rate\troute_rss_peak_kb\tsrv_cpu_pct\tpodman_run_ms\n' >"$results"
run_one() { # <label> <image> <run>
  local label=$1 image=$2 run=$3 name port t0 started pid ready idle line
  name=bench-$label-$tag-$run
  port=$(free_port)
  names+=("$name")
  t0=$(date +%s%N)
  "${PM[@]}" run -d "${RUN_EXTRA[@]}" --name "$name" -p "127.0.0.1:$port:9876" "$image" >/dev/null
  started=$((($(date +%s%N) - t0) / 1000000)) # podman's share: the container created and started
  ready=$("$nsbench" -w ready -a "127.0.0.1:$port" --since-ns "$t0" --timeout-ms 120000 --label "$label" |
    sed -n 's/.* ms=\([0-9.]*\).*/\1/p')
  pid=$("${PM[@]}" inspect --format '{{.State.Pid}}' "$name")
  sleep 5
  idle=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  line=$("$nsbench" -w route -a "127.0.0.1:$port" -T 1000 -B 4 -W 4 -c 64 -p 1 -d "$duration" \
    --warmup "$warmup" --pid "$pid" --label "$label" | grep '^RESULT .*class=route')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$run" "$ready" "$idle" \
    "$(sed -n 's/.* rate=\([0-9.]*\).*/\1/p' <<<"$line")" \
    "$(sed -n 's/.*srv_rss_peak_kb=\([0-9]*\).*/\1/p' <<<"$line")" \
    "$(sed -n 's/.*srv_cpu_pct=\([0-9-]*\).*/\1/p' <<<"$line")" "$started" >>"$results"
  "${PM[@]}" rm -f -v "$name" >/dev/null
  log "$label run $run: ready ${ready} ms, idle $idle kB; $line"
}
load_start=$(cut -d' ' -f1 /proc/loadavg)
for run in $(seq 1 "$runs"); do
  run_one mqnamesrv "$ns_image" "$run"
  run_one java "$java_image" "$run"
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

# ---- the table: medians -----------------------------------------------------------------------
median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v t="$1" -v c="$2" '$1 == t {print $c}' "$results" | median; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
{
  echo "| | mqnamesrv image | Java 5.5.0 NameServer on Debian (JRE 17) |"
  echo "|---|---|---|"
  echo "| image, compressed layers (a pull) | $(mb "$ns_gz") MB | $(mb "$java_gz") MB |"
  echo "| image, unpacked | $(mb $((ns_size / 1024))) MB | $(mb $((java_size / 1024))) MB |"
  echo "| cold start to ready, median of $runs | $(col mqnamesrv 3) ms | $(col java 3) ms |"
  echo "| of which \`podman run -d\` (the container created and started) | $(col mqnamesrv 8) ms | $(col java 8) ms |"
  echo "| RSS idle (5 s after ready) | $(mb "$(col mqnamesrv 4)") MB | $(mb "$(col java 4)") MB |"
  echo "| RSS peak, route benchmark (64 x 1, ${duration} s) | $(mb "$(col mqnamesrv 6)") MB | $(mb "$(col java 6)") MB |"
  echo "| route reads/s in that benchmark | $(col mqnamesrv 5) | $(col java 5) |"
  echo "| server CPU in that benchmark | $(col mqnamesrv 7) % | $(col java 7) % |"
  echo
  echo "($(date -u '+%Y-%m-%d %H:%M UTC'), load average $load_start at the start, $load_end at the end; runs in $results)"
} | tee "$out/table.md"
