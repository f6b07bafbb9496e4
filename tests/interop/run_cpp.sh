#!/usr/bin/env bash
# Interop with the RocketMQ C++ client (rocketmq-client-cpp's librocketmq.so, from PyPI's
# `rocketmq` 0.4.4 wheel, pinned by hash in tests/interop/cpp/requirements.txt). The client
# sends JSON headers with language CPP and version 63 (V3_1_8), so it gets the legacy route
# body (bare integer brokerAddrs keys) and exercises that path of mqnamesrv.
#
# One real 5.5.0 broker registers with mqnamesrv and with the Java NameServer 5.5.0. The same
# scenario (tests/interop/cpp/client.py: a producer that creates its topic by sending, a second
# one that sends through the topic's own route, a pull consumer that reads the route and every
# queue, a push consumer of a new group, and the queues of a topic that does not exist) runs
# once through each NameServer, with a recording relay (tests/interop/wiretap.py) between
# the client and the NameServer. What the client saw from each (sends, route queues, where each
# message landed, deliveries, the missing topic's error, and every NameServer request and reply
# on the wire, reply version aside) must be the same. Then two mqnamesrv with aclEnable=true
# answer the client's always-signed route query (empty AccessKey).
#
# The venv with the wheel is cached in build/interop/cache/cpp-venv-<hash of requirements and
# python version>; pip's own cache keeps the wheel.
# <name>_port, _dir, _rec are set by printf -v in it_start_* and start_tap:
# shellcheck disable=SC2154
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/lib.sh"

it_require python3 java mvn ldd
it_init cpp

N=${IT_CPP_N:-20}
BROKER=b1
CLIENT=$here/cpp/client.py

# --- the C++ client -------------------------------------------------------------------------
install_cpp_client() {
    local req=$here/cpp/requirements.txt key dir
    key=$( (cat "$req"; python3 -c 'import sys; print(sys.version)') | sha1sum | cut -c1-12)
    dir=$IT_CACHE/cpp-venv-$key
    if [[ ! -f $dir/.installed ]]; then
        it_log "installing the C++ client (the rocketmq wheel, into a venv at $dir)"
        rm -rf "$dir"
        if ! { python3 -m venv "$dir" &&
            "$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps \
                --only-binary=:all: --require-hashes -r "$req"; } >"$IT_WORK/pip.log" 2>&1; then
            cat "$IT_WORK/pip.log" >&2
            echo "interop: installing the rocketmq wheel failed" \
                "(python3-venv missing? bin/install-deps --test)" >&2
            return 1
        fi
        touch "$dir/.installed"
    fi
    PY=$dir/bin/python
    LIB=$("$PY" -c 'import os, rocketmq
print(os.path.join(os.path.dirname(rocketmq.__file__), "librocketmq.so"))')
}

install_cpp_client
# The wheel bundles its libz; the rest (libstdc++, libc from glibc 2.4 on) is the system's.
ldd_out=$(ldd "$LIB" 2>&1 || true)
text_lacks() { ! grep -qF -- "$2" <<<"$1"; }
it_check "librocketmq.so finds every library it needs (ldd: no 'not found')" \
    text_lacks "$ldd_out" "not found"
grep 'not found' <<<"$ldd_out" >&2 || true
it_check "the rocketmq binding loads librocketmq.so" "$PY" -c 'import rocketmq.client'

# --- servers ----------------------------------------------------------------------------------
# The Java NameServer first: a broker that cannot reach one of its NameServers retries only at
# its next registration, 30 s later.
it_start_java_namesrv jns 5.x
it_start_mqnamesrv ns1
it_start_broker "$BROKER" 5.x "127.0.0.1:$ns1_port;127.0.0.1:$jns_port"
BROKER_ADDR=127.0.0.1:$b1_port
it_check "$BROKER registered with mqnamesrv" \
    it_wait 60 grep -q "new broker registered, .*brokerAddr=$BROKER_ADDR" "$ns1_dir/namesrv.log"
it_check "$BROKER registered with the Java NameServer" \
    it_wait 60 grep -rq "new broker registered, .*brokerAddr=$BROKER_ADDR" "$jns_dir/home/logs"

# start_tap <name> <upstream port>: a recording relay in front of a NameServer; sets
# <name>_port and <name>_rec.
start_tap() {
    local name=$1 upstream=$2 dir=$IT_WORK/$1
    mkdir -p "$dir"
    python3 "$here/wiretap.py" 0 "127.0.0.1:$upstream" "$dir/frames.jsonl" "$dir/port" \
        >"$dir/stdout" 2>&1 &
    IT_PIDS+=("$!")
    if ! it_wait 10 test -s "$dir/port"; then
        cat "$dir/stdout" >&2
        echo "interop: the wire tap $name did not start" >&2
        return 1
    fi
    printf -v "${name}_port" '%s' "$(cat "$dir/port")"
    printf -v "${name}_rec" '%s' "$dir/frames.jsonl"
}

# --- the scenario, through mqnamesrv and through Java -----------------------------------------
start_tap tap_ns1 "$ns1_port"
start_tap tap_jns "$jns_port"
for side in ns1 jns; do
    tap_port_var=tap_${side}_port tap_rec_var=tap_${side}_rec
    topic=CppTopic_${side}_$$_$RANDOM
    mkdir -p "$IT_WORK/cpp-$side"
    view=$IT_WORK/cpp-$side/view.json
    # 6 roles of at most 60 s each (client.py kills a role that hangs)
    run_client "cpp-$side" 18 timeout 400 "$PY" "$CLIENT" scenario "127.0.0.1:${!tap_port_var}" \
        "$topic" "$N" "$BROKER" "$view"
    run_client "cpp-$side-wire" 8 timeout 60 "$PY" "$CLIENT" wire "${!tap_rec_var}" "$view" "$topic"
done
run_client "cpp-compare" 7 timeout 60 "$PY" "$CLIENT" compare "$IT_WORK/cpp-ns1/view.json" \
    "$IT_WORK/cpp-jns/view.json"

# --- aclEnable=true ---------------------------------------------------------------------------
# The C++ client signs every request, without credentials too: an empty AccessKey, a Signature
# and OnsChannel=ALIYUN. With reads anonymous (the default of aclEnable=true) such a route query
# is a read like any other; with aclReadsRequireSignature=true it names no account and is
# refused with 16 (NO_PERMISSION). No Java NameServer checks signatures: nothing to compare.
printf '%s\n' 'accounts:' '  - accessKey: cppAdminKey' '    secretKey: cppAdminSecret' \
    '    admin: true' >"$IT_WORK/plain_acl.yml"
acl_probe() {
    local name=$1 code=$2
    shift 2
    it_start_mqnamesrv "$name" --set aclEnable=true --set "aclPlainFile=$IT_WORK/plain_acl.yml" "$@"
    local port_var=${name}_port
    start_tap "tap_$name" "${!port_var}"
    local tport_var=tap_${name}_port trec_var=tap_${name}_rec
    run_client "cpp-$name" 2 timeout 90 "$PY" "$CLIENT" probe "127.0.0.1:${!tport_var}" \
        "CppAclProbe_$name" "$code" "${!trec_var}" "$IT_WORK/cpp-$name"
}
acl_probe ns_acl 17
acl_probe ns_acl_reads 16 --set aclReadsRequireSignature=true

# --- server health ----------------------------------------------------------------------------
for ns in ns1 ns_acl ns_acl_reads; do
    it_check_log_clean "$ns"
    it_stop_mqnamesrv "$ns"
done

it_finish
