#!/usr/bin/env bash
# shellcheck disable=SC2154 # lib.sh's it_start_* set <name>_port, <name>_dir with printf -v
# The container image (packaging/oci/build.sh), as a user runs it in place of Apache's
# apache/rocketmq image: built from this checkout (the .deb of the package preset, the Debian
# base root cached by its package list), built twice to the same bytes, loaded into podman, then
#   - its contents: the binaries, sh, CA certificates and tzdata; no compiler, no package
#     manager or its caches, no test files; its configuration: non-root user, Apache's
#     ROCKETMQ_HOME, entrypoint and volumes, the OCI annotations;
#   - on its defaults, with a read-only root file system and host directories as the volumes,
#     JAVA_OPT and JAVA_OPT_EXT set: a broker registered and a route read through the published
#     port, the KV store written, the server PID 1 as uid 3000; SIGTERM: exit status 0, the KV
#     file and the route snapshot on the volume;
#   - as Apache's image is run (`sh mqnamesrv -c FILE` from $ROCKETMQ_HOME/bin, the config
#     mounted): /metrics, /livez and /readyz through a published port, the documented health
#     check (nsadmin in the container), a real Java 5.5.0 broker registered and a producer and a
#     consumer passing messages through it, mqadmin reading the cluster; SIGTERM again; and
#     Apache's chart's `/bin/sh -c "./mqnamesrv -c FILE"`: the server PID 1 all the same;
#   - as the Helm chart runs it (the config of packaging/kubernetes/mqnamesrv.yaml, uid 3000,
#     read-only root, no capabilities): the probes' endpoints, nsadmin through NAMESRV_ADDR, and
#     the graceful shutdown: /readyz 503 at the first SIGTERM, exit 0 within the grace period;
#   - the entrypoint's other forms (NODE_ROLE, options only, broker refused).
# podman: the plain `podman run` when it works on this machine; else runc with cgroupfs, an
# empty default_ulimits and --ulimit host (what Debian 12 machines with a hybrid cgroup need,
# /work/shared/docs/machine-notes.md); neither working fails the test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"
it_require podman runc mmdebstrap umoci python3 java mvn
it_init container

tag=mqnamesrv-it-$$
image=localhost/mqnamesrv-it:$$
containers=()
podman_cleanup() {
    local c
    for c in "${containers[@]}"; do "${PM[@]}" rm -f -v "$c" >/dev/null 2>&1 || true; done
    "${PM[@]}" rmi "$image" >/dev/null 2>&1 || true
    it_cleanup
}
PM=(podman)
trap podman_cleanup EXIT

# ---- build ----------------------------------------------------------------------------------
start=$SECONDS
it_log "building the image (packaging/oci/build.sh; the .deb of the package preset)"
archive=$IT_WORK/image.oci.tar
if ! "$here/packaging/oci/build.sh" --name "$image" --out "$archive" >"$IT_WORK/build.log" 2>&1; then
    tail -30 "$IT_WORK/build.log" >&2
    it_record fail "packaging/oci/build.sh builds the image"
    it_finish
fi
it_record pass "packaging/oci/build.sh builds the image in $((SECONDS - start)) s ($(du -k "$archive" | cut -f1) KiB)"
deb=$(ls "$here"/build/package/mqnamesrv_*.deb)
"$here/packaging/oci/build.sh" --deb "$deb" --name "$image" --out "$IT_WORK/again.oci.tar" \
    >"$IT_WORK/build-again.log" 2>&1 || tail -20 "$IT_WORK/build-again.log" >&2
it_check "a second build from the same .deb is the same bytes (reproducible)" \
    cmp -s "$archive" "$IT_WORK/again.oci.tar"
rm -f "$IT_WORK/again.oci.tar"

# ---- contents and configuration, from the archive -------------------------------------------
python3 - "$archive" "$IT_WORK" <<'EOF'
import json, sys, tarfile
archive, out = sys.argv[1], sys.argv[2]
t = tarfile.open(archive)
blob = lambda d: t.extractfile("blobs/sha256/" + d.split(":")[1])
index = json.load(t.extractfile("index.json"))
manifest = json.load(blob(index["manifests"][0]["digest"]))
config = json.load(blob(manifest["config"]["digest"]))
json.dump({"index": index, "manifest": manifest, "config": config}, open(out + "/image.json", "w"))
with open(out + "/layer.txt", "w") as f:
    for layer in manifest["layers"]:
        for m in tarfile.open(fileobj=blob(layer["digest"]), mode="r:gz"):
            f.write("%s %d %d %o\n" % (m.name.lstrip("./"), m.uid, m.gid, m.mode))
EOF
jget() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$IT_WORK/image.json" "$1"; }
has_path() { grep -q "^$1 " "$IT_WORK/layer.txt"; }
rmq_home=/home/rocketmq/rocketmq-5.5.0
for p in usr/bin/mqnamesrv usr/bin/mqcontroller usr/bin/nsadmin usr/bin/sh usr/bin/bash etc/ssl/certs/ca-certificates.crt \
    usr/share/zoneinfo/Asia/Shanghai etc/passwd "${rmq_home#/}/bin/mqnamesrv" "${rmq_home#/}/bin/mqcontroller" "${rmq_home#/}/bin/nsadmin" \
    "${rmq_home#/}/bin/docker-entrypoint.sh" "${rmq_home#/}/conf/namesrv.conf" var/lib/dpkg/status \
    usr/share/doc/mqnamesrv/copyright; do
    it_check "the image has /$p" has_path "$p"
done
bad=$(grep -E '^usr/bin/(gcc|cc|c\+\+|g\+\+|cpp|as|ld|make|cmake|clang|python[0-9.]*|perl|dpkg|dpkg-deb|apt|apt-get|dash) |^usr/(include|lib/gcc)/|^var/cache/apt/|^var/lib/apt/|\.(a|o|deb|py|pyc) |(^|/)(tests?|.*_test|test_.*|.*cmocka.*|CMakeCache\.txt|build)(/| )' \
    "$IT_WORK/layer.txt" || true)
it_check "no compiler, package manager, package cache, other shell, or test file in the image" test -z "$bad"
[[ -z $bad ]] || head -20 <<<"$bad" >&2
owned=$(awk '$2 != 0 && $1 !~ /^home\/rocketmq(\/|$)/' "$IT_WORK/layer.txt")
it_check "only /home/rocketmq belongs to the server's user (the rest to root)" test -z "$owned"
[[ -z $owned ]] || head -10 <<<"$owned" >&2
it_check "config: user 3000:3000 (Apache's rocketmq), not root" test "$(jget 'd["config"]["config"]["User"]')" = 3000:3000
it_check "config: ROCKETMQ_HOME=$rmq_home, working directory its bin/" \
    test "$(jget '[e for e in d["config"]["config"]["Env"] if e.startswith("ROCKETMQ_HOME=")][0]') $(jget 'd["config"]["config"]["WorkingDir"]')" \
    = "ROCKETMQ_HOME=$rmq_home $rmq_home/bin"
it_check "config: entrypoint docker-entrypoint.sh, command nameserver" \
    test "$(jget 'd["config"]["config"]["Entrypoint"] + d["config"]["config"]["Cmd"]')" = "['$rmq_home/bin/docker-entrypoint.sh', 'nameserver']"
it_check "config: volumes logs, store and namesrv under /home/rocketmq; port 9876 exposed" \
    test "$(jget 'sorted(d["config"]["config"]["Volumes"]) + ["9876/tcp" in d["config"]["config"]["ExposedPorts"]]')" \
    = "['/home/rocketmq/logs', '/home/rocketmq/namesrv', '/home/rocketmq/store', True]"
version=$(sed -n 's/^project(mqnamesrv VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
revision=$(git -C "$here" rev-parse --short=12 HEAD)
for a in "version=$version" "revision=$revision" "licenses=Apache-2.0" "source=" "created="; do
    k=org.opencontainers.image.${a%%=*}
    it_check_contains "annotation and label $k=${a#*=}..." \
        "$(jget "d['manifest']['annotations'].get('$k', '') + ' ' + d['config']['config']['Labels'].get('$k', '')")" \
        "${a#*=}"
done

# ---- podman: what works here ------------------------------------------------------------------
load_out=$(podman load -i "$archive" 2>&1) || true
it_check_contains "podman load takes the archive, under the name it carries" "$load_out" "Loaded image: $image"
printf '[containers]\ndefault_ulimits = []\n' >"$IT_WORK/containers.conf"
RUN_EXTRA=()
if ! probe=$(podman run --rm "$image" --version 2>&1) || [[ $probe != mqnamesrv* ]]; then
    it_log "plain podman run does not work here ($probe); trying runc, cgroupfs, --ulimit host"
    PM=(env CONTAINERS_CONF="$IT_WORK/containers.conf" podman --runtime runc --cgroup-manager=cgroupfs)
    RUN_EXTRA=(--ulimit host)
    probe=$("${PM[@]}" run --rm "${RUN_EXTRA[@]}" "$image" --version 2>&1) || true
fi
if [[ $probe != mqnamesrv* ]]; then
    echo "!!!!!!!! podman cannot run containers on this machine: $probe" >&2
    it_record fail "podman runs the image"
    it_finish
fi
it_record pass "podman runs the image: $probe (${PM[*]} run ${RUN_EXTRA[*]})"
prun() { "${PM[@]}" run "${RUN_EXTRA[@]}" "$@"; }
# pid_of <container>: the server's pid on this host.
pid_of() { "${PM[@]}" inspect --format '{{.State.Pid}}' "$1"; }
# stop_and_status <container>: SIGTERM, as `podman stop` and Kubernetes send it; prints the exit
# status.
stop_and_status() {
    "${PM[@]}" kill --signal TERM "$1" >/dev/null
    "${PM[@]}" wait "$1"
}
# wait_ready <port>: the server answers GET_NAMESRV_CONFIG through the published port.
wait_ready() { it_wait 60 python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" &&
    it_wait 30 "$MQNSADMIN" getNamesrvConfig -n "127.0.0.1:$1"; }
MQNSADMIN=$here/build/debug/tools/nsadmin/nsadmin
[[ -x $MQNSADMIN ]] || { echo "no $MQNSADMIN (build the debug preset)" >&2; exit 1; }

# ---- the entrypoint's forms -----------------------------------------------------------------------
out=$(prun --rm "$image" -p 2>&1) || true
it_check_contains "options only go to mqnamesrv (-p prints the settings)" "$out" "listenPort=9876"
out=$(prun --rm -e NODE_ROLE=nameserver "$image" placeholder -p 2>&1) || true
it_check_contains "NODE_ROLE=nameserver runs mqnamesrv, the first argument dropped (as Apache's script)" "$out" "listenPort=9876"
out=$(prun --rm "$image" nameserver -p 2>&1) || true
it_check_contains "'nameserver ARGS' runs mqnamesrv ARGS" "$out" "kvConfigPath=/home/rocketmq/namesrv/kvConfig.json"
out=$(prun --rm "$image" controller -p 2>&1) || true
it_check_contains "'controller ARGS' runs mqcontroller ARGS (-p prints the controller's settings)" "$out" \
    "controllerDLegerPeers="
out=$(prun --rm -e NODE_ROLE=controller "$image" placeholder -p 2>&1) || true
it_check_contains "NODE_ROLE=controller runs mqcontroller, the first argument dropped" "$out" "controllerStorePath="
rc=0
out=$(prun --rm "$image" broker 2>&1) || rc=$?
it_check "'broker' is refused with a reason (exit 2)" test "$rc" -eq 2
it_check_contains "... which names Apache's image for brokers" "$out" "NameServer only"
out=$(prun --rm "$image" sh -c 'echo "$HOME $ROCKETMQ_HOME $(pwd)"; ls /usr/share/zoneinfo/UTC' 2>&1) || true
it_check_contains "sh: HOME, ROCKETMQ_HOME and the working directory of Apache's image" "$out" \
    "/home/rocketmq $rmq_home $rmq_home/bin"

# ---- on its defaults: read-only root, host directories as the volumes ------------------------------
a=$IT_WORK/defaults
mkdir -p "$a/logs" "$a/namesrv"
chown 3000:3000 "$a/logs" "$a/namesrv"
port_a=$(it_free_port 1)
containers+=("$tag-a")
"${PM[@]}" run -d "${RUN_EXTRA[@]}" --name "$tag-a" --read-only -p "127.0.0.1:$port_a:9876" \
    -v "$a/logs:/home/rocketmq/logs" -v "$a/namesrv:/home/rocketmq/namesrv" \
    -e JAVA_OPT="-Xms1g -Xmx1g" -e JAVA_OPT_EXT="-Duser.home=/opt" "$image" >/dev/null
if wait_ready "$port_a"; then
    it_record pass "defaults, read-only root: ready through the published port"
else
    it_record fail "defaults, read-only root: ready through the published port"
    "${PM[@]}" logs "$tag-a" 2>&1 | tail -20 >&2
fi
pid=$(pid_of "$tag-a")
it_check "the server is PID 1 of the container (exec all the way)" grep -qE '^NSpid:.*[[:space:]]1$' "/proc/$pid/status"
it_check "it runs as uid 3000, not root" grep -qE '^Uid:[[:space:]]+3000[[:space:]]' "/proc/$pid/status"
it_check "it is /usr/bin/mqnamesrv" test "$(cat "/proc/$pid/comm")" = mqnamesrv
route=$(python3 "$here/tests/package/remoting_probe.py" 127.0.0.1 "$port_a" route 2>&1) || true
it_check_contains "a broker registered and its route read through the published port" "$route" '"brokerAddrs":{"0":"127.0.0.1:10911"}'
it_check "GET_NAMESRV_CONFIG and PUT_KV_CONFIG through the published port" \
    python3 "$here/tests/package/remoting_probe.py" 127.0.0.1 "$port_a"
write_in() { "${PM[@]}" exec "$tag-a" sh -c ": > $1/probe" 2>/dev/null; }
fails() { ! "$@"; }
it_check "the root file system is read-only (a write under ROCKETMQ_HOME fails)" fails write_in "$rmq_home"
it_check "... and the volumes are writable by the server's user (a write in logs/ works)" write_in /home/rocketmq/logs
logs=$("${PM[@]}" logs "$tag-a" 2>&1)
it_check_contains "the log goes to stdout (podman logs)" "$logs" "The Name Server boot success"
it_check_contains "JAVA_OPT and JAVA_OPT_EXT: accepted, ignored, said once" "$logs" \
    "JAVA_OPT, JAVA_OPT_EXT set: ignored"
it_check "and to the log file on the logs volume" grep -q "boot success" "$a/logs/rocketmqlogs/namesrv.log"
rc=$(stop_and_status "$tag-a")
it_check "SIGTERM: exit status 0" test "$rc" = 0
it_check "SIGTERM: the log says it shut down" grep -q "The Name Server shut down" "$a/logs/rocketmqlogs/namesrv.log"
it_check_contains "the KV file on the namesrv volume holds what PUT_KV_CONFIG wrote" \
    "$(cat "$a/namesrv/kvConfig.json" 2>&1)" '"k":"v"'
it_check "the route snapshot was written to the volume at SIGTERM" test -s "$a/namesrv/routeSnapshot.bin"

# ---- as Apache's image is run: `sh mqnamesrv -c FILE` ---------------------------------------------
b=$IT_WORK/apache
mkdir -p "$b/conf"
# (Without systemd podman logs that it cannot schedule the health check's timer; `podman
# healthcheck run` below runs it.) A config as Apache's Helm chart writes it (a Java key, defaultThreadPoolNums), plus metrics.
printf 'listenPort=9876\ndefaultThreadPoolNums=4\nmetricsExporterType=PROM\n' >"$b/conf/namesrv.conf"
port_b=$(it_free_port 1)
port_m=$(it_free_port 1)
containers+=("$tag-b")
"${PM[@]}" run -d "${RUN_EXTRA[@]}" --name "$tag-b" -p "127.0.0.1:$port_b:9876" -p "127.0.0.1:$port_m:5557" \
    -v "$b/conf:/home/rocketmq/conf:ro" \
    --health-cmd "nsadmin getNamesrvConfig -n 127.0.0.1:9876 >/dev/null" \
    "$image" sh mqnamesrv -c /home/rocketmq/conf/namesrv.conf >/dev/null
if wait_ready "$port_b"; then
    it_record pass "sh mqnamesrv -c FILE: ready through the published port"
else
    it_record fail "sh mqnamesrv -c FILE: ready through the published port"
    "${PM[@]}" logs "$tag-b" 2>&1 | tail -20 >&2
fi
pid=$(pid_of "$tag-b")
it_check "sh mqnamesrv: the server is PID 1 (the launcher execs)" grep -qE '^NSpid:.*[[:space:]]1$' "/proc/$pid/status"
it_check "sh mqnamesrv: it is /usr/bin/mqnamesrv" test "$(cat "/proc/$pid/comm")" = mqnamesrv
# http <path> [port]: status and body of a GET on the published metrics port (an HTTP error
# prints its status too).
http() { python3 -c 'import sys, urllib.error, urllib.request
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), timeout=5)
except urllib.error.HTTPError as e:
    r = e
print(r.status); print(r.read().decode())' "${2:-$port_m}" "$1" 2>&1 || true; }
it_check_contains "/livez through the published port: 200" "$(http /livez)" "200"
it_check_contains "/readyz: 200 ready" "$(http /readyz)" "ready: listening on port 9876"
it_check "the health check of the docs: nsadmin in the container answers" \
    "${PM[@]}" exec "$tag-b" nsadmin getNamesrvConfig -n 127.0.0.1:9876
if hc=$("${PM[@]}" healthcheck run "$tag-b" 2>&1); then
    it_record pass "podman healthcheck run (--health-cmd nsadmin ...): healthy"
else
    it_record fail "podman healthcheck run (--health-cmd nsadmin ...): $hc"
fi

# A real Java 5.5.0 broker registers with the containerized NameServer; a producer and a consumer
# find it through it.
nsaddr=127.0.0.1:$port_b
it_start_broker b1 5.x "$nsaddr"
drv_start d5 5.x
eventually 60 "the broker's registration reached the NameServer (nsadmin clusterList)" \
    bash -c '"$1" clusterList --nsOnly -n "$2" | grep -q "b1"' _ "$MQNSADMIN" "$nsaddr"
drv d5 producer p1 "$nsaddr" it_container_p -
drv d5 consumer c1 "$nsaddr" it_container_c TopicContainer -
drv d5 send p1 TopicContainer m 20 5
has "a Java 5.5.0 producer sent 20 messages through a route from the container" "sent 20/20"
drv d5 await c1 m 20 60000
has "a Java 5.5.0 push consumer received all 20" "received 20/20"
adm d5 clusterList -n "$nsaddr"
has "mqadmin 5.5.0 clusterList through the container lists the broker" "b1"
metrics=$(http /metrics)
it_check_contains "/metrics: the registrations counted" "$metrics" "mqnamesrv_broker_registrations_total"
it_check_contains "/metrics: one live broker" "$metrics" "mqnamesrv_brokers 1"
drv d5 close p1
drv d5 close c1
rc=$(stop_and_status "$tag-b")
it_check "sh mqnamesrv: SIGTERM, exit status 0" test "$rc" = 0
it_check_contains "sh mqnamesrv: the log says it shut down" "$("${PM[@]}" logs "$tag-b" 2>&1 | tail -3)" \
    "The Name Server shut down"

# Apache's Helm chart: command ["/bin/sh"], args ["-c", "./mqnamesrv -c FILE"]. /bin/sh (bash)
# execs the command, so the server is still PID 1 and SIGTERM stops it gracefully.
port_d=$(it_free_port 1)
containers+=("$tag-d")
"${PM[@]}" run -d "${RUN_EXTRA[@]}" --name "$tag-d" -p "127.0.0.1:$port_d:9876" --entrypoint /bin/sh \
    -v "$b/conf:/home/rocketmq/conf:ro" "$image" -c "./mqnamesrv -c /home/rocketmq/conf/namesrv.conf" >/dev/null
it_check "/bin/sh -c './mqnamesrv -c FILE' (Apache's chart): ready" wait_ready "$port_d"
pid=$(pid_of "$tag-d")
it_check "/bin/sh -c: the server is PID 1 (sh execs it)" grep -qE '^NSpid:.*[[:space:]]1$' "/proc/$pid/status"
it_check "/bin/sh -c: ... and it is mqnamesrv" test "$(cat "/proc/$pid/comm")" = mqnamesrv
rc=$(stop_and_status "$tag-d")
it_check "/bin/sh -c: SIGTERM, exit status 0" test "$rc" = 0

# ---- as the Helm chart runs it -------------------------------------------------------------------
# The chart's container (packaging/kubernetes/mqnamesrv.yaml, its defaults rendered): its
# namesrv.conf mounted read-only, `nameserver -c FILE`, uid 3000, a read-only root, no
# capabilities, the image's volumes for what the server writes.
c=$IT_WORK/chart
mkdir -p "$c/config"
awk '/^  namesrv.conf: [|]$/ {on = 1; next} on && /^    / {print substr($0, 5); next} on {exit}' \
    "$here/packaging/kubernetes/mqnamesrv.yaml" >"$c/config/namesrv.conf"
it_check_contains "the chart's rendered namesrv.conf turns the metrics and the graceful shutdown on" \
    "$(cat "$c/config/namesrv.conf")" "enableShutdownGracefully=true"
port_c=$(it_free_port 1)
port_cm=$(it_free_port 1)
containers+=("$tag-c")
"${PM[@]}" run -d "${RUN_EXTRA[@]}" --name "$tag-c" --read-only --user 3000:3000 --cap-drop ALL \
    --security-opt no-new-privileges -p "127.0.0.1:$port_c:9876" -p "127.0.0.1:$port_cm:5557" \
    -v "$c/config:/etc/mqnamesrv/config:ro" -e NAMESRV_ADDR=127.0.0.1:9876 \
    "$image" nameserver -c /etc/mqnamesrv/config/namesrv.conf >/dev/null
if wait_ready "$port_c"; then
    it_record pass "the chart's container: ready"
else
    it_record fail "the chart's container: ready"
    "${PM[@]}" logs "$tag-c" 2>&1 | tail -20 >&2
fi
it_check_contains "the chart's readiness probe: GET /readyz 200" "$(http /readyz "$port_cm")" "200"
it_check_contains "the chart's liveness probe: GET /livez 200" "$(http /livez "$port_cm")" "200"
it_check "kubectl exec ... nsadmin clusterList: NAMESRV_ADDR names the pod's own server" \
    "${PM[@]}" exec "$tag-c" nsadmin clusterList --nsOnly
"${PM[@]}" kill --signal TERM "$tag-c" >/dev/null
eventually 10 "graceful shutdown: /readyz answers 503 at once (the Service stops sending clients)" \
    bash -c 'python3 -c "import sys, urllib.request as u
try: u.urlopen(\"http://127.0.0.1:%s/readyz\" % sys.argv[1], timeout=2)
except u.HTTPError as e: sys.exit(e.code != 503)
sys.exit(1)" "$1"' _ "$port_cm"
start=$SECONDS
rc=$("${PM[@]}" wait "$tag-c")
it_check "graceful shutdown: exit status 0 after the wait (took $((SECONDS - start)) s; the chart allows 25)" \
    test "$rc" = 0
logs=$("${PM[@]}" logs "$tag-c" 2>&1)
it_check_contains "graceful shutdown: the GO_AWAY wait in the log" "$logs" "shutting down gracefully: GO_AWAY for 10 s"
it_check_contains "... then the stop" "$logs" "The Name Server shut down"
it_finish
