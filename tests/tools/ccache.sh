# shellcheck shell=bash
# Sourced by tests/run and .ci/run: the builds of the test suite (debug, tsan, fuzz, the package
# test's release build) compile through ccache when it is installed (bin/install-deps --test
# installs it). A compile is served from the cache only when ccache has seen the same compiler,
# flags, source and headers before, so a fresh clone on a machine that has built the same code
# skips most of its compiles (the suite compiles every file four times: most of CI's CPU after
# the JVMs). Paths under the checkout are hashed relative to it (a clone in another folder
# hits); the price is that a cached object's debug info names the folder it was first built in.
# NS_CCACHE=0 turns it off.
if [[ ${NS_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  CCACHE_BASEDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1 CMAKE_C_COMPILER_LAUNCHER=ccache
fi
