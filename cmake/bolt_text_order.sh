#!/usr/bin/env bash
# Rewrites a linked program with its order file's functions first, by
# llvm-bolt (cmake/text_order.cmake, after the link):
#
#   cmake/bolt_text_order.sh LLVM_BOLT ORDER_FILE PROGRAM
#
# lld can only move whole input sections, and Debian's gRPC, protobuf and
# Abseil archives have one .text per object file: ordering their functions
# drags each one's whole file along (gpuschedd's 2.2 MiB of executed code
# came out spread over 6 MiB). BOLT moves single functions, so the code a
# run executes ends up in one block of about that size.
#
# PROGRAM must have been linked with --emit-relocs. Every function is
# moved, the order file's first (--lite=0: rewriting only those leaves a
# jump at each one's old place, and callers through vtables come through
# it, touching the old text again), but for the ones whose jump tables BOLT
# 16 would cut short, and their .cold fragments
# (cmake/bolt_unsafe_functions.py), which stay where the link put them. Should
# BOLT meet such a function that the list missed, it says so ("due to cold
# fragments") and the build fails. BOLT's optimisations are off: the code is
# re-encoded and moved, not reordered or rewritten. Other options:
#   --no-huge-pages: the new text aligned to pages, not to 2 MiB (the daemon
#     wants its code small, not on huge pages).
#   --update-debug-sections: the debug info follows the moved code (without
#     it BOLT drops it).
# The rewritten program must then print its version, which throws and
# catches a C++ exception (CLI11): the unwinder is what BOLT broke before.
#
# No strip or objcopy may touch the result: with BOLT's new segment they
# write a program that crashes (BOLT's --use-gnu-stack avoids that by taking
# GNU_STACK's program header, which leaves every thread an executable
# stack). So the package gets PROGRAM.release, rewritten the same way from
# the program without its debug info (packaging/CMakeLists.txt installs it
# as a file, which CPack does not strip).
#
# Also left beside PROGRAM: PROGRAM.bolt.log (BOLT's many per-function
# warnings, printed only when it fails) and PROGRAM.prebolt, the program as
# linked without its debug info, which cmake/make_text_order.sh instruments
# (BOLT does not take its own output again). On any failure PROGRAM and
# PROGRAM.release are removed, so that nothing half made is run or
# installed, and the next build links again.
set -euo pipefail
bolt=$1 order=$2 program=$3
here=$(cd "$(dirname "$0")" && pwd)
log=$program.bolt.log
done=
cleanup() {
  rm -f "$program.bolting"
  [[ -n $done ]] || rm -f "$program" "$program.release"
}
trap cleanup EXIT
fail() {
  echo "bolt_text_order: $1 (BOLT's output in $log)" >&2
  exit 1
}
rm -f "$program.release"

objcopy --strip-debug "$program" "$program.prebolt"
python3 "$here/bolt_unsafe_functions.py" "$program.prebolt" >"$program.bolt-unsafe"
# Regular expressions to BOLT: each name whole, its dots literal, and its
# local copies (NAME/N) too.
sed 's/\./\\./g; s|.*|^&(/[0-9]+)?$|' "$program.bolt-unsafe" >"$program.bolt-skip"

rewrite() {  # IN OUT BOLT_OPTIONS...
  local in=$1 out=$2
  shift 2
  if ! "$bolt" "$in" -o "$program.bolting" --lite=0 --reorder-functions=user --function-order="$order" \
    --skip-funcs-file="$program.bolt-skip" --peepholes=none --simplify-conditional-tail-calls=0 \
    --eliminate-unreachable=0 --align-macro-fusion=none --strip-rep-ret=0 --reorder-blocks=none \
    --split-functions=0 --no-huge-pages "$@" >"$log" 2>&1; then
    grep -v '^BOLT-WARNING' "$log" | tail -20 >&2
    fail "llvm-bolt failed on $in"
  fi
  if grep 'due to cold fragments' "$log" >&2; then
    fail "BOLT met functions whose jump tables it would cut short that bolt_unsafe_functions.py did not name"
  fi
  timeout 60 "$program.bolting" --version >/dev/null 2>&1 || fail "$in as BOLT rewrote it cannot print its version"
  mv -f "$program.bolting" "$out"
}
rewrite "$program.prebolt" "$program.release"
rewrite "$program" "$program" --update-debug-sections
done=1
