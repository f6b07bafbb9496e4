#!/bin/sh
# One copy of each primitive (docs/architecture.md, "Primitives"): fails when a function or
# macro whose name says it is one of the primitives below is defined outside the primitive's
# home, or when a well-known hash constant or a linear-probing step (a hand-written hash table)
# appears outside hmap.c. Reads src/, include/ and tools/nsadmin/ as text: a definition is an
# identifier followed by '(' on a line that starts in column 0 (clang-format's layout of every
# function here) whose parameter list is followed by '{' before any ';', or a #define.
#
# Before it reads the tree it plants one copy of every primitive in a scratch tree and checks
# that each is caught, so that a rule that no longer matches anything fails too.
#
# Usage: check_primitives.sh <source root>    Exit status 0 when every primitive is at home.
set -eu
LC_ALL=C
export LC_ALL
root=${1:?usage: check_primitives.sh <source root>}
[ -d "$root/src" ] || { echo "check_primitives: no $root/src" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The primitives, one a line: what ~ the names (an ERE over the whole identifier) ~ home files ~
# where the rule applies (a path prefix; "." = everywhere). Keep a name pattern narrow enough that nothing
# but a copy of the primitive matches it.
cat >"$tmp/rules" <<'EOF'
byte order (big/little-endian 16/32/64-bit read or write)~(^|_)(be|le)(16|32|64)$~include/ns_buf.h src/base/buf.c~.
integer text (decimal digits of an integer)~(^|_)(put_u?int(32|64)?|u?itoa|u?int_to_(str|text)|(fmt|format)_u?int|u?int_text)$~include/ns_common.h src/base/common.c~.
monotonic clock~(^|_)(mono|now|monotonic)_(ns|us|ms)$~include/ns_common.h src/base/common.c~.
write all bytes of a buffer~(^|_)(write_all|write_full|write_fully|full_write|writen)$~include/ns_atomic_file.h~.
mkdir -p~(^|_)(mkdir_p|mkdirs|make_dirs(_n)?|mkdir_parents|make_parents|mkpath|mkdir_all)$~include/ns_atomic_file.h src/base/atomic_file.c~.
open a log file for appending~(^|_)open_append$~include/ns_atomic_file.h~.
the route table's read lock~(^|_)(rdlock|rd_lock|read_lock|rlock)$~src/route/route_int.h~src/route/
an ASCII digit test~(^|_)(is_?digit|isdigit_ascii)$~include/ns_utf8.h~.
Java's Long.parseLong, Integer.parseInt, Boolean.parseBoolean~(^|_)(parse_(java_)?(long|int|int32|int64|bool|boolean)|java_(true|bool)|parse_u?int(32|64)?_text)$~include/ns_utf8.h src/base/utf8.c~.
a request's peer for a log line~(^|_)(peer_of|peer_name|peer_text)$~src/proc/proc_int.h~.
the composite key of a pair of names~(^|_)(make_)?pair_key$~include/ns_hmap.h src/base/hmap.c~.
a hash function~(^|_)[a-z0-9_]*(hash|fnv|murmur|xxh|siphash|djb2)[a-z0-9_]*$~include/ns_hmap.h src/base/hmap.c~.
a request table's row found by its code (binary search)~(^|_)(find_by_code|lookup_by_code|search_by_code|bsearch_code|code_bsearch)$~include/ns_common.h src/base/common.c~.
word-at-a-time byte tests (SWAR)~(^|_)(any_zero|has_zero|zero_bytes|haszero|swar[a-z0-9_]*)$~src/codec/codec_int.h~.
EOF
# Names a rule matches that are not copies of the primitive: file:name, and why.
cat >"$tmp/allowed" <<'EOF'
src/base/java_hashmap.c:ns_java_string_hash Java's String.hashCode: Java's HashMap order, reproduced (no table)
src/base/java_hashmap.c:ns_java_hash_spread Java's HashMap.hash spreading, for the same order
src/base/java_hashmap.c:ns_java_hashmap_table the table length Java's HashMap grows to, for the same order
src/base/java_hashmap.c:ns_java_hashmap_sort entries sorted into Java's HashMap order
src/route/route_cache.c:key_hash the answer cache's pointer-identity index (ns_hmap cost route reads 13%)
EOF
# Files whose own index is no copy of ns_hmap (the hash constant and probe checks pass over them).
table_allowed='src/route/route_cache.c'  # see key_hash there: measured, kept on purpose
# Hand-written hash tables: the constants of the usual hash functions, and a linear probe.
hash_consts='0x9e3779b9|0x100000001b3|1099511628211|0xcbf29ce4|14695981039346656037|1469598103934665603|0xc2b2ae3d|0x27d4eb2f|0x85ebca6b|0xcc9e2d51|0xbf58476d1ce4e5b9|0x94d049bb133111eb|0xff51afd7ed558ccd|0x01000193|16777619|2166136261'
probe='\([[:space:]]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\+[[:space:]]*1[[:space:]]*\)[[:space:]]*&[[:space:]]*[A-Za-z_>.-]*mask'
table_home=src/base/hmap.c

# definitions FILE...: "file:line:name" for every function and macro defined in the files.
definitions() {
    awk '
        FNR == 1 { pending = "" }
        # a pending candidate: find "{" (a definition) or ";" (a declaration) after its
        # parameter list
        pending != "" {
            text = $0
            for (i = 1; i <= length(text); i++) {
                c = substr(text, i, 1)
                if (c == "(") depth++
                else if (c == ")") depth--
                else if (depth == 0 && c == "{") { print pending; pending = ""; break }
                else if (depth == 0 && (c == ";" || c == "=")) { pending = ""; break }
            }
            next
        }
        /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/ {
            name = $0
            sub(/^[ \t]*#[ \t]*define[ \t]+/, "", name)
            match(name, /^[A-Za-z_][A-Za-z0-9_]*/)
            print FILENAME ":" FNR ":" substr(name, 1, RLENGTH)
            next
        }
        /^[A-Za-z_]/ && /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/ {
            if ($0 ~ /^(typedef|return|if|for|while|switch|do|else|case|goto)[^A-Za-z0-9_]/) next
            match($0, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)
            name = substr($0, RSTART, RLENGTH)
            sub(/[ \t]*\($/, "", name)
            if (substr($0, 1, RSTART - 1) ~ /=/) next  # an initialiser that calls something
            rest = substr($0, RSTART + RLENGTH - 1)
            pending = FILENAME ":" FNR ":" name
            depth = 0
            for (i = 1; i <= length(rest); i++) {
                c = substr(rest, i, 1)
                if (c == "(") depth++
                else if (c == ")") depth--
                else if (depth == 0 && c == "{") { print pending; pending = ""; break }
                else if (depth == 0 && (c == ";" || c == "=")) { pending = ""; break }
            }
        }
    ' "$@"
}

# check DIR: prints every primitive defined away from home under DIR (paths relative to DIR)
# and returns 1 when there is one.
check() {
    dir=$1
    found=0
    (
        cd "$dir"
        for d in src include tools/nsadmin; do
            [ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \)
        done | sort >"$tmp/files"
        # shellcheck disable=SC2046 # one path a line, no blanks in the tree's file names
        definitions $(cat "$tmp/files") >"$tmp/defs"
    )
    awk -F'~' '
        FILENAME == ARGV[1] { what[++n] = $1; names[n] = $2; homes[n] = " " $3 " "; scope[n] = $4; next }
        FILENAME == ARGV[2] { split($0, a, " "); allowed[a[1]] = 1; next }
        {
            split($0, d, ":")  # file:line:name
            for (i = 1; i <= n; i++) {
                if (d[3] !~ names[i]) continue
                if (scope[i] != "." && index(d[1], scope[i]) != 1) continue
                if (index(homes[i], " " d[1] " ") > 0 || ((d[1] ":" d[3]) in allowed)) continue
                h = homes[i]
                gsub(/^ | $/, "", h)
                printf "%s:%s: %s: a copy of a primitive (%s); its home is %s\n", d[1], d[2], d[3], what[i], h
                bad = 1
            }
        }
        END { exit bad }
    ' "$tmp/rules" "$tmp/allowed" "$tmp/defs" || found=1
    (
        cd "$dir"
        # shellcheck disable=SC2046
        grep -n -i -E "$hash_consts" $(cat "$tmp/files") | grep -v "^$table_home:" |
            grep -v "^$table_allowed:" |
            sed 's/^\([^:]*:[0-9]*\):.*/\1: a hash constant: a hand-written hash (the one hash is ns_hmap_hash, src\/base\/hmap.c)/'
        # shellcheck disable=SC2046
        grep -n -E "$probe" $(cat "$tmp/files") | grep -v "^$table_home:" | grep -v "^$table_allowed:" |
            sed 's/^\([^:]*:[0-9]*\):.*/\1: a linear probe: a hand-written hash table (the one table is ns_hmap, src\/base\/hmap.c)/'
    ) >"$tmp/tables"
    if [ -s "$tmp/tables" ]; then
        cat "$tmp/tables"
        found=1
    fi
    return "$found"
}

# ---- the rules catch what they guard: one planted copy each, in a scratch tree ----------------
plant=$tmp/plant
mkdir -p "$plant/src/net" "$plant/src/route" "$plant/tools/nsadmin" "$plant/include"
cat >"$plant/src/net/copies.c" <<'EOF'
static uint32_t be32(const uint8_t *p)
{
    return p[0];
}
static uint8_t *put_int32(uint8_t *w, int32_t v)
{
    return w;
}
static uint64_t mono_us(void)
{
    return 0;
}
static int write_all(int fd, const uint8_t *data,
                     size_t len)
{
    return 0;
}
static int mkdir_parents(const char *path)
{
    return 0;
}
static int open_append(const char *path)
{
    return 0;
}
static bool is_digit(uint8_t c) { return c >= '0'; }
static bool java_true(const uint8_t *v, size_t n)
{
    return n == 4;
}
static const char *peer_of(const ns_ctx_t *ctx)
{
    return "-";
}
static char *make_pair_key(const char *cluster, const char *addr, size_t *klen)
{
    return NULL;
}
static uint64_t key_hash(const void *key, uint32_t variant)
{
    return 0;
}
#define HIGHS_ANY_ZERO 1
static inline uint64_t any_zero(uint64_t x)
{
    return x;
}
/* not definitions: a declaration, a call, a prototype split over lines */
uint32_t ns_read_be32(const uint8_t *p);
static int write_all_decl(int fd);
void f(void)
{
    be32(p);
}
int write_all(int fd, const void *data,
              size_t len);
EOF
cat >"$plant/src/route/locks.c" <<'EOF'
static void rdlock(ns_route_t *r)
{
}
EOF
cat >"$plant/tools/nsadmin/table.c" <<'EOF'
static size_t slot_of(uint64_t h, size_t mask)
{
    return (h * 0x9E3779B97F4A7C15ULL) & mask;
}
static size_t next(size_t i, size_t mask)
{
    return (i + 1) & mask;
}
EOF
if check "$plant" >"$tmp/planted"; then
    echo "check_primitives: the planted copies were not caught" >&2
    exit 1
fi
for want in be32 put_int32 mono_us 'write_all:' mkdir_parents open_append is_digit java_true \
    peer_of make_pair_key key_hash any_zero rdlock 'a hash constant' 'a linear probe'; do
    grep -q "$want" "$tmp/planted" || {
        echo "check_primitives: the planted copy '$want' was not caught:" >&2
        cat "$tmp/planted" >&2
        exit 1
    }
done
if [ "$(grep -c 'write_all:' "$tmp/planted")" -ne 1 ] || grep -q 'HIGHS_ANY_ZERO\|write_all_decl' "$tmp/planted"; then
    echo "check_primitives: a declaration or an unrelated name was taken for a copy:" >&2
    cat "$tmp/planted" >&2
    exit 1
fi
planted=$(wc -l <"$tmp/planted")

# ---- the tree -----------------------------------------------------------------------------------
if ! check "$root"; then
    echo "check_primitives: define each primitive once, in its home (or name it for what it is)" >&2
    exit 1
fi
echo "check_primitives: every primitive at home ($(wc -l <"$tmp/rules") rules, hash tables; $planted planted copies caught)"
