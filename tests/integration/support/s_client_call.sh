#!/usr/bin/env bash
# s_client_call.sh PORT OUT [openssl s_client options...]: one TLS connection to 127.0.0.1:PORT
# with `openssl s_client`, which sends a route query (code 105 for a topic nobody has, answered
# with code 17) and ends once the answer came, or after 20 s. Its output (the session summary,
# "New, TLSv1.3, ..." or "Reused, ...", and the answer) goes to OUT. test_tls_tcp.c resumes
# sessions with -sess_out FILE / -sess_in FILE: a TLS 1.3 server sends its ticket before the
# answer, so FILE holds the session once the answer is in.
set -u
port=$1 out=$2
shift 2
rm -f "$out"
# The request waits in the brace group until the answer shows in $out, which s_client writes.
# shellcheck disable=SC2094
{
    printf '\000\000\000\115\000\000\000\111{"code":105,"extFields":{"topic":"NoSuchTopic"},"opaque":7,"version":479}'
    for _ in $(seq 1 200); do
        grep -aq '"code":17' "$out" 2>/dev/null && break
        sleep 0.1
    done
} | timeout 30 openssl s_client -connect "127.0.0.1:$port" -no_ign_eof "$@" >"$out" 2>&1
