#!/usr/bin/env bash
# Build the libFuzzer targets with clang, and run them.
#
#   fuzz/fuzz.sh build                      build every target
#   fuzz/fuzz.sh run SECONDS [TARGET...]    build, then run each target
#                                           (all by default) for SECONDS
#
# Targets are fuzz/fuzz-TARGET.c, linked against the engine's sources
# compiled with -fsanitize=fuzzer-no-link,address,undefined.  Build
# output, the growing corpora and crash files go to $FUZZ_BUILD
# (default fuzz/build under the build directory); the committed seeds
# in fuzz/corpus/TARGET are only read.  An input running longer than
# FUZZ_TIMEOUT seconds (60: a loaded machine can stall a nice -n 19
# process for 10 s) counts as a hang.  Exits 77 when clang or libFuzzer
# is missing, 1 when a target crashed.
set -eu

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${builddir:-$PWD}
out=${FUZZ_BUILD:-$builddir/fuzz/build}
CC_FUZZ=${CC_FUZZ:-clang}
all_targets=(superblock bitmap config control geometry ppl journal)

have_libfuzzer () {
  command -v "$CC_FUZZ" >/dev/null 2>&1 || return 1
  echo 'int LLVMFuzzerTestOneInput (const char *d, long n) { return 0; }' \
    > "$out/probe.c"
  "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$out/probe.c" \
    -o "$out/probe" 2>/dev/null
}

build () {
  local cflags libs src obj objs=() newest t

  mkdir -p "$out/obj"
  if ! have_libfuzzer; then
    echo "fuzz: $CC_FUZZ with libFuzzer is not available (install clang" \
      "and libclang-rt-dev)" >&2
    exit 77
  fi
  [ -f "$builddir/config.h" ] ||
    { echo "fuzz: no config.h in $builddir: run configure first" >&2; exit 1; }
  # The targets test the engine's layers from inside: they see every
  # folder's headers.
  incs=$(for d in "$srcdir"/raid "$srcdir"/raid/*/; do printf -- '-I%s ' "$d"; done)
  cflags="-g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined
    -I$builddir $incs -I$srcdir/server/control -I$srcdir/fuzz
    $(pkg-config --cflags libisal libnbd inih)"
  libs="$(pkg-config --libs libisal libnbd inih) -lev -pthread -lm"
  # An object is rebuilt when its source or any header is newer.
  newest=$(ls -t "$srcdir"/raid/*.h "$srcdir"/raid/*/*.h "$srcdir"/server/*/*.h \
             "$builddir/config.h" 2>/dev/null | head -1)
  for src in "$srcdir"/raid/*.c "$srcdir"/raid/*/*.c \
             "$srcdir"/server/control/control-parse.c; do
    [ -e "$src" ] || continue
    case $src in */test-*) continue ;; esac
    obj=$out/obj/$(basename "${src%.c}").o
    if ! [ "$obj" -nt "$src" ] || ! [ "$obj" -nt "$newest" ]; then
      # shellcheck disable=SC2086
      "$CC_FUZZ" $cflags -fsanitize=fuzzer-no-link,address,undefined \
        -c "$src" -o "$obj"
    fi
    objs+=("$obj")
  done
  rm -f "$out/libengine.a"
  ar rcs "$out/libengine.a" "${objs[@]}"
  for t in "${all_targets[@]}"; do
    # shellcheck disable=SC2086
    "$CC_FUZZ" $cflags -fsanitize=fuzzer,address,undefined \
      "$srcdir/fuzz/fuzz-$t.c" "$out/libengine.a" $libs -o "$out/fuzz-$t"
  done
}

# run_one TARGET SECONDS: one line of figures; 1 if it crashed.
run_one () {
  local t=$1 secs=$2 log=$out/fuzz-$1.log dict=() rc=0 max_len
  # Room for each target's whole input: its prefix and the structure.
  case $t in
    superblock) max_len=$((9 + 4096)) ;;
    ppl | journal) max_len=$((1 + 4096)) ;;
    bitmap) max_len=$((8 + 256)) ;;
    control) max_len=5000 ;;
    config) max_len=8192 ;;
    *) max_len=256 ;;
  esac
  mkdir -p "$out/corpus/$t"
  [ -f "$srcdir/fuzz/$t.dict" ] && dict=(-dict="$srcdir/fuzz/$t.dict")
  ASAN_OPTIONS=detect_leaks=1 nice -n 19 "$out/fuzz-$t" \
    -max_total_time="$secs" -max_len="$max_len" \
    -timeout="${FUZZ_TIMEOUT:-60}" -rss_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$out/$t-" ${dict[@]+"${dict[@]}"} \
    "$out/corpus/$t" "$srcdir/fuzz/corpus/$t" > "$log" 2>&1 || rc=$?
  awk -v t="$t" -v rc="$rc" -v logfile="$log" '
    /(DONE|pulse|NEW|REDUCE|INITED).*cov: / {
      for (i = 1; i <= NF; i++) {
        if ($i == "cov:") cov = $(i + 1)
        if ($i == "ft:") ft = $(i + 1)
        if ($i == "corp:") corp = $(i + 1)
      }
    }
    /^stat::number_of_executed_units:/ { runs = $2 }
    /^stat::average_exec_per_sec:/ { speed = $2 }
    /^Done [0-9]+ runs in/ { secs = $5 }
    END {
      printf "fuzz-%s: %s runs in %s s (%s exec/s), cov %s ft %s, corpus %s, %s\n",
        t, runs, secs, speed, cov, ft, corp,
        rc == 0 ? "no crash" : "CRASHED (exit " rc ", see " logfile ")"
    }' "$log"
  return "$rc"
}

cmd=${1:-}
case $cmd in
  build) mkdir -p "$out"; build ;;
  run)
    secs=${2:?usage: fuzz.sh run SECONDS [TARGET...]}
    shift 2
    mkdir -p "$out"
    build
    failed=0
    for t in "${@:-${all_targets[@]}}"; do
      run_one "$t" "$secs" || failed=1
    done
    exit "$failed" ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
