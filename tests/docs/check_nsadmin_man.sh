#!/usr/bin/env bash
# man/nsadmin.1 renders without a groff warning and documents every command and common option
# that `nsadmin help` lists.  Usage: check_nsadmin_man.sh <nsadmin binary> <man page>
set -euo pipefail
bin=$1 page=$2
"$(dirname "${BASH_SOURCE[0]}")/check_man_renders.sh" "$page"
status=0
commands=$("$bin" help | awk '/^   [a-zA-Z]/ {print $1}')
[[ -n $commands ]] || { echo "nsadmin help lists no command" >&2; exit 1; }
for c in $commands; do
    grep -q "^\.SS $c\b" "$page" || { echo "$page has no section for $c" >&2; status=1; }
done
for o in json timeout connectTimeout maxReply namesrvAddr tls tlsTrustCert tlsCert tlsKey tlsConfig ak sk token aclFile; do
    grep -q -- "\\\\-\\\\-$o" "$page" || { echo "$page does not document --$o" >&2; status=1; }
done
exit $status
