#!/usr/bin/env bash
# The Java NameServer 5.5.0 under the faults of tests/faults (issue 23): the same faults, the
# same peers (fault_peer), and what Java does, printed as one "JAVA <fault>: <observation>" line
# each (docs/operations.md, Faults, has the table). Not a pass/fail test: Java's behaviour is
# recorded, not judged; the script fails only when it cannot run a fault. Needs root, the debug
# build, Maven's RocketMQ 5.5.0 artifacts (tests/interop/java/5.x), fiu-run, faketime, iptables.
#
#   bench/faults_java.sh [fault ...]     faults: disk disklog eio fds clock stall network crash
# shellcheck disable=SC2154 # <name>_port, _pid, _dir, _out are set by the launchers (printf -v)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/faults/lib.sh
source "$here/tests/faults/lib.sh"
# shellcheck source=tests/interop/lib.sh
source "$here/tests/interop/lib.sh"
fs_init java
IT_CACHE=$IT_ROOT/build/interop/cache
mkdir -p "$IT_CACHE"
fs_require java mvn fiu-run fiu-ctrl iptables jq
CP=$(it_classpath 5.x)
REPORT=$IT_ROOT/build/faults-java.txt
: >"$REPORT"
say() { # say <fault> <observation>: one line of the report
    printf 'JAVA %s: %s\n' "$1" "$2" | tee -a "$REPORT" >&2
}

# jstart <name> [--dir D] [--env K=V] [--fiu] [-- namesrv.conf lines]: the Java NameServer on a
# free port, its KV store and config file in D. Sets <name>_port, <name>_pid, <name>_dir,
# <name>_out, <name>_host.
jstart() {
    local name=$1
    shift
    local dir=$FS_WORK/$name env=() wrap=()
    while [[ $# -gt 0 ]]; do
        case $1 in
        --dir) dir=$2; shift 2 ;;
        --env) env+=("$2"); shift 2 ;;
        --fiu) wrap+=(fiu-run -x); shift ;;
        --) shift; break ;;
        *) break ;;
        esac
    done
    mkdir -p "$dir" "$FS_WORK/$name.home"
    it_java_home "$FS_WORK/$name.home"
    local port
    port=$(it_free_port 1)
    {
        printf 'listenPort=%s\nkvConfigPath=%s\nconfigStorePath=%s\n' "$port" \
            "$dir/kvConfig.json" "$dir/namesrv.conf"
        printf 'scanNotActiveBrokerInterval=1000\n'
        [[ $# -eq 0 ]] || printf '%s\n' "$@"
    } >"$dir/namesrv.conf"
    local out=$FS_WORK/$name.stdout boots
    boots=$(grep -c 'boot success' "$out" 2>/dev/null || true)
    # shellcheck disable=SC2086
    env ROCKETMQ_HOME="$FS_WORK/$name.home" "${env[@]}" "${wrap[@]}" java $IT_JAVA_OPTS \
        -Duser.home="$FS_WORK/$name.home/home" -cp "$CP" \
        org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" >>"$out" 2>&1 &
    local pid=$!
    FS_PIDS+=("$pid")
    if ! it_wait 90 booted_since "$out" "${boots:-0}"; then
        tail -30 "$out" >&2
        echo "faults_java: the Java NameServer $name did not start" >&2
        return 1
    fi
    printf -v "${name}_port" '%s' "$port"
    printf -v "${name}_host" '%s' 127.0.0.1
    printf -v "${name}_pid" '%s' "$pid"
    printf -v "${name}_dir" '%s' "$dir"
    printf -v "${name}_out" '%s' "$out"
    fs_log "Java NameServer $name on 127.0.0.1:$port (pid $pid)"
}
booted_since() { # booted_since <stdout> <n>: more than n boot lines
    [[ $(grep -c 'boot success' "$1") -gt $2 ]]
}
jstop() {
    local pidvar=${1}_pid
    kill -TERM "${!pidvar}" 2>/dev/null || true
    wait "${!pidvar}" 2>/dev/null || true
}
jkill() {
    local pidvar=${1}_pid
    kill -KILL "${!pidvar}" 2>/dev/null || true
    wait "${!pidvar}" 2>/dev/null || true
}
jlog() { # jlog <name>: the Java NameServer's log files (5.x: ~/logs/rocketmqlogs/) and stdout
    cat "$FS_WORK/$1.home/home/logs/rocketmqlogs/"*.log "$FS_WORK/$1.stdout" 2>/dev/null || true
}
put() { "$FAULT_PEER" request "$(fs_addr "$1")" 100 namespace="$2" key="$3" value="$4" || true; }
get() { "$NSADMIN_BIN" getKvConfig -n "$(fs_addr "$1")" -s "$2" -k "$3" 2>&1 || true; }
update_config() { "$FAULT_PEER" request "$(fs_addr "$1")" 318 --body "$2" || true; }
brokers() { # brokers <name>: the broker names it lists
    local out
    out=$("$NSADMIN_BIN" clusterList -n "$(fs_addr "$1")" --nsOnly 2>/dev/null) || true
    awk 'NR > 1 { print $2 }' <<<"$out" | sort | tr '\n' ' '
}
expired_lines() { # expired_lines <name>: "The broker channel expired" lines in its log
    jlog "$1" | grep -c 'The broker channel expired' || true
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

fault_disk() {
    local disk=$FS_WORK/jdisk
    fs_mount_tmpfs "$disk" 2m
    jstart jd --dir "$disk"
    say disk "put before the fault: $(put jd F k_before v1)"
    fs_fill "$disk"
    say disk "put on a full disk: $(put jd F k_during v2)"
    say disk "value read back while full: $(get jd F k_during)"
    say disk "kvConfig.json on disk: $(wc -c <"$disk/kvConfig.json") bytes, valid JSON: $(jq -e . "$disk/kvConfig.json" >/dev/null 2>&1 && echo yes || echo no); ERROR lines: $(jlog jd | grep -c 'persist kvconfig Exception' || true)"
    say disk "318 on a full disk: $(update_config jd 'enableTopicList=false')"
    say disk "the -c file on disk after it: $(wc -c <"$disk/namesrv.conf") bytes"
    rm -f "$disk/filler"
    sleep 2
    say disk "kvConfig.json after room is back (no write since): $(wc -c <"$disk/kvConfig.json") bytes"
    jkill jd
    jstart jd --dir "$disk" || say disk "after kill -9 and a restart: does not start"
    say disk "after a restart: k_before=$(get jd F k_before) k_during=$(get jd F k_during); enableTopicList (318 said false): $("$NSADMIN_BIN" getNamesrvConfig -n "$(fs_addr jd)" 2>/dev/null | grep -o 'enableTopicList *= *[a-z]*' | head -1)"
    jstop jd
    fs_umount "$disk"
}

# The log on a full disk: the JVM's user.home (where its logback writes) on the tmpfs.
fault_disklog() {
    local disk=$FS_WORK/jlogdisk
    fs_mount_tmpfs "$disk" 4m
    mkdir -p "$FS_WORK/jl.home"
    it_java_home "$FS_WORK/jl.home"
    mkdir -p "$disk/home"
    rm -rf "$FS_WORK/jl.home/home"
    ln -s "$disk/home" "$FS_WORK/jl.home/home"
    jstart jl
    local A
    A=$(fs_addr jl)
    fs_fill "$disk"
    local before
    before=$(wc -l <"$jl_out")
    fs_bg "$FS_WORK/jl-b.out" "$FAULT_PEER" broker "$A" --name jl-during --seconds 60
    sleep 5
    say disklog "log directory full: a broker registers and its route is served: $("$NSADMIN_BIN" topicRoute -n "$A" -t jl-during-t0 >/dev/null 2>&1 && echo yes || echo NO); lines on stdout since: $(($(wc -l <"$jl_out") - before)) ($(tail -n +"$((before + 1))" "$jl_out" | grep -ciE 'space|IOException' || true) about the failure)"
    rm -f "$disk/filler"
    fs_bg "$FS_WORK/jl-a.out" "$FAULT_PEER" broker "$A" --name jl-after --seconds 30
    sleep 5
    say disklog "room back: the registration after it is in the log file: $(grep -rl 'jl-after' "$disk/home/logs" >/dev/null 2>&1 && echo yes || echo no); the one during it: $(grep -rl 'jl-during' "$disk/home/logs" >/dev/null 2>&1 && echo yes || echo no)"
    jstop jl
    rm -f "$FS_WORK/jl.home/home"
    fs_umount "$disk"
}

fault_eio() {
    jstart je --fiu
    fiu-ctrl -c "enable_stack_by_name name=posix/io/rw/write,failinfo=5,func_name=Java_java_io_FileOutputStream_writeBytes" "$je_pid" >"$FS_WORK/fiu.err" 2>&1 || true
    if ! grep -q 'returned error' "$FS_WORK/fiu.err"; then
        say eio "put with EIO on FileOutputStream writes: $(put je F k_eio v1)"
        say eio "value read back: $(get je F k_eio)"
        fiu-ctrl -c "disable name=posix/io/rw/write" "$je_pid" || true
    else
        say eio "fiu cannot name a JVM's file writes (enable_stack_by_name on libjava's Java_java_io_FileOutputStream_writeBytes refused: $(cat "$FS_WORK/fiu.err")): Java's persist catches the IOException as for ENOSPC (same code path)"
    fi
    jstop je
}

fault_fds() {
    jstart jf
    local A
    A=$(fs_addr jf)
    fs_bg "$FS_WORK/jf-b1.out" "$FAULT_PEER" broker "$A" --name jf-b1 --timeout-ms 30000 --seconds 200
    sleep 3
    fs_bg "$FS_WORK/jf-kept.out" "$FAULT_PEER" hold "$A" --conns 20 --seconds 200 --topic jf-b1-t0
    sleep 3
    local hard n c0
    hard=$(prlimit --pid "$jf_pid" --nofile --output HARD --noheadings | tr -d ' ')
    n=$(find "/proc/$jf_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
    prlimit --pid "$jf_pid" --nofile="$n:$hard"
    c0=$(cpu_ticks "$jf_pid")
    fs_bg "$FS_WORK/jf-new.out" "$FAULT_PEER" hold "$A" --conns 30 --seconds 200 --topic jf-b1-t0
    sleep 10
    say fds "at the limit ($n): kept peers: $(tail -1 "$FS_WORK/jf-kept.out" | cut -d' ' -f2-); new peers: $(tail -1 "$FS_WORK/jf-new.out" | cut -d' ' -f2-); CPU ticks in 10 s: $(($(cpu_ticks "$jf_pid") - c0)); 'Too many open files' lines: $( (cat "$jf_out"; jlog jf) | grep -c 'Too many open files' || true)"
    prlimit --pid "$jf_pid" --nofile="$hard:$hard"
    sleep 8
    say fds "limit raised: new peers: $(tail -1 "$FS_WORK/jf-new.out" | cut -d' ' -f2-)"
    jstop jf
}

fault_clock() {
    local clock=$FS_WORK/jfaketime lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
    echo "+0" >"$clock"
    jstart jc --env "LD_PRELOAD=$lib" --env "FAKETIME_TIMESTAMP_FILE=$clock" \
        --env FAKETIME_DONT_FAKE_MONOTONIC=1 --env FAKETIME_CACHE_DURATION=1
    local A
    A=$(fs_addr jc)
    fs_bg "$FS_WORK/jc-b1.out" "$FAULT_PEER" broker "$A" --name jc-b1 --timeout-ms 6000 --seconds 200
    fs_bg "$FS_WORK/jc-b2.out" "$FAULT_PEER" broker "$A" --name jc-b2 --timeout-ms 6000 --seconds 200
    local b2=$FS_BG
    sleep 5
    say clock "before: brokers $(brokers jc), expired lines $(expired_lines jc)"
    echo "+300" >"$clock"
    sleep 8
    say clock "8 s after +5 min: brokers $(brokers jc), expired lines $(expired_lines jc)"
    echo "+0" >"$clock"
    sleep 8
    say clock "8 s after back 5 min: brokers $(brokers jc), expired lines $(expired_lines jc)"
    kill -STOP "$b2"
    echo "-300" >"$clock"
    local waited=0
    while [[ $(brokers jc) == *jc-b2* ]] && ((waited < 90)); do
        sleep 5
        waited=$((waited + 5))
    done
    say clock "jc-b2 silent (timeout 6 s), then the clock 5 min back: still listed after ${waited} s: $([[ $(brokers jc) == *jc-b2* ]] && echo yes || echo no)"
    kill -CONT "$b2"
    jstop jc
}

fault_stall() {
    jstart js -- serverChannelMaxIdleTimeSeconds=5
    local A b
    A=$(fs_addr js)
    for b in js-b1 js-b2 js-dead; do
        fs_bg "$FS_WORK/$b.out" "$FAULT_PEER" broker "$A" --name "$b" --timeout-ms 4000 --seconds 200
    done
    local dead=$FS_BG
    fs_bg "$FS_WORK/js-client.out" "$FAULT_PEER" hold "$A" --conns 2 --seconds 200 --topic js-b1-t0
    sleep 5
    say stall "before: brokers $(brokers js), expired lines $(expired_lines js)"
    kill -STOP "$dead"
    kill -STOP "$js_pid"
    sleep 10
    kill -CONT "$js_pid"
    sleep 2
    say stall "2 s after SIGCONT (stopped 10 s, timeout 4 s): expired lines $(expired_lines js) (of 3 brokers, 2 alive), brokers listed $(brokers js); idle closes: $(jlog js | grep -ci 'IDLE exception\|idle' || true); client: $(tail -1 "$FS_WORK/js-client.out" | cut -d' ' -f2-)"
    kill -CONT "$dead"
    jstop js
}

fault_network() {
    fs_netns j
    jstart jn -- serverChannelMaxIdleTimeSeconds=12
    local A=$FS_HOST_IP:$jn_port
    fs_bg "$FS_WORK/jn-b.out" ip netns exec "$FS_NS" "$FAULT_PEER" broker "$A" --name jn-b1 \
        --timeout-ms 8000 --seconds 200
    fs_bg "$FS_WORK/jn-c.out" ip netns exec "$FS_NS" "$FAULT_PEER" hold "$A" --conns 1 \
        --seconds 200 --topic jn-b1-t0
    sleep 5
    ip netns exec "$FS_NS" iptables -A INPUT -m statistic --mode random --probability 0.1 -j DROP
    ip netns exec "$FS_NS" iptables -A OUTPUT -m statistic --mode random --probability 0.1 -j DROP
    sleep 20
    ip netns exec "$FS_NS" iptables -F
    say network "lossy 10 % for 20 s: expired lines $(expired_lines jn)"
    ip netns exec "$FS_NS" iptables -A OUTPUT -p tcp -d "$FS_HOST_IP" --dport "$jn_port" -j DROP
    ip netns exec "$FS_NS" iptables -A INPUT -p tcp -s "$FS_HOST_IP" --sport "$jn_port" -j DROP
    local t0=$SECONDS
    while [[ $(brokers jn) == *jn-b1* ]] && ((SECONDS - t0 < 60)); do sleep 0.5; done
    say network "cut: broker gone after $((SECONDS - t0)) s (timeout 8 s)"
    sleep 15
    say network "cut: connections from the namespace still established after 15 s more (idle 12 s): $(ss -Htn state established "( sport = :$jn_port )" | grep -c "$FS_NS_IP:" || true)"
    ip netns exec "$FS_NS" iptables -F
    t0=$SECONDS
    while [[ $(brokers jn) != *jn-b1* ]] && ((SECONDS - t0 < 60)); do sleep 0.5; done
    say network "healed: broker back after $((SECONDS - t0)) s"
    jstop jn
}

fault_crash() {
    local rounds=0 started=0 lost=0 r
    for r in 1 2 3 4 5 6 7 8; do
        jstart jk --dir "$FS_WORK/jk"
        local A acked=0 i
        A=$(fs_addr jk)
        (
            for i in $(seq 1 400); do
                answer=$("$FAULT_PEER" request "$A" 100 namespace=CRASH key="r$r-k$i" value="$i" \
                    --timeout-ms 5000) || break
                [[ $answer == "code=0 "* ]] || break
                echo "$i" >>"$FS_WORK/jk-acked-$r"
            done
        ) &
        local writer=$!
        sleep $((2 + r % 3))
        jkill jk
        wait "$writer" 2>/dev/null || true
        acked=$(tail -1 "$FS_WORK/jk-acked-$r" 2>/dev/null || echo 0)
        rounds=$((rounds + 1))
        if jstart jk --dir "$FS_WORK/jk"; then
            started=$((started + 1))
            local gone=0
            for i in $(seq 1 "$acked"); do
                [[ $(get jk CRASH "r$r-k$i") == "$i" ]] || gone=$((gone + 1))
            done
            lost=$((lost + gone))
            say crash "round $r: $acked puts acknowledged before kill -9; after the restart $gone of them missing; kvConfig.json valid JSON: $(jq -e . "$FS_WORK/jk/kvConfig.json" >/dev/null 2>&1 && echo yes || echo no)"
            jstop jk
        else
            say crash "round $r: $acked acknowledged; the restart FAILED: $(grep -m1 -i 'exception' "$jk_out" || true)"
        fi
    done
    say crash "$rounds kill -9 rounds: $started restarts, $lost acknowledged puts missing in all"
}

faults=("$@")
[[ ${#faults[@]} -gt 0 ]] || faults=(disk disklog eio fds clock stall network crash)
for f in "${faults[@]}"; do
    fs_log "== Java under fault: $f"
    "fault_$f"
done
fs_log "report: $REPORT"
cat "$REPORT"
