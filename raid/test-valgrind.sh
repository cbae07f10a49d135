#!/usr/bin/env bash
# The engine's unit tests again, under valgrind: no invalid access, no
# uninitialised read, no leak.
set -eu
# make distcheck (from ./run-tests) runs only the plain unit tests.
[ -z "${NBDRAID_DISTCHECK:-}" ] || { echo "SKIP: in distcheck"; exit 77; }
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing"; exit 77; }
: "${abs_top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
for t in format/test-config format/test-geometry format/test-level member/test-hole-memo format/test-parity member/test-retired format/test-superblock levels/test-io \
         io/test-iopool levels/test-rebuild levels/test-stripe-batch; do
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$abs_top_builddir/raid/$t" > /dev/null ||
    { echo "FAIL: $t under valgrind"; exit 1; }
  echo "ok: $t clean under valgrind"
done
