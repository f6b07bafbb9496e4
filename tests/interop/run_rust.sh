#!/usr/bin/env bash
# shellcheck disable=SC2154 # lib.sh's it_start_* set <name>_port, <name>_dir with printf -v
# Interop with the Rust remoting client, rocketmq-client-rust (crates.io, the client of the
# rocketmq-rust project; pinned in tests/interop/rust/Cargo.lock). Its producer finds its
# broker only through the NameServer, sends N messages with distinct bodies to a new topic
# (created by the broker on the first send, through the route of TBW102), fetches the topic's
# route, a push consumer of a new group receives all of them, and its admin client reads the
# cluster info, the topic list and the cluster's topics (tests/interop/rust/src/main.rs).
#
# The same program runs against mqnamesrv and against the Java NameServer 5.5.0, with one real
# 5.5.0 broker registered with both; what the client saw (the route and cluster info it parsed,
# normalized for the broker's port and the topic name, the send, receive and topic-list results)
# must be the same. It runs twice per NameServer: with JSON request headers (the crate's
# default) and with ROCKETMQ binary headers (ROCKETMQ_SERIALIZE_TYPE=ROCKETMQ). Each NameServer
# is reached through tests/interop/wiretap.py, which writes down every request (code,
# language, version, header encoding, header fields) and reply code: the client must send the
# same kinds of requests to both and get the same reply codes, and what it sent is printed.
#
# Build: cargo build --locked into ~/.cargo/mqnamesrv-interop/target-<hash of Cargo.lock>/
# (crates in cargo's own cache, ~/.cargo/registry). A cold build compiles about 360 crates
# (minutes, see docs/interop.md); a warm one only checks them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

# --build-only: build the client program and stop. tests/run starts this in the background at
# its beginning, at the lowest priority, so that a cold build takes only the CPU that ctest and
# the other suites leave idle; the suite itself then finds the build done, or waits on cargo's
# lock for its end.
build_only=0
[[ ${1:-} == --build-only ]] && build_only=1
it_require cargo rustc java mvn python3
if [[ $build_only -eq 1 ]]; then it_init rust-build --no-server; else it_init rust; fi

# The crate wants rustc 1.95 (its rust-version); Debian's rustc is far older. Say so plainly
# instead of letting cargo fail deep in the build.
RUSTC_MIN=1.95
rustc_version=$(rustc --version | awk '{print $2}')
if [[ $(printf '%s\n%s\n' "$RUSTC_MIN" "$rustc_version" | sort -V | head -1) != "$RUSTC_MIN" ]]; then
    echo "!!!!!!!! INTEROP: rustc $rustc_version is older than $RUSTC_MIN, which rocketmq-client-rust needs" >&2
    echo "!!!!!!!! install a newer Rust toolchain (rustup) and run again" >&2
    exit 1
fi

N=${IT_RUST_N:-20}
CLUSTER=ItCluster
BROKER=b1

# --- build ------------------------------------------------------------------------------------
# The target directory lives in cargo's own home, not in build/: CI runs in a fresh clone, and a
# cold build of the client's ~360 crates takes minutes. It is keyed by the hash of Cargo.lock
# (a new pin builds afresh); target directories unused for 14 days are removed. Cargo locks the
# directory, so two worktrees running this suite at once take turns.
build_rust() {
    local key root dir old start=$SECONDS
    key=$(sha1sum "$here/rust/Cargo.lock" | cut -c1-12)
    root=${IT_RUST_TARGET_ROOT:-${CARGO_HOME:-$HOME/.cargo}/mqnamesrv-interop}
    dir=$root/target-$key
    mkdir -p "$dir"
    touch "$dir/.last-used"
    for old in "$root"/target-*; do
        [[ $old != "$dir" && -z $(find "$old/.last-used" -mtime -14 2>/dev/null) ]] || continue
        it_log "removing the Rust target directory $old (unused for 14 days)"
        rm -rf "$old"
    done
    it_log "building the Rust client program (rocketmq-client-rust $(awk '/^name = "rocketmq-client-rust"/ {getline; print $3}' "$here/rust/Cargo.lock" | tr -d '"'), target dir $dir)"
    if ! CARGO_TARGET_DIR=$dir CARGO_INCREMENTAL=0 nice -n 10 cargo build --locked --quiet \
        --manifest-path "$here/rust/Cargo.toml" >"$IT_WORK/cargo-build.log" 2>&1; then
        tail -60 "$IT_WORK/cargo-build.log" >&2
        echo "interop: building the Rust client failed" >&2
        return 1
    fi
    RUST_CLIENT=$dir/debug/rustclient
    it_log "Rust client program ready in $((SECONDS - start)) s"
}

build_rust
[[ $build_only -eq 0 ]] || exit 0

# --- servers ----------------------------------------------------------------------------------
# The broker boots while the Java NameServer does (the Java NameServer's port is chosen first);
# a first registration that finds it not yet listening is repeated after 10 s.
it_start_mqnamesrv ns1
JNS_PORT=$(it_free_port 1)
it_launch_broker "$BROKER" 5.x "127.0.0.1:$ns1_port;127.0.0.1:$JNS_PORT" registerNameServerPeriod=10000
# (the last listenPort line of its -c file wins over the one it_start_java_namesrv picked)
it_start_java_namesrv jns 5.x "listenPort=$JNS_PORT"
jns_port=$JNS_PORT
it_log "Java NameServer jns listens on 127.0.0.1:$jns_port"
it_await_broker "$BROKER"
BROKER_ADDR=127.0.0.1:$b1_port

# route_ready <port> <topic> <broker>: the NameServer on <port> answers GET_ROUTEINFO_BY_TOPIC
# for <topic> with a route naming <broker>.
route_ready() {
    python3 - "$@" <<'EOF'
import json, socket, struct, sys
port, topic, broker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
h = json.dumps({"code": 105, "flag": 0, "language": "JAVA", "opaque": 1, "version": 479,
                "serializeTypeCurrentRPC": "JSON", "extFields": {"topic": topic}}).encode()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(struct.pack(">II", 4 + len(h), len(h)) + h)
buf = b""
while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
    chunk = s.recv(65536)
    if not chunk:
        sys.exit(1)
    buf += chunk
hlen = struct.unpack(">I", buf[4:8])[0] & 0xFFFFFF
head = json.loads(buf[8:8 + hlen])
sys.exit(0 if head["code"] == 0 and ('"brokerName":"%s"' % broker) in buf[8 + hlen:].decode() else 1)
EOF
}
# "boot success" comes before the first registration; a producer started in between finds no
# route for TBW102.
it_check "$BROKER registered with mqnamesrv (TBW102 route)" it_wait 60 route_ready "$ns1_port" TBW102 "$BROKER"
it_check "$BROKER registered with the Java NameServer (TBW102 route)" it_wait 60 route_ready "$jns_port" TBW102 "$BROKER"

# --- the client, against each NameServer through its wire tap ---------------------------------
# run_against <label> <NameServer port> <header encoding>: one run of the program.
run_against() {
    local label=$1 ns_port=$2 encoding=$3 tap_port
    rm -f "$IT_WORK/$label.port"
    python3 "$here/wiretap.py" 0 "127.0.0.1:$ns_port" "$IT_WORK/$label.wire" "$IT_WORK/$label.port" &
    IT_PIDS+=("$!")
    it_wait 10 test -s "$IT_WORK/$label.port" || { it_record fail "$label: wire tap listening"; return; }
    tap_port=$(cat "$IT_WORK/$label.port")
    run_client "$label" 8 env RUSTCLIENT_TIMEOUT=60 ROCKETMQ_SERIALIZE_TYPE="$encoding" \
        "$RUST_CLIENT" "127.0.0.1:$tap_port" "RustTopic_${label}_$$_$RANDOM" "$N" \
        "$BROKER" "$BROKER_ADDR" "$CLUSTER"
}

# requests <label>: one line per distinct request shape (code, language, version, encoding,
# header fields) and one per distinct (request code, reply code) pair, from the frames the
# wire tap recorded (a reply is paired with its request by connection and opaque).
requests() {
    python3 - "$IT_WORK/$1.wire" <<'EOF'
import json, sys
seen, asked = set(), {}
for line in open(sys.argv[1], encoding="utf-8"):
    f = json.loads(line)
    h = f.get("header")
    if "error" in f or h is None:
        seen.add("error %s" % f.get("error", f.get("encoding")))
    elif f["dir"] == "request":
        asked[(f["conn"], h["opaque"])] = h["code"]
        seen.add("code=%s language=%s version=%s %s fields=%s" % (
            h["code"], h["language"], h["version"], f["encoding"],
            ",".join(sorted((h.get("extFields") or {}).keys()))))
    else:
        seen.add("reply %s to request %s" % (h["code"], asked.get((f["conn"], h["opaque"]))))
for key in sorted(seen):
    print(key)
EOF
}

# only_encoding <encoding> <requests output>: every request line names that encoding.
only_encoding() {
    local line
    [[ -n $2 ]] || return 1
    while read -r line; do
        [[ $line == "reply "* || $line == *" $1 fields="* ]] || return 1
    done <<<"$2"
}

# scenario <encoding>: the program against mqnamesrv, then against Java, with the client's
# headers in that encoding (ROCKETMQ_SERIALIZE_TYPE, which the crate reads); what it saw and
# what it sent must be the same.
scenario() {
    local enc=$1 lc what c j
    lc=$(tr '[:upper:]' '[:lower:]' <<<"$enc")
    run_against "rust-$lc-mqnamesrv" "$ns1_port" "$enc"
    run_against "rust-$lc-java" "$jns_port" "$enc"
    for what in route sends publishQueues consumed clusterInfo allTopics clusterTopics; do
        c=$(sed -n "s/^SEEN $what //p" "$IT_WORK/rust-$lc-mqnamesrv.out")
        j=$(sed -n "s/^SEEN $what //p" "$IT_WORK/rust-$lc-java.out")
        it_check_same "$enc headers: the Rust client saw the same $what from mqnamesrv and from Java: $c" \
            "$c" "$j"
    done
    c=$(requests "rust-$lc-mqnamesrv")
    j=$(requests "rust-$lc-java")
    it_log "$enc headers: the Rust client's requests to mqnamesrv, and the replies' codes:"
    awk '{print "    " $0}' <<<"$c" >&2
    it_check "$enc headers: every request the Rust client sent mqnamesrv decodes, in $enc encoding" \
        only_encoding "$enc" "$c"
    it_check_contains "$enc headers: the Rust client asked mqnamesrv for a route (GET_ROUTEINFO_BY_TOPIC, 105)" \
        "$c" "code=105 "
    it_check_same "$enc headers: the Rust client sent the same kinds of requests to mqnamesrv and to Java, and got the same reply codes" \
        "$c" "$j"
}
scenario JSON
scenario ROCKETMQ

# --- server health ----------------------------------------------------------------------------
it_check_log_clean ns1
it_stop_mqnamesrv ns1

it_finish
