#!/usr/bin/env bash
# Regenerates tests/data/strings/vectors.txt and tests/data/kvConfig-*java5.json with the JDK and
# the jars of the 5.x artifact set (see MakeStringVectors.java). Only needed when the vector set
# changes; the files are committed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/interop/lib.sh
source "$here/../../interop/lib.sh"
it_require java javac mvn
IT_WORK=$IT_ROOT/build/interop/vectors
IT_CACHE=$IT_ROOT/build/interop/cache
mkdir -p "$IT_WORK" "$IT_CACHE"
classes=$(it_javac 5.x "$here/MakeStringVectors.java")
cp=$(it_classpath 5.x)
{
    echo "# Made by tests/data/strings/make_vectors.sh ($(java -version 2>&1 | head -1 | tr -d '"'),"
    echo "# fastjson2 and rocketmq-remoting of the 5.x artifact set); format: MakeStringVectors.java"
    java -cp "$classes:$cp" MakeStringVectors
} >"$here/vectors.txt"
echo "wrote $here/vectors.txt ($(wc -l <"$here/vectors.txt") lines)"
# The kvConfig.json files fastjson 1.2.83 wrote, as the 5.5.0 NameServer rewrites them.
for f in kvConfig-java kvConfig-escape-java; do
    java -cp "$classes:$cp" MakeStringVectors kv "$here/../$f.json" "$here/../${f}5.json"
    echo "wrote $here/../${f}5.json"
done
