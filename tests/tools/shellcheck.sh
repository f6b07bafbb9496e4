#!/usr/bin/env bash
# Runs shellcheck over every shell script of the repository (tests/, bench/, bin/, packaging/, .ci/):
# the files named *.sh and those whose first line asks for sh or bash. Run by .ci/run; exit
# status 1 on any finding, with shellcheck's own report.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
command -v shellcheck >/dev/null || { echo "shellcheck: not installed (bin/install-deps --test)" >&2; exit 2; }
scripts=()
while IFS= read -r f; do
  case $f in
    *.sh) scripts+=("$f") ;;
    *) [[ -f $f ]] && head -n1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && scripts+=("$f") ;;
  esac
done < <(git ls-files tests bench bin packaging .ci)
shellcheck -x "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean"
