#!/usr/bin/env bash
# The .deb under a real systemd: a minimal Debian 12 root (debootstrap, cached under
# ~/.cache/mqnamesrv-tests) boots in systemd-nspawn with a private network; inside it the
# package is installed with dpkg, then `systemctl start mqnamesrv` must bring the Type=notify
# unit to "active" (READY=1 reached systemd), the server must answer a remoting request, the
# log must show the boot line, `systemctl reload` must reopen the log and `systemctl stop` must
# end it cleanly. Usage: tests/package/systemd_boot.sh <path-to.deb>
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deb=$(realpath "$1")
work=$here/build/package-test/systemd
pass=0
fail=0
check() {
    local what=$1
    shift
    if "$@"; then
        echo "PASS: $what"
        pass=$((pass + 1))
    else
        echo "FAIL: $what"
        fail=$((fail + 1))
    fi
}
for tool in debootstrap systemd-nspawn nsenter; do
    command -v "$tool" >/dev/null || { echo "!!!!!!!! systemd test: missing $tool (bin/install-deps --test)" >&2; exit 1; }
done

# The root has the package's runtime dependencies already, so dpkg -i needs no network; the
# cache key is the Depends line, so a new dependency makes a new root.
deps=$(dpkg-deb --field "$deb" Depends | sed 's/([^)]*)//g; s/[|,]/ /g' | xargs -n1 | sort -u | xargs)
key=$(printf '%s' "$deps" | sha256sum | cut -c1-12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mqnamesrv-tests
tarball=$cache/bookworm-$key.tar
mkdir -p "$cache"
if [[ ! -s $tarball ]]; then
    echo "== debootstrap bookworm (minbase, systemd, $deps): first run only"
    rm -rf "$cache/root.tmp"
    debootstrap --variant=minbase --include="systemd,systemd-sysv,dbus,python3,${deps// /,}" \
        bookworm "$cache/root.tmp" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 ||
        { tail -20 "$cache/debootstrap.log"; exit 1; }
    tar -C "$cache/root.tmp" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$cache/root.tmp"
fi
rm -rf "$work"
mkdir -p "$work/root"
tar -C "$work/root" -xf "$tarball"
cp "$deb" "$work/root/root/mqnamesrv.deb"
cp "$here/tests/package/remoting_probe.py" "$work/root/root/"

systemd-nspawn --register=no --keep-unit --quiet -D "$work/root" dpkg -i /root/mqnamesrv.deb \
    >"$work/dpkg.out" 2>&1 || { cat "$work/dpkg.out"; exit 1; }
check "dpkg -i in the Debian 12 root" grep -q "Setting up mqnamesrv" "$work/dpkg.out"

systemd-nspawn --register=no --keep-unit --private-network -D "$work/root" -b \
    >"$work/boot.out" 2>&1 &
nspawn=$!
cleanup() { kill "$nspawn" 2>/dev/null || true; wait "$nspawn" 2>/dev/null || true; }
trap cleanup EXIT
# The container's systemd is the child of systemd-nspawn.
init=
for _ in $(seq 200); do
    init=$(pgrep -P "$nspawn" -x systemd || true)
    [[ -n $init ]] && break
    sleep 0.1
done
[[ -n $init ]] || { cat "$work/boot.out"; echo "no systemd in the container" >&2; exit 1; }
inside() { nsenter -t "$init" -a "$@"; }
for _ in $(seq 300); do
    state=$(inside systemctl is-system-running 2>/dev/null || true)
    [[ $state == running || $state == degraded ]] && break
    sleep 0.1
done
check "systemd in the container is up ($state)" test "$state" = running -o "$state" = degraded

check "systemctl start mqnamesrv" inside systemctl start mqnamesrv
check "the unit is active (Type=notify: READY=1 reached systemd)" \
    test "$(inside systemctl is-active mqnamesrv)" = active
check "it runs as user mqnamesrv" test "$(inside systemctl show -p User --value mqnamesrv)" = mqnamesrv
check "the server answers 319 and 100 on 127.0.0.1:9876" \
    inside python3 /root/remoting_probe.py 127.0.0.1 9876
log=$work/root/var/lib/mqnamesrv/logs/rocketmqlogs/namesrv.log
check "the log under /var/lib/mqnamesrv has the boot line" grep -q "boot success" "$log"
check "kvConfig.json under /var/lib/mqnamesrv" test -s "$work/root/var/lib/mqnamesrv/namesrv/kvConfig.json"
check "systemctl reload (SIGHUP) reopens the log" inside systemctl reload mqnamesrv
for _ in $(seq 50); do grep -q "SIGHUP: log file" "$log" && break; sleep 0.1; done
check "the log says it was reopened" grep -q "SIGHUP: log file .* reopened" "$log"
check "systemctl stop mqnamesrv" inside systemctl stop mqnamesrv
check "stopped cleanly (Result=success, status 0)" \
    test "$(inside systemctl show -p Result --value mqnamesrv) $(inside systemctl show -p ExecMainStatus --value mqnamesrv)" = "success 0"
inside systemctl poweroff >/dev/null 2>&1 || true
for _ in $(seq 100); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.1; done

echo "== systemd: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
