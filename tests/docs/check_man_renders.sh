#!/usr/bin/env bash
# A man page renders without a groff warning.  Usage: check_man_renders.sh <man page>
set -euo pipefail
page=$1
command -v groff >/dev/null || { echo "groff is missing (bin/install-deps --test)" >&2; exit 1; }
warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [[ -n $warnings ]]; then
    echo "groff warns about $page:" >&2
    echo "$warnings" >&2
    exit 1
fi
