#!/usr/bin/env bash
# The Debian package, end to end: builds the `package` preset, makes the .deb with CPack,
# checks its contents and control data, installs it with dpkg into a scratch root (maintainer
# scripts included: the account and the directories are created there), verifies the systemd
# unit and the logrotate snippet, then starts the installed binary the way the unit does
# (Type=notify socket, -c the installed conf) and talks to it over TCP, stops it with SIGTERM,
# and removes the package; finally systemd_boot.sh installs it in a Debian 12 root booted under
# systemd-nspawn and drives it with systemctl.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"
work=$here/build/package-test
rm -rf "$work"
mkdir -p "$work"
pass=0
fail=0
check() { # check "what" command...
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
pid=
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; true; }
trap cleanup EXIT

for tool in cpack dpkg dpkg-deb systemd-analyze systemd-sysusers systemd-tmpfiles python3 logrotate; do
    command -v "$tool" >/dev/null || { echo "!!!!!!!! package test: missing $tool (bin/install-deps --test)" >&2; exit 1; }
done

cmake --preset package >/dev/null
cmake --build build/package
(cd build/package && rm -f ./*.deb && cpack -G DEB >/dev/null)
version=$(sed -n 's/^project(mqnamesrv VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
deb=$(ls build/package/mqnamesrv_"$version"_*.deb)
echo "== package $deb"

contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/mqnamesrv ./usr/bin/mqcontroller ./etc/mqnamesrv/namesrv.conf ./etc/logrotate.d/mqnamesrv \
    ./usr/lib/systemd/system/mqnamesrv.service ./usr/lib/sysusers.d/mqnamesrv.conf \
    ./usr/lib/tmpfiles.d/mqnamesrv.conf ./usr/share/man/man8/mqnamesrv.8 \
    ./usr/share/doc/mqnamesrv/copyright ./usr/share/doc/mqnamesrv/operations.md \
    ./usr/share/doc/mqnamesrv/examples/plain_acl.yml.example \
    "./usr/share/mqnamesrv/conf -> /etc/mqnamesrv"; do
    check "package contains $f" grep -qF " $f" <<<"$contents"
done
if [[ -f man/nsadmin.1 ]]; then
    check "package contains nsadmin and its man page" grep -q "./usr/bin/nsadmin" <<<"$contents"
fi
control=$(dpkg-deb --field "$deb")
check "control: version $version" grep -qx "Version: $version" <<<"$control"
check "control: depends on libuv1 and libcjson1 (shlibdeps)" grep -q "^Depends:.*libuv1.*" <<<"$control"
check "control: conffiles" grep -qx "/etc/mqnamesrv/namesrv.conf" <(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
man -l --warnings=all man/mqnamesrv.8 >/dev/null 2>"$work/man.err" || true
check "man page renders without warnings" test ! -s "$work/man.err"

# Install into a scratch root: dpkg runs the maintainer scripts outside it with DPKG_ROOT set.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
: >"$root/var/lib/dpkg/status"
cp /etc/passwd /etc/group "$root/etc/"
dpkg --root="$root" --force-script-chrootless --force-depends --log=/dev/null -i "$deb" \
    >"$work/dpkg-install.out" 2>&1 || { cat "$work/dpkg-install.out"; exit 1; }
check "dpkg -i into the scratch root configured the package" \
    grep -q "^Status: install ok installed" <(dpkg --root="$root" -s mqnamesrv)
check "postinst created the mqnamesrv account" grep -q "^mqnamesrv:x:.*:/var/lib/mqnamesrv:" "$root/etc/passwd"
uid=$(awk -F: '$1=="mqnamesrv"{print $3}' "$root/etc/passwd")
check "postinst created /var/lib/mqnamesrv owned by it, 0750" \
    test "$(stat -c '%u %a' "$root/var/lib/mqnamesrv")" = "$uid 750"
check "/etc/mqnamesrv is writable by the service group only" test "$(stat -c '%a' "$root/etc/mqnamesrv")" = "775"

# The unit: systemd-analyze prints nothing for a clean unit (the binary path points into root).
sed "s#/usr/bin/mqnamesrv#$root/usr/bin/mqnamesrv#" "$root/usr/lib/systemd/system/mqnamesrv.service" \
    >"$work/mqnamesrv.service"
systemd-analyze verify --man=no "$work/mqnamesrv.service" >"$work/verify.out" 2>&1 || true
check "systemd-analyze verify finds nothing in the unit" test ! -s "$work/verify.out"
[[ -s $work/verify.out ]] && cat "$work/verify.out"
check "the unit is Type=notify" grep -qx "Type=notify" "$work/mqnamesrv.service"

bin=$root/usr/bin/mqnamesrv
check "--version of the installed binary" grep -q "^mqnamesrv $version (git " <("$bin" --version)
# mqcontroller is mqnamesrv --controller (Java's bin/mqcontroller): its -h is ControllerStartup's.
check "mqcontroller runs /usr/bin/mqnamesrv --controller" \
    grep -qx 'exec /usr/bin/mqnamesrv --controller "$@"' "$root/usr/bin/mqcontroller"
sed "s#/usr/bin/mqnamesrv#$bin#" "$root/usr/bin/mqcontroller" >"$work/mqcontroller"
check "mqcontroller -h prints ControllerStartup's usage" \
    grep -q "^usage: mqcontroller \[-c <arg>\]" <(sh "$work/mqcontroller" -h)

# Start it as the unit does: Type=notify socket, ROCKETMQ_HOME and HOME of the unit (inside
# the scratch root), -c the installed conf; a free port instead of 9876.
exec_line=$(sed -n 's/^ExecStart=//p' "$root/usr/lib/systemd/system/mqnamesrv.service")
check "the unit starts /usr/bin/mqnamesrv -c /etc/mqnamesrv/namesrv.conf" \
    test "$exec_line" = "/usr/bin/mqnamesrv -c /etc/mqnamesrv/namesrv.conf"
python3 "$here/tests/package/notify_listen.py" "$work/notify.sock" >"$work/notify.out" &
listener=$!
for _ in $(seq 100); do [[ -S $work/notify.sock ]] && break; sleep 0.05; done
NOTIFY_SOCKET=$work/notify.sock ROCKETMQ_HOME=$root/usr/share/mqnamesrv HOME=$root/var/lib/mqnamesrv \
    "$bin" -c "$root/etc/mqnamesrv/namesrv.conf" --set listenPort=0 --set bindAddress=127.0.0.1 \
    --set "portFile=$work/port" >"$work/server.out" 2>&1 &
pid=$!
for _ in $(seq 200); do [[ -s $work/port ]] && break; sleep 0.05; done
port=$(cat "$work/port")
check "the installed server answers 319 and 100 over TCP" \
    python3 "$here/tests/package/remoting_probe.py" 127.0.0.1 "$port"
check "kvConfig.json written under the unit's HOME" test -s "$root/var/lib/mqnamesrv/namesrv/kvConfig.json"
check "log file under the unit's HOME" test -s "$root/var/lib/mqnamesrv/logs/rocketmqlogs/namesrv.log"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
check "SIGTERM: exit status 0" test "$status" -eq 0
wait "$listener" || true
check "sd_notify: READY=1 with the address, then STOPPING=1" \
    python3 -c 'import sys; t=open(sys.argv[1]).read().split("\n---\n"); sys.exit(not (len(t)>=2 and "READY=1" in t[0] and "STATUS=serving on 127.0.0.1:" in t[0] and "STOPPING=1" in t[1]))' \
    "$work/notify.out"

# The example account file the package ships is one the installed server accepts.
example=$root/usr/share/doc/mqnamesrv/examples/plain_acl.yml.example
check "the ACL example is the repository's conf/plain_acl.yml.example" \
    cmp -s "$example" "$here/conf/plain_acl.yml.example"
rm -f "$work/port.acl"
ROCKETMQ_HOME=$root/usr/share/mqnamesrv HOME=$root/var/lib/mqnamesrv \
    "$bin" -c "$root/etc/mqnamesrv/namesrv.conf" --set listenPort=0 --set bindAddress=127.0.0.1 \
    --set aclEnable=true --set "aclPlainFile=$example" --set "portFile=$work/port.acl" \
    >"$work/server-acl.out" 2>&1 &
pid=$!
for _ in $(seq 200); do [[ -s $work/port.acl ]] && break; sleep 0.05; done
check "the installed server starts with aclEnable=true and the example accounts" test -s "$work/port.acl"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
check "... and exits 0 on SIGTERM" test "$status" -eq 0
[[ $status -eq 0 ]] || cat "$work/server-acl.out"

# (the account exists in the scratch root only: the host's logrotate checks a copy owned by root)
sed 's/create 0640 mqnamesrv mqnamesrv/create 0640 root root/' "$root/etc/logrotate.d/mqnamesrv" \
    >"$work/logrotate.conf"
logrotate -d "$work/logrotate.conf" >"$work/logrotate.out" 2>&1 || true
# shellcheck disable=SC2016 # $1 is the inner shell's argument
check "logrotate accepts the snippet" bash -c '! grep -qi "^error" "$1"' _ "$work/logrotate.out"

dpkg --root="$root" --force-script-chrootless --log=/dev/null --purge mqnamesrv >"$work/dpkg-purge.out" 2>&1
check "dpkg --purge removes the binary and keeps the KV store" \
    test ! -e "$root/usr/bin/mqnamesrv" -a -s "$root/var/lib/mqnamesrv/namesrv/kvConfig.json"

echo "== package: $pass passed, $fail failed"
# Then the same .deb under a real systemd (a Debian 12 root booted in systemd-nspawn).
"$here/tests/package/systemd_boot.sh" "$deb" || fail=$((fail + 1))
[[ $fail -eq 0 ]]
