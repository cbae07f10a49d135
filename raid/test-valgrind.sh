#!/usr/bin/env bash
# The engine's unit tests again, under valgrind: no invalid access, no
# uninitialised read, no leak.
set -eu
# make distcheck (from ./run-tests) runs only the plain unit tests.
[ -z "${NBDRAID_DISTCHECK:-}" ] || { echo "SKIP: in distcheck"; exit 77; }
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing"; exit 77; }
: "${abs_top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
# Every unit test, beside the code it tests.
n=0
for t in $(cd "$abs_top_builddir/raid" &&
           find . -mindepth 2 -name 'test-*' -type f -perm -u+x |
           sed 's|^\./||' | sort); do
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$abs_top_builddir/raid/$t" > /dev/null ||
    { echo "FAIL: $t under valgrind"; exit 1; }
  echo "ok: $t clean under valgrind"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no unit tests found under raid/"; exit 1; }
