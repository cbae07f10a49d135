#!/usr/bin/env bash
# Every fuzz target (fuzz/fuzz-*.c: superblock, bitmap, config, control,
# geometry, ppl, journal) runs from its seed corpus for a short while without a crash
# or a violated invariant.  make fuzz runs them longer.  Skips when
# clang's libFuzzer is not installed.
. "$(dirname "$0")/lib.sh"

secs=${FUZZ_SHORT_SECONDS:-15}
rc=0
srcdir=$abs_top_srcdir builddir=$abs_top_builddir \
  FUZZ_BUILD=$abs_top_builddir/fuzz/build \
  bash "$abs_top_srcdir/fuzz/fuzz.sh" run "$secs" > "$T/fuzz.out" 2>&1 ||
  rc=$?
cat "$T/fuzz.out"
[ "$rc" -ne 77 ] || skip "clang with libFuzzer is not installed"
[ "$rc" -eq 0 ] || die "a fuzz target failed (exit $rc)"
n=$(grep -c '^fuzz-.*: [0-9]* runs in .*, no crash$' "$T/fuzz.out") || :
want=$(ls "$abs_top_srcdir"/fuzz/fuzz-*.c | wc -l)
[ "$n" -eq "$want" ] ||
  die "expected $want fuzz targets to run cleanly, saw $n"
