#!/usr/bin/env bash
# shellcheck disable=SC2154 # lib.sh's it_start_* set <name>_port, <name>_dir with printf -v
# The Helm chart (packaging/helm/mqnamesrv) and the plain manifests rendered from it
# (packaging/kubernetes/mqnamesrv.yaml), checked without a cluster:
#   - the chart's copies of contrib/'s dashboard and alert rules are contrib/'s;
#   - `helm lint --strict` with the default values and with every option on (values-all.yaml);
#   - the committed manifests are `helm template` of the defaults (tests/package/helm.sh
#     --update rewrites them);
#   - both renders pass kubernetes-validate --strict (the JSON schemas of each Kubernetes
#     version in K8S_VERSIONS); the Prometheus Operator's kinds, which it has no schema for, are
#     checked by hand: their selectors, ports and rules (promtool);
#   - what refers to what inside a render: selectors and pod labels, named ports, volumes and
#     mounts, non-root and read-only root, secrets mounted as directories;
#   - the rendered namesrv.conf is one the server takes (`mqnamesrv -c FILE -p`);
#   - the reload that the chart's "Secrets with reload on change" rests on: an account file and
#     a certificate laid out as the kubelet lays out a Secret volume (..data -> a timestamped
#     directory, each file a link through ..data), swapped as the kubelet swaps them, are
#     reloaded by the running server.
# helm is built from source with `go install` (the Go module proxy), once per version, into
# ~/.cache/mqnamesrv-tests/helm-<version>; Go's own caches keep the rest. `--build-only` does
# just that (tests/run starts it in the background, as the Rust client's build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"

HELM_VERSION=v3.22.0
GO_MIN=1.26 # helm v3.22.0's go.mod
# Kubernetes releases still maintained upstream (1.35-1.37) and those cloud providers still
# run under extended support (1.32-1.34).
K8S_VERSIONS="1.32.0 1.33.0 1.34.0 1.35.0 1.36.0 1.37.0"
chart=$here/packaging/helm/mqnamesrv
manifests=$here/packaging/kubernetes/mqnamesrv.yaml
helm_dir=${XDG_CACHE_HOME:-$HOME/.cache}/mqnamesrv-tests/helm-$HELM_VERSION
HELM=$helm_dir/helm

mode=check
case ${1:-} in
--build-only) mode=build ;;
--update) mode=update ;;
"") ;;
*) echo "usage: tests/package/helm.sh [--build-only | --update]" >&2; exit 2 ;;
esac

# One build at a time (tests/run's background build and this script may both get here).
install_helm() {
    mkdir -p "$helm_dir"
    exec {lock}>"$helm_dir.lock"
    flock "$lock"
    if [[ ! -x $HELM ]]; then
        it_require go
        local v
        v=$(go env GOVERSION | sed 's/^go//')
        if [[ $(printf '%s\n%s\n' "$GO_MIN" "$v" | sort -V | head -1) != "$GO_MIN" ]]; then
            echo "!!!!!!!! helm $HELM_VERSION needs Go $GO_MIN or later, this go is $v" >&2
            exit 1
        fi
        it_log "building helm $HELM_VERSION (go install, first run only: minutes)"
        local start=$SECONDS
        if ! GOBIN=$helm_dir/bin.tmp.$$ GOFLAGS=-buildvcs=false go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
            >"$helm_dir/build.log" 2>&1; then
            tail -20 "$helm_dir/build.log" >&2
            echo "helm $HELM_VERSION: go install failed" >&2
            exit 1
        fi
        mv "$helm_dir/bin.tmp.$$/helm" "$HELM"
        rmdir "$helm_dir/bin.tmp.$$"
        it_log "helm built in $((SECONDS - start)) s"
    fi
    exec {lock}>&-
}

# helm keeps its own state out of the user's home.
export HELM_CACHE_HOME=$here/build/helm/cache HELM_CONFIG_HOME=$here/build/helm/config \
    HELM_DATA_HOME=$here/build/helm/data
render_defaults() {
    printf '# The mqnamesrv Helm chart (packaging/helm/mqnamesrv) rendered with its default values,\n'
    printf '# for clusters without Helm: kubectl apply -n NAMESPACE -f mqnamesrv.yaml (it names no\n'
    printf '# namespace). Made by tests/package/helm.sh --update (helm template mqnamesrv); do not edit.\n'
    "$HELM" template mqnamesrv "$chart"
}

if [[ $mode == build ]]; then
    it_init helm-build --no-server
    install_helm
    it_log "helm $HELM_VERSION: $HELM"
    exit 0
fi
if [[ $mode == update ]]; then
    install_helm
    render_defaults >"$manifests.tmp"
    mv "$manifests.tmp" "$manifests"
    echo "wrote $manifests"
    exit 0
fi

it_require python3 promtool openssl
it_init helm
install_helm
it_check "helm $HELM_VERSION runs" bash -c '"$1" version >/dev/null' _ "$HELM"

# ---- kubernetes-validate in a venv pinned by hash ----------------------------------------------
req=$here/tests/package/kubernetes-validate/requirements.txt
key=$( (cat "$req"; python3 -c 'import sys; print(sys.version)') | sha1sum | cut -c1-12)
venv=$IT_CACHE/k8s-validate-$key
if [[ ! -f $venv/.installed ]]; then
    it_log "installing kubernetes-validate (pip into $venv)"
    rm -rf "$venv"
    if ! { python3 -m venv "$venv" &&
        "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
            --require-hashes -r "$req"; } >"$IT_WORK/pip.log" 2>&1; then
        cat "$IT_WORK/pip.log" >&2
        echo "installing kubernetes-validate failed (python3-venv missing? bin/install-deps --test)" >&2
        exit 1
    fi
    touch "$venv/.installed"
fi

# ---- the chart ------------------------------------------------------------------------------------
it_check "the chart's dashboard is contrib/grafana/mqnamesrv.json" \
    cmp -s "$chart/files/mqnamesrv.json" "$here/contrib/grafana/mqnamesrv.json"
it_check "the chart's alert rules are contrib/prometheus/alerts.yml" \
    cmp -s "$chart/files/alerts.yml" "$here/contrib/prometheus/alerts.yml"
all_values=$here/tests/package/helm-values-all.yaml
for v in defaults all; do
    args=()
    [[ $v == all ]] && args=(-f "$all_values")
    if "$HELM" lint --strict "$chart" "${args[@]}" >"$IT_WORK/lint-$v.out" 2>&1; then
        it_record pass "helm lint --strict ($v values)"
    else
        it_record fail "helm lint --strict ($v values)"
        cat "$IT_WORK/lint-$v.out" >&2
    fi
    "$HELM" template mqnamesrv "$chart" "${args[@]}" >"$IT_WORK/render-$v.yaml" 2>"$IT_WORK/render-$v.err" ||
        cat "$IT_WORK/render-$v.err" >&2
    it_check "helm template ($v values) renders, and says nothing on stderr" \
        test -s "$IT_WORK/render-$v.yaml" -a ! -s "$IT_WORK/render-$v.err"
done
render_defaults >"$IT_WORK/manifests.yaml"
if cmp -s "$IT_WORK/manifests.yaml" "$manifests"; then
    it_record pass "packaging/kubernetes/mqnamesrv.yaml is the chart rendered with its defaults"
else
    it_record fail "packaging/kubernetes/mqnamesrv.yaml is stale: run tests/package/helm.sh --update"
    diff "$manifests" "$IT_WORK/manifests.yaml" | head -30 >&2 || true
fi

# ---- schemas ------------------------------------------------------------------------------------
for k in $K8S_VERSIONS; do
    for v in defaults all; do
        out=$("$venv/bin/kubernetes-validate" --strict -k "$k" "$IT_WORK/render-$v.yaml" 2>&1) || true
        # The Prometheus Operator's kinds have no schema here (checked below); nothing else may
        # lack one.
        bad=$(grep -v '^INFO ' <<<"$out" | grep -vE "^WARN .*(ServiceMonitor|PodMonitor|PrometheusRule)" || true)
        if [[ -z $bad ]] && grep -q "passed for resource statefulset/" <<<"$out"; then
            it_record pass "kubernetes-validate --strict, Kubernetes $k, $v values: $(grep -c '^INFO ' <<<"$out") resources"
        else
            it_record fail "kubernetes-validate --strict, Kubernetes $k, $v values"
            printf '%s\n' "${bad:-$out}" | head -20 >&2
        fi
    done
done

# ---- what refers to what, in each render; the server takes the rendered config -----------------
for v in defaults all; do
    out=$("$venv/bin/python" "$here/tests/package/chart_refs.py" "$IT_WORK/render-$v.yaml" "$IT_WORK/$v" \
        "$here/contrib" 2>&1) || true
    while read -r verdict what; do
        it_record "$verdict" "$v values: $what"
    done < <(sed -n 's/^RESULT \(pass\|fail\) /\1 /p' <<<"$out")
    grep -v '^RESULT ' <<<"$out" >&2 || true
    it_check "$v values: the cross-reference checks ran" test -s "$IT_WORK/$v/namesrv.conf"
    rc=0
    ROCKETMQ_HOME=$IT_WORK "$MQNAMESRV_BIN" -c "$IT_WORK/$v/namesrv.conf" -p >"$IT_WORK/$v/p.out" 2>&1 || rc=$?
    it_check "$v values: mqnamesrv -c namesrv.conf -p takes the rendered config (exit $rc)" test "$rc" -eq 0
    unknown=$(grep "unknown property" "$IT_WORK/$v/p.out" || true)
    it_check "$v values: every key of the rendered config is one the server knows" test -z "$unknown"
    [[ -z $unknown ]] || printf '%s\n' "$unknown" >&2
done
if [[ -s $IT_WORK/all/prometheusrule.yml ]]; then
    it_check "the PrometheusRule's groups pass promtool check rules" \
        bash -c 'promtool check rules "$1" >"$1.promtool" 2>&1 || { cat "$1.promtool" >&2; false; }' _ \
        "$IT_WORK/all/prometheusrule.yml"
else
    it_record fail "values-all renders a PrometheusRule"
fi

# ---- Secret volumes as the kubelet updates them: the server reloads them -------------------------
sec=$IT_WORK/secret
mkdir -p "$sec"
# secret_version <dir> <name>: the dir becomes the Secret's volume with the files of <name>/
# (its content): a new timestamped directory, ..data swapped to it in one rename, as the
# kubelet's atomic writer does; each file is a link through ..data.
secret_version() {
    local dir=$1 src=$2 f
    mkdir -p "$dir"
    local ts
    ts=..$(date +%Y_%m_%d_%H_%M_%S.%N)
    cp -r "$src" "$dir/$ts"
    ln -sfn "$ts" "$dir/..data_tmp"
    mv -T "$dir/..data_tmp" "$dir/..data"
    for f in "$src"/*; do
        f=$(basename "$f")
        [[ -L $dir/$f ]] || ln -s "..data/$f" "$dir/$f"
    done
}
mkdir -p "$sec/v1" "$sec/v2"
cat >"$sec/v1/plain_acl.yml" <<'EOF'
accounts:
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
EOF
cat >"$sec/v2/plain_acl.yml" <<'EOF'
accounts:
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
  - accessKey: newbroker
    secretKey: 87654321
EOF
for v in v1 v2; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=ns-$v" \
        -keyout "$sec/$v/tls.key" -out "$sec/$v/tls.crt" >/dev/null 2>&1
done
mkdir -p "$sec/acl-v1" "$sec/acl-v2" "$sec/tls-v1" "$sec/tls-v2"
for v in v1 v2; do
    cp "$sec/$v/plain_acl.yml" "$sec/acl-$v/"
    cp "$sec/$v/tls.crt" "$sec/$v/tls.key" "$sec/tls-$v/"
done
secret_version "$sec/acl" "$sec/acl-v1"
secret_version "$sec/tls" "$sec/tls-v1"
it_start_mqnamesrv ks --set aclEnable=true --set "aclPlainFile=$sec/acl/plain_acl.yml" \
    --set tls.test.mode.enable=false --set "tls.server.certPath=$sec/tls/tls.crt" \
    --set "tls.server.keyPath=$sec/tls/tls.key"
it_check "the server started with the account file and the certificate of the Secret volumes" \
    grep -q "ACL: $sec/acl/plain_acl.yml: 1 account " "$ks_dir/namesrv.log"
it_check "... the certificate of the first version (CN=ns-v1)" \
    grep -q "TLS: server context: certificate CN=ns-v1" "$ks_dir/namesrv.log"
sleep 1.1 # the next version gets another mtime even on a coarse clock
secret_version "$sec/acl" "$sec/acl-v2"
secret_version "$sec/tls" "$sec/tls-v2"
eventually 20 "the account file swapped kubelet-style is reloaded (2 accounts)" \
    grep -q "ACL: $sec/acl/plain_acl.yml: 2 accounts" "$ks_dir/namesrv.log"
eventually 20 "the certificate swapped kubelet-style is reloaded (CN=ns-v2)" \
    grep -q "TLS: server context reloaded.*CN=ns-v2" "$ks_dir/namesrv.log"
it_stop_mqnamesrv ks
it_finish
