#!/bin/sh
# The layering rules of src/ and include/, checked on the build's objects and on the headers:
#   1. no two source files of src/ call each other in a circle: from every object file of the
#      static libraries given, the names it uses that another one defines (nm) make an arrow
#      file -> file, and the graph must have no cycle (each cycle found is printed);
#   2. no public header (include/*.h) exposes a third-party type: none includes, directly or
#      through another header of include/, a header outside the C library, POSIX and include/
#      (<uv.h>, <cjson/cJSON.h>, <openssl/...>, <zlib.h>, <yaml.h>, <microhttpd.h>, ...), but
#      for the one header whose contract is that library's type (ns_json_tree.h: cJSON trees),
#      which no other public header may include.
# Usage: check_layers.sh <include dir> <lib.a>...   Exit status 0 when both hold, 1 otherwise.
set -eu
LC_ALL=C
export LC_ALL
inc=$1
shift
[ "$#" -gt 0 ] || { echo "usage: $0 <include dir> <lib.a>..." >&2; exit 2; }
command -v nm >/dev/null || { echo "check_layers: nm not found (binutils)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# ---- 1: the call graph of the object files --------------------------------------------------
for lib in "$@"; do
    [ -f "$lib" ] || { echo "check_layers: $lib not found" >&2; exit 2; }
    nm -A "$lib" 2>/dev/null
done | awk '
    # "lib.a:member.c.o:ADDR T name" or "lib.a:member.c.o:   U name"
    { split($1, part, ":"); file = part[2]; sub(/\.o$/, "", file) }
    NF == 3 && $2 ~ /^[TDBRCVWG]$/ { print "D", file, $3; next }
    NF == 3 && $2 == "U" { print "U", file, $3 }
' >"$tmp/syms"
awk '
    $1 == "D" { def[$3] = (def[$3] == "" ? $2 : def[$3] " " $2) }
    $1 == "U" { use[++n] = $2 " " $3 }
    END {
        for (i = 1; i <= n; i++) {
            split(use[i], u, " ")
            d = def[u[2]]
            if (d == "" || index(d, " ") > 0 || d == u[1]) continue  # external, or ambiguous
            edge[u[1] " " d] = edge[u[1] " " d] (edge[u[1] " " d] == "" ? "" : ",") u[2]
        }
        for (e in edge) print e, edge[e]
    }
' "$tmp/syms" | sort >"$tmp/edges"
# Cycles: depth-first search over the arrows; every back edge closes a circle.
awk '
    { out[$1] = out[$1] " " $2; names[$1 " " $2] = $3; node[$1] = 1; node[$2] = 1 }
    function visit(v,    k, n, w, i, path) {
        state[v] = 1; stack[++depth] = v
        n = split(out[v], k, " ")
        for (i = 1; i <= n; i++) {
            w = k[i]
            if (state[w] == 1) {
                path = ""
                for (j = depth; j >= 1 && stack[j] != w; j--) ;
                for (; j <= depth; j++) path = path stack[j] " -> "
                printf "circle: %s%s\n", path, w
                for (j = depth; j >= 1 && stack[j] != w; j--) ;
                for (; j <= depth; j++) {
                    a = stack[j]; b = (j < depth ? stack[j + 1] : w)
                    printf "    %s -> %s: %s\n", a, b, names[a " " b]
                }
                found++
            } else if (state[w] == 0) {
                visit(w)
            }
        }
        depth--; state[v] = 2
    }
    END {
        for (v in node) state[v] = 0
        for (v in node) if (state[v] == 0) visit(v)
        exit found > 0
    }
' "$tmp/edges" || fail=1
[ "$fail" -eq 0 ] && echo "check_layers: no circle among $(cut -d' ' -f1,2 "$tmp/edges" | tr ' ' '\n' | sort -u | wc -l) object files ($(wc -l <"$tmp/edges") arrows)"

# ---- 2: third-party headers reached from include/ -------------------------------------------
# The headers a public header may include: the C library and POSIX.
allowed='^(assert|ctype|errno|fcntl|inttypes|limits|pthread|signal|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|string|strings|time|unistd|netinet/in|arpa/inet|sys/[a-z_]+)\.h$'
# header:library pairs where the header exists to show that library's type
own=' ns_json_tree.h:cjson/cJSON.h '
for h in "$inc"/*.h; do
    base=${h##*/}
    seen=" $base "
    todo=$base
    while [ -n "$todo" ]; do
        set -- $todo
        cur=$1
        shift
        todo=$*
        for sys in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$inc/$cur"); do
            case $own in *" $base:$sys "*) [ "$cur" = "$base" ] && continue ;; esac
            if ! echo "$sys" | grep -Eq "$allowed"; then
                echo "public header $base exposes <$sys> (through $cur)"
                fail=1
            fi
        done
        for loc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$inc/$cur"); do
            case $seen in *" $loc "*) continue ;; esac
            [ -f "$inc/$loc" ] || continue
            seen="$seen$loc "
            todo="$todo $loc"
        done
    done
done
[ "$fail" -eq 0 ] && echo "check_layers: no public header exposes a third-party header"
exit "$fail"
