#!/usr/bin/env bash
# Integration (ctest integration.metrics_prometheus): mqnamesrv's exporter against the real
# Prometheus tooling from Debian's `prometheus` package.
#   1. `promtool check metrics` on a scrape taken after real remoting requests;
#   2. `promtool check rules` on contrib/prometheus/alerts.yml;
#   3. a real Prometheus server (loopback, temporary directory, 1 s scrapes, bounded by timeout)
#      scrapes mqnamesrv, loads the alert rules, and answers PromQL queries about it through its
#      HTTP API: the request counter equals the requests sent, every rule evaluates, and every
#      expression of contrib/grafana/mqnamesrv.json runs.
# Needs MQNAMESRV_BIN and NS_SOURCE_DIR (set by ctest). A missing tool fails loudly.
set -euo pipefail
: "${MQNAMESRV_BIN:?}" "${NS_SOURCE_DIR:?}"
for tool in promtool prometheus python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (bin/install-deps --test)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/ns-prom-XXXXXX)
ns_pid="" prom_pid=""
cleanup() {
  [[ -n $prom_pid ]] && kill -KILL "$prom_pid" 2>/dev/null
  [[ -n $ns_pid ]] && kill -KILL "$ns_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ -f $tmp/ns.out ]] && tail -20 "$tmp/ns.out" >&2; exit 1; }
waitfor() { # waitfor <seconds> <command...>
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do ((SECONDS < end)) || return 1; sleep 0.2; done
}

# ---- mqnamesrv with the exporter on ----------------------------------------------------------
ROCKETMQ_HOME=$NS_SOURCE_DIR HOME=$tmp "$MQNAMESRV_BIN" --set listenPort=0 --set bindAddress=127.0.0.1 \
  --set portFile="$tmp/port" --set kvConfigPath="$tmp/kvConfig.json" \
  --set configStorePath="$tmp/namesrv.properties" --set logPath="$tmp/namesrv.log" \
  --set metricsExporterType=PROM --set metricsPromExporterPort=0 \
  --set metricsPromExporterHost=127.0.0.1 >"$tmp/ns.out" 2>&1 &
ns_pid=$!
waitfor 20 test -s "$tmp/port" || fail "mqnamesrv did not start"
waitfor 10 grep -q "metrics exporter (Prometheus) listening on" "$tmp/ns.out" || fail "no exporter line"
rport=$(cat "$tmp/port")
mport=$(grep -o "listening on 127.0.0.1:[0-9]*" "$tmp/ns.out" | head -1 | cut -d: -f2)

# Three route reads (TOPIC_NOT_EXIST: nothing registered) and one unknown code, over the wire.
python3 - "$rport" <<'EOF' || fail "remoting requests"
import json, socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
def call(code, opaque, ext):
    h = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": opaque,
                    "serializeTypeCurrentRPC": "JSON", "version": 479, "extFields": ext}).encode()
    s.sendall(struct.pack(">II", 4 + len(h), len(h)) + h)
    n = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))[0]
    data = s.recv(n, socket.MSG_WAITALL)
    hl = struct.unpack(">I", data[:4])[0] & 0xFFFFFF
    return json.loads(data[4:4 + hl])["code"]
for i in range(3):
    assert call(105, i + 1, {"topic": "NoSuchTopic"}) == 17
assert call(4242, 9, {}) == 3
s.close()
EOF

http_get() { python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }
http_get "http://127.0.0.1:$mport/metrics" >"$tmp/scrape.txt" || fail "scrape"
grep -q 'mqnamesrv_requests_total{request_code="105",request_name="GET_ROUTEINFO_BY_TOPIC",response_code="17"} 3' \
  "$tmp/scrape.txt" || fail "request counter in the scrape"

# ---- promtool ------------------------------------------------------------------------------------
echo "== promtool check metrics"
promtool check metrics <"$tmp/scrape.txt" || fail "promtool check metrics"
echo "== promtool check rules"
promtool check rules "$NS_SOURCE_DIR/contrib/prometheus/alerts.yml" || fail "promtool check rules"

# ---- a real Prometheus ---------------------------------------------------------------------------
pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $NS_SOURCE_DIR/contrib/prometheus/alerts.yml
scrape_configs:
  - job_name: mqnamesrv
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
timeout 120 prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$tmp/prom.out" 2>&1 &
prom_pid=$!

# query <PromQL>: prints the first sample's value ("" when the result is empty).
query() {
  python3 - "$pport" "$1" <<'EOF'
import json, sys, urllib.parse, urllib.request
url = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
r = json.load(urllib.request.urlopen(url, timeout=5))
assert r["status"] == "success", r
res = r["data"]["result"]
print(res[0]["value"][1] if res else "")
EOF
}
target_up() { [[ $(query 'up{job="mqnamesrv"}') == 1 ]]; }
waitfor 60 target_up || { tail -20 "$tmp/prom.out" >&2; fail "Prometheus never scraped mqnamesrv"; }
echo "== Prometheus scrapes mqnamesrv"
v=$(query 'sum(mqnamesrv_requests_total{job="mqnamesrv",request_code="105"})')
[[ $v == 3 ]] || fail "PromQL: 105 requests = '$v', want 3"
v=$(query 'mqnamesrv_requests_total{request_code="unknown",response_code="3"}')
[[ $v == 1 ]] || fail "PromQL: unknown requests = '$v', want 1"
[[ $(query 'mqnamesrv_ready') == 1 ]] || fail "PromQL: mqnamesrv_ready"
[[ $(query 'count(mqnamesrv_build_info)') == 1 ]] || fail "PromQL: build info"
echo "PromQL answers: 3 route reads, 1 unknown code, ready, build info"

# Every rule is loaded and evaluates without error (health "ok").
rules_ok() {
  python3 - "$pport" <<'EOF'
import json, sys, urllib.request
r = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/v1/rules" % sys.argv[1], timeout=5))
rules = [x for g in r["data"]["groups"] for x in g["rules"]]
bad = [x["name"] for x in rules if x.get("health") != "ok"]
sys.exit(0 if len(rules) == 11 and not bad else 1)
EOF
}
waitfor 20 rules_ok || fail "alert rules not all loaded and healthy"
firing=$(query 'count(ALERTS{alertstate="firing"})')
[[ -z $firing ]] || fail "alerts firing on a healthy server: $firing"
echo "== 11 alert rules evaluate, none firing"

# Every dashboard expression is valid PromQL over these series.
python3 - "$pport" "$NS_SOURCE_DIR/contrib/grafana/mqnamesrv.json" <<'EOF' || fail "dashboard queries"
import json, sys, urllib.parse, urllib.request
port, path = sys.argv[1], sys.argv[2]
dash = json.load(open(path))
n = 0
for p in dash["panels"]:
    for t in p.get("targets", []):
        e = t["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
        url = "http://127.0.0.1:%s/api/v1/query?query=%s" % (port, urllib.parse.quote(e))
        r = json.load(urllib.request.urlopen(url, timeout=5))
        assert r["status"] == "success", (e, r)
        n += 1
print("== %d dashboard queries run" % n)
EOF

kill -TERM "$prom_pid"; wait "$prom_pid" || true; prom_pid=""
kill -TERM "$ns_pid"; rc=0; wait "$ns_pid" || rc=$?; ns_pid=""
[[ $rc -eq 0 ]] || fail "mqnamesrv exit status $rc"
if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer' "$tmp/ns.out"; then
  fail "sanitizer report"
fi
echo "metrics_prometheus: 1 passed, 0 failed"
