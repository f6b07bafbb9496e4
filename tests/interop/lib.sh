# shellcheck shell=bash
# Shared helpers of the interop tests (sourced, not run). They start mqnamesrv, the Java
# NameServer and real Java brokers on loopback, resolve RocketMQ artifacts from Maven Central,
# and count checks. Every process started here is recorded and killed on exit, so a failing
# script leaves nothing behind.
#
#   source tests/interop/lib.sh
#   it_init <suite-name>          work dir build/interop/<suite>, EXIT trap, tool checks
#   it_start_mqnamesrv ns1 [--set k=v ...]   sets ns1_port, ns1_pid, ns1_dir
#   it_start_java_namesrv jns 5.x [conf lines ...]   sets jns_port, jns_pid, jns_dir
#   it_start_broker b1 5.x 127.0.0.1:$ns1_port [conf lines ...]   sets b1_port, b1_pid, b1_dir
#   it_mqadmin 5.x clusterList -n 127.0.0.1:$ns1_port
#   it_check "what" <command ...>  /  it_check_contains "what" "$text" "needle"
#   drv_start d5 5.x; drv d5 <request>; adm d5 <mqadmin args>   (ItDriver JVMs; reply in R)
#   has "what" "text in R"; lacks ...; eventually <s> "what" <command ...>
#   run_client <label> <min checks> <program ...>   (a program printing RESULT pass|fail lines)
#   it_finish                      prints the tally, exits 1 on any failure
#
# Artifact sets (pinned versions; tests/interop/java/<set>/pom.xml):
#   5.x         rocketmq 5.5.0 broker, namesrv, tools, client
#   4.9-broker  rocketmq-broker and namesrv 4.9.7 (4.9.8 has no broker on Maven Central)
#   4.9-client  rocketmq-client and tools 4.9.8

IT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IT_JAVA_OPTS=${IT_JAVA_OPTS:--Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}
# On JDK 17 a 4.9.x broker's shutdown hook dies in MappedFile.clean (reflection into java.nio
# and jdk.internal.ref) before it sends UNREGISTER_BROKER, unless these packages are opened.
IT_BROKER_JAVA_OPTS="--add-opens=java.base/java.nio=ALL-UNNAMED \
--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
IT_PIDS=()
IT_PASS=0
IT_FAIL=0
IT_FAILED=()

it_log() {
    printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# A missing toolchain fails the suite loudly: CI has them all, and a silent skip would hide it.
it_require() {
    local tool missing=()
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "!!!!!!!! INTEROP: missing toolchain: ${missing[*]} -- these interop tests CANNOT run" >&2
        echo "!!!!!!!! install it (bin/install-deps --test) and run again" >&2
        exit 1
    fi
}

# it_init <suite> [--no-server]: --no-server for a run that only builds a client program
# (run_rust.sh --build-only), which may start before mqnamesrv is built.
it_init() {
    IT_SUITE=$1
    IT_WORK=$IT_ROOT/build/interop/$IT_SUITE
    rm -rf "$IT_WORK"
    mkdir -p "$IT_WORK"
    IT_CACHE=$IT_ROOT/build/interop/cache
    mkdir -p "$IT_CACHE"
    MQNAMESRV_BIN=${MQNAMESRV_BIN:-$IT_ROOT/build/debug/mqnamesrv}
    [[ ${2:-} == --no-server || -x $MQNAMESRV_BIN ]] ||
        { echo "interop: no mqnamesrv binary at $MQNAMESRV_BIN (build first)" >&2; exit 1; }
    trap it_cleanup EXIT
    it_log "== interop suite $IT_SUITE (work dir $IT_WORK)"
}

# it_java_home <dir>: makes <dir> a ROCKETMQ_HOME that 4.9.x startup classes accept.
it_java_home() {
    local role
    mkdir -p "$1/conf" "$1/home"
    for role in broker namesrv tools; do
        cp "$IT_ROOT/tests/interop/conf/logback.xml" "$1/conf/logback_$role.xml"
    done
}

it_cleanup() {
    local pid
    for pid in "${IT_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}

# Prints a port P such that P-2 .. P+span are all free on 127.0.0.1 (a broker uses P, P-2 for
# its fast channel and P+1 for HA). Ports come from 20000-32000, below the ephemeral range, so
# an outgoing connection cannot take one between the check and the bind. tests/run runs suites
# side by side and gives each lane its own part of that range (IT_PORT_LO, IT_PORT_HI), so that
# two suites cannot both pick a port in the seconds before either binds it. Within a suite the
# ranges handed out are written down ($IT_WORK/ports.taken) and never handed out again: two
# brokers launched back to back would otherwise both find a shared port free, since neither
# JVM has bound its ports when the second asks.
it_free_port() {
    local span=${1:-1}
    python3 - "$span" "${IT_PORT_LO:-20002}" "${IT_PORT_HI:-32000}" "${IT_WORK:+$IT_WORK/ports.taken}" <<'EOF'
import fcntl, random, socket, sys
span, lo, hi, taken_path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
taken = open(taken_path, "a+") if taken_path else None
used = []
if taken:
    fcntl.flock(taken, fcntl.LOCK_EX)
    taken.seek(0)
    used = [tuple(map(int, line.split())) for line in taken if line.strip()]
for _ in range(200):
    base = random.randrange(lo, hi - span)
    first, last = base - 2, base + span
    if any(first <= u_last and u_first <= last for u_first, u_last in used):
        continue
    socks = []
    try:
        for p in range(first, last + 1):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    if taken:
        taken.write(f"{first} {last}\n")
        taken.close()
    print(base)
    sys.exit(0)
sys.exit("no free port range found")
EOF
}

# it_wait <seconds> <command ...>: runs the command every 0.2 s until it succeeds.
it_wait() {
    local secs=$1
    shift
    local deadline=$((SECONDS + secs))
    while ((SECONDS < deadline)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# Resolves the runtime classpath of tests/interop/java/<set>/pom.xml once (cached by the pom's
# hash; Maven's own ~/.m2 cache keeps the jars between runs) and prints it.
it_classpath() {
    local set=$1 pom=$IT_ROOT/tests/interop/java/$1/pom.xml
    [[ -f $pom ]] || { echo "interop: no artifact set $set ($pom)" >&2; return 1; }
    local key
    key=$(sha1sum "$pom" | cut -c1-12)
    local cp=$IT_CACHE/$set-$key.classpath
    if [[ ! -s $cp ]]; then
        it_log "resolving Maven artifacts of set $set (first run downloads them)"
        # One Maven at a time (suites run side by side share ~/.m2, and Maven 3.8 does not lock
        # it); the temporary file is this shell's own, so a second resolver cannot truncate it.
        if ! flock "$IT_CACHE/.mvn.lock" mvn -q -B -f "$pom" dependency:build-classpath \
            -Dmdep.outputFile="$cp.tmp.$$" >"$IT_CACHE/$set-mvn.$$.log" 2>&1; then
            cat "$IT_CACHE/$set-mvn.$$.log" >&2
            echo "interop: Maven could not resolve $set" >&2
            return 1
        fi
        mv "$cp.tmp.$$" "$cp"
        rm -f "$IT_CACHE/$set-mvn.$$.log"
    fi
    cat "$cp"
}

# it_start_mqnamesrv <name> [extra mqnamesrv args]: starts mqnamesrv on a free port with its
# own KV file, config store and log file. Sets <name>_port, <name>_pid, <name>_dir.
it_start_mqnamesrv() {
    local name=$1
    shift
    local dir=$IT_WORK/$name
    mkdir -p "$dir"
    rm -f "$dir/port"
    ROCKETMQ_HOME=$IT_ROOT \
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "$MQNAMESRV_BIN" --set listenPort=0 --set bindAddress=127.0.0.1 \
        --set portFile="$dir/port" --set kvConfigPath="$dir/kvConfig.json" \
        --set configStorePath="$dir/namesrv.properties" --set logPath="$dir/namesrv.log" \
        "$@" >"$dir/stdout" 2>&1 &
    local pid=$!
    IT_PIDS+=("$pid")
    if ! it_wait 20 test -s "$dir/port"; then
        cat "$dir/stdout" >&2
        echo "interop: mqnamesrv $name did not start" >&2
        return 1
    fi
    printf -v "${name}_port" '%s' "$(cat "$dir/port")"
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    it_log "mqnamesrv $name on 127.0.0.1:$(cat "$dir/port") (pid $pid)"
}

# it_stop_mqnamesrv <name>: SIGTERM; the server must exit 0 without a sanitizer report.
it_stop_mqnamesrv() {
    local name=$1
    local pidvar=${name}_pid dirvar=${name}_dir
    local pid=${!pidvar} dir=${!dirvar} rc=0
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || rc=$?
    if [[ $rc -ne 0 ]] || grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$dir/stdout"; then
        it_record fail "mqnamesrv $name exits 0 and clean on SIGTERM (exit $rc)"
        tail -40 "$dir/stdout" >&2
    else
        it_record pass "mqnamesrv $name exits 0 and clean on SIGTERM"
    fi
}

# it_check_log_clean <name>: mqnamesrv <name> logged no ERROR line and closed no connection for
# bytes it could not read (a client that reconnects after such a close would hide it otherwise).
it_check_log_clean() {
    local dirvar=${1}_dir bad
    bad=$(grep -E 'closing connection .*(first bytes|TLS)| ERROR ' "${!dirvar}/namesrv.log" || true)
    it_check "mqnamesrv $1 logged no protocol error or ERROR line" test -z "$bad"
    [[ -z $bad ]] || printf '%s\n' "$bad" | head -20 >&2
}

# it_check_same "what" "<through mqnamesrv>" "<through Java>": passes when the first is not empty
# and both are the same text; else shows their difference.
it_check_same() {
    if [[ -n $2 && $2 == "$3" ]]; then
        it_record pass "$1"
    else
        it_record fail "$1 (- mqnamesrv, + the Java NameServer):"
        diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -40 >&2 || true
    fi
}

# it_start_java_namesrv <name> <set> [namesrv.conf lines ...]: the Java NameServer of that
# artifact set, on a free port; extra lines are appended to its -c file.
it_start_java_namesrv() {
    local name=$1 set=$2
    shift 2
    local dir=$IT_WORK/$name port cp
    it_java_home "$dir"
    cp=$(it_classpath "$set") || return 1
    port=$(it_free_port 1)
    {
        printf 'listenPort=%s\nkvConfigPath=%s\nconfigStorePath=%s\n' "$port" \
            "$dir/kvConfig.json" "$dir/namesrv.properties"
        [[ $# -eq 0 ]] || printf '%s\n' "$@"
    } >"$dir/namesrv.conf"
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$dir java $IT_JAVA_OPTS -Duser.home="$dir/home" -cp "$cp" \
        org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" >"$dir/stdout" 2>&1 &
    local pid=$!
    IT_PIDS+=("$pid")
    if ! it_wait 60 grep -q 'boot success' "$dir/stdout"; then
        tail -40 "$dir/stdout" >&2
        echo "interop: Java NameServer $name did not start" >&2
        return 1
    fi
    printf -v "${name}_port" '%s' "$port"
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    it_log "Java NameServer $name ($set) on 127.0.0.1:$port (pid $pid)"
}

# it_start_broker <name> <set> <namesrvAddr> [broker.conf lines ...]: a real Java broker with
# small store files in its own directory (it_launch_broker), started and awaited. Sets
# <name>_port, <name>_pid, <name>_dir.
it_start_broker() {
    it_launch_broker "$@" && it_await_broker "$1"
}

# it_mqadmin <set> <subcommand and args>: runs mqadmin of that artifact set, prints its output.
it_mqadmin() {
    local set=$1
    shift
    local cp
    cp=$(it_classpath "$set") || return 1
    it_java_home "$IT_WORK/mqadmin"
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$IT_WORK/mqadmin java $IT_JAVA_OPTS -Duser.home="$IT_WORK/mqadmin/home" -cp "$cp" \
        org.apache.rocketmq.tools.command.MQAdminStartup "$@" 2>&1 | grep -v '|-INFO in\|^$' || true
}

it_record() {
    local verdict=$1
    shift
    if [[ $verdict == pass ]]; then
        IT_PASS=$((IT_PASS + 1))
        it_log "PASS: $*"
    else
        IT_FAIL=$((IT_FAIL + 1))
        IT_FAILED+=("$*")
        it_log "FAIL: $*"
    fi
}

# it_check "what" <command ...>: passes when the command exits 0.
it_check() {
    local what=$1
    shift
    if "$@"; then it_record pass "$what"; else it_record fail "$what"; fi
}

# it_check_contains "what" "<text>" "<fixed string>": passes when text contains the string.
it_check_contains() {
    if grep -qF -- "$3" <<<"$2"; then
        it_record pass "$1"
    else
        it_record fail "$1 (no '$3' in:)"
        printf '%s\n' "$2" | head -30 >&2
    fi
}

it_finish() {
    it_log "== $IT_SUITE: $IT_PASS passed, $IT_FAIL failed"
    local f
    for f in "${IT_FAILED[@]}"; do
        it_log "   failed: $f"
    done
    [[ $IT_FAIL -eq 0 ]]
}

# it_launch_broker <name> <set> <namesrvAddr> [broker.conf lines ...]: starts a real Java broker
# and returns at once, so that several brokers boot in parallel; it_await_broker <name> then
# waits for its boot line (which a broker may print before its first registration: wait for the
# registration itself where it matters). Sets <name>_port, <name>_pid, <name>_dir at launch.
it_launch_broker() {
    local name=$1 set=$2 nsaddr=$3
    shift 3
    local dir=$IT_WORK/$name port cp
    it_java_home "$dir"
    cp=$(it_classpath "$set") || return 1
    port=$(it_free_port 1)
    {
        echo "brokerClusterName=ItCluster"
        echo "brokerName=$name"
        echo "brokerId=0"
        echo "brokerIP1=127.0.0.1"
        echo "listenPort=$port"
        echo "haListenPort=$((port + 1))"
        echo "namesrvAddr=$nsaddr"
        echo "storePathRootDir=$dir/store"
        echo "storePathCommitLog=$dir/store/commitlog"
        echo "mappedFileSizeCommitLog=67108864"
        echo "mappedFileSizeConsumeQueue=600000"
        echo "autoCreateTopicEnable=true"
        printf '%s\n' "$@"
    } >"$dir/broker.conf"
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$dir java $IT_JAVA_OPTS $IT_BROKER_JAVA_OPTS -Duser.home="$dir/home" -cp "$cp" \
        org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" >"$dir/stdout" 2>&1 &
    local pid=$!
    IT_PIDS+=("$pid")
    printf -v "${name}_port" '%s' "$port"
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    it_log "broker $name ($set) launched on 127.0.0.1:$port (pid $pid)"
}

# it_await_broker <name> [seconds]: waits for the broker's "boot success" (120 s unless said;
# a broker loading 100,000 topics on a loaded machine takes longer).
it_await_broker() {
    local name=$1 secs=${2:-120}
    local dirvar=${name}_dir
    local dir=${!dirvar}
    if ! it_wait "$secs" grep -q 'boot success' "$dir/stdout"; then
        tail -40 "$dir/stdout" >&2
        echo "interop: broker $name did not start" >&2
        return 1
    fi
    it_log "broker $name booted"
}

# it_javac <set> <source.java ...>: compiles the sources against the set's classpath once (cached
# by the hash of the sources and of the classpath) and prints the directory of the classes.
it_javac() {
    local set=$1
    shift
    local cp key out
    cp=$(it_classpath "$set") || return 1
    key=$( (cat "$@"; printf '%s' "$cp") | sha1sum | cut -c1-12)
    out=$IT_CACHE/classes-$set-$key
    if [[ ! -d $out ]]; then
        it_log "compiling $(basename -a "$@" | tr '\n' ' ')against set $set"
        local tmp=$out.tmp.$$
        rm -rf "$tmp"
        mkdir -p "$tmp"
        if ! javac -nowarn -encoding UTF-8 -cp "$cp" -d "$tmp" "$@" >"$tmp.log" 2>&1; then
            cat "$tmp.log" >&2
            echo "interop: javac failed for set $set" >&2
            return 1
        fi
        rm -f "$tmp.log"
        # A suite beside this one may have compiled the same classes first: keep its copy.
        mv -T "$tmp" "$out" 2>/dev/null || rm -rf "$tmp"
    fi
    printf '%s\n' "$out"
}

# it_npm_ci <source dir> <cache name>: installs the packages pinned by the dir's package.json and
# package-lock.json once (npm ci into build/interop/cache/<cache name>-<hash of both>; npm's own
# cache keeps the tarballs) and prints the node_modules directory.
it_npm_ci() {
    local src=$1 name=$2 key dir
    key=$(cat "$src/package.json" "$src/package-lock.json" | sha1sum | cut -c1-12)
    dir=$IT_CACHE/$name-$key
    if [[ ! -f $dir/.installed ]]; then
        it_log "installing the npm packages of $(basename "$src") (npm ci into $dir)"
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$src/package.json" "$src/package-lock.json" "$dir/"
        if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$dir.npm-ci.log" 2>&1; then
            cat "$dir.npm-ci.log" >&2
            echo "interop: npm ci failed for $src" >&2
            return 1
        fi
        touch "$dir/.installed"
    fi
    printf '%s\n' "$dir/node_modules"
}

# run_client <label> <min results> <command ...>: runs a client program with stdout in
# $IT_WORK/<label>.out and stderr in $IT_WORK/<label>.log, records each RESULT line as a check,
# and fails when it exits non-zero or printed fewer results than expected (it died early).
run_client() {
    local label=$1 min=$2
    shift 2
    local rc=0 verdict what count=0 start=$SECONDS
    "$@" >"$IT_WORK/$label.out" 2>"$IT_WORK/$label.log" || rc=$?
    while read -r verdict what; do
        count=$((count + 1))
        it_record "$verdict" "$label: $what"
    done < <(sed -n 's/^RESULT \(pass\|fail\) /\1 /p' "$IT_WORK/$label.out")
    if [[ $rc -ne 0 || $count -lt $min ]]; then
        it_record fail "$label client exits 0 with at least $min checks (exit $rc, $count checks)"
        it_log "last lines of $IT_WORK/$label.log:"
        tail -25 "$IT_WORK/$label.log" >&2
    else
        it_record pass "$label client exits 0 with all $count checks passed in $((SECONDS - start)) s"
    fi
}

# ---- the driver JVMs (tests/interop/java/apps/ItDriver.java) -----------------------------

# drv_start <name> <set>: starts ItDriver on the set's classpath, talking over two FIFOs.
drv_start() {
    local name=$1 set=$2 classes cp dir=$IT_WORK/drv-$1 fin fout
    shift 2 # further arguments: JVM options
    it_java_home "$dir"
    classes=$(it_javac "$set" "$IT_ROOT/tests/interop/java/apps/ItDriver.java")
    cp=$(it_classpath "$set")
    mkfifo "$dir/in" "$dir/out"
    # Push consumers rebalance every 20 s by default; a start that could not rebalance at once
    # (a busy heartbeat lock) would wait that long.
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$dir java $IT_JAVA_OPTS -Duser.home="$dir/home" \
        -Drocketmq.client.rebalance.waitInterval=1000 "$@" -cp "$classes:$cp" ItDriver \
        <"$dir/in" >"$dir/out" 2>"$dir/stderr" &
    IT_PIDS+=("$!")
    exec {fin}>"$dir/in" {fout}<"$dir/out"
    printf -v "drv_${name}_in" '%s' "$fin"
    printf -v "drv_${name}_out" '%s' "$fout"
    printf -v "drv_${name}_dir" '%s' "$dir"
}

# drv <name> <field>...: one request; the reply text lands in R (a failed request's reply says
# "driver: ... failed"). No subshell, so that the FIFOs stay in step. A driver that does not
# answer ends the run.
drv() {
    local name=$1
    shift
    local iv=drv_${name}_in ov=drv_${name}_out dv=drv_${name}_dir line
    (
        IFS=$'\t'
        printf '%s\n' "$*"
    ) >&"${!iv}"
    R=''
    while IFS= read -r -t 180 line <&"${!ov}"; do
        [[ $line == '@@END '* ]] && return 0
        # logback's own status lines (5.x tools print them once, at the first logger)
        [[ $line == *' |-INFO in '* || $line == *' |-WARN in '* ]] && continue
        R+=$line$'\n'
    done
    it_record fail "driver $name answers '$1' within 180 s"
    tail -30 "${!dv}/stderr" >&2
    exit 1
}

# adm <driver> <mqadmin arguments>: one mqadmin command, parsed by the real MQAdminStartup.
adm() {
    local d=$1
    shift
    drv "$d" mqadmin "$@"
}

# ---- checks on the last driver reply (R) ----------------------------------------------------

has() { it_check_contains "$1" "$R" "$2"; }

# eventually <seconds> "what" <command ...>: it_wait as a check; a failure shows the last
# driver reply, which is what the command looked at when it queried a NameServer.
eventually() {
    local secs=$1 what=$2
    shift 2
    if it_wait "$secs" "$@"; then
        it_record pass "$what"
    else
        it_record fail "$what (not within $secs s; last driver reply:)"
        printf '%s\n' "$R" | head -30 >&2
    fi
}

lacks() {
    if grep -qF -- "$2" <<<"$R"; then
        it_record fail "$1 (unexpected '$2' in:)"
        printf '%s\n' "$R" | head -30 >&2
    else
        it_record pass "$1"
    fi
}

# ---- the RocketMQ 5.x Proxy (artifact set "proxy", tests/interop/java/proxy/pom.xml) -------

# it_start_proxy <name> <namesrvAddr> [extra "key": value JSON members ...]: a rocketmq-proxy
# 5.5.0 in cluster mode (it asks the NameServer for routes and talks remoting to the brokers of
# cluster ItCluster), gRPC and remoting on free ports, small thread pools and heap, started and
# awaited. A broker of ItCluster must be registered first: at startup the Proxy creates its
# system topic on that cluster, and exits when it finds no broker. Its own logback config
# (rmq.proxy.logback.xml in the jar) writes under <dir>/home/logs/rocketmqlogs. Sets
# <name>_port (gRPC), <name>_remoting_port, <name>_pid, <name>_dir.
it_start_proxy() {
    it_launch_proxy "$@" && it_await_proxy "$1"
}

# it_launch_proxy: the launch half of it_start_proxy (returns at once, several boot in parallel).
it_launch_proxy() {
    local name=$1 nsaddr=$2
    shift 2
    local dir=$IT_WORK/$name grpc_port remoting_port cp extra=''
    mkdir -p "$dir/home"
    cp=$(it_classpath proxy) || return 1
    grpc_port=$(it_free_port 1)
    remoting_port=$(it_free_port 1)
    [[ $# -eq 0 ]] || extra=$(printf ',\n  %s' "$@")
    cat >"$dir/rmq-proxy.json" <<JSON
{
  "rocketMQClusterName": "ItCluster",
  "proxyName": "$name",
  "namesrvAddr": "$nsaddr",
  "proxyMode": "cluster",
  "localServeAddr": "127.0.0.1",
  "grpcServerPort": $grpc_port,
  "remotingListenPort": $remoting_port,
  "enablePrintJstack": false,
  "grpcThreadPoolNums": 4,
  "grpcWorkerLoopNum": 2,
  "rocketmqMQClientNum": 2,
  "heartbeatSyncerThreadPoolNums": 1,
  "metadataThreadPoolNums": 1,
  "transactionHeartbeatThreadPoolNums": 1,
  "grpcShutdownTimeSeconds": 1$extra
}
JSON
    # shellcheck disable=SC2086
    ROCKETMQ_HOME=$dir java $IT_JAVA_OPTS -Xmx160m -XX:MaxDirectMemorySize=128m \
        -Duser.home="$dir/home" -cp "$cp" org.apache.rocketmq.proxy.ProxyStartup \
        -pm cluster -pc "$dir/rmq-proxy.json" >"$dir/stdout" 2>&1 &
    local pid=$!
    IT_PIDS+=("$pid")
    printf -v "${name}_port" '%s' "$grpc_port"
    printf -v "${name}_remoting_port" '%s' "$remoting_port"
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    it_log "proxy $name (cluster mode, NameServer $nsaddr) launched, gRPC 127.0.0.1:$grpc_port, remoting $remoting_port (pid $pid)"
}

# it_await_proxy <name>: waits up to 90 s for the startup line; a Proxy that exited (it could
# not start) fails at once.
it_await_proxy() {
    local name=$1
    local dirvar=${name}_dir pidvar=${name}_pid
    local dir=${!dirvar} pid=${!pidvar} deadline=$((SECONDS + 90))
    while ! grep -q 'rocketmq-proxy startup successfully' "$dir/stdout" && kill -0 "$pid" 2>/dev/null &&
        ((SECONDS < deadline)); do
        sleep 0.2
    done
    if ! grep -q 'rocketmq-proxy startup successfully' "$dir/stdout"; then
        tail -40 "$dir/stdout" >&2
        echo "interop: proxy $name did not start" >&2
        return 1
    fi
    it_log "proxy $name started"
}
