# shellcheck shell=bash
# The ItDriver JVMs of the interop suites (sourced after lib.sh): one long-lived JVM per artifact
# set and per set of JVM options (tests/interop/java/apps/ItDriver.java), driven over two FIFOs,
# and the checks on its last reply.
#
#   drv_start d5 5.x [JVM options ...]     e.g. -Dtls.enable=true
#   drv d5 send p1 T1 tag 40 1;  has "what" "sent 40/40 "
#   adm d5 clusterList -n 127.0.0.1:$port

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

# ---- checks on the last reply -----------------------------------------------------------

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

