#!/usr/bin/env bash
# Builds and runs a benchmark (not a test) and prints its tables.
#   tests/bench/run.sh [submit_bench flags...]     e.g. --measure-s 10 --clients 1,16,64
#   BENCH=placement_bench tests/bench/run.sh [placement_bench flags...]   e.g. --nodes 1000 --jobs 2000
#   BENCH=load_bench tests/bench/run.sh [load_bench flags...]   e.g. --duration 30 --clients 64 --agents 4
# Environment: BENCH (submit_bench, the default, placement_bench or load_bench),
# BUILD_DIR (default <repo>/build), JOBS (build parallelism, default 2),
# OUT_DIR (CSV + full output; default $BUILD_DIR/bench-results/<time>).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-2}
OUT=${OUT_DIR:-$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)}
BENCH=${BENCH:-submit_bench}
case $BENCH in
  submit_bench | placement_bench | load_bench) ;;
  *) echo "run.sh: BENCH must be submit_bench, placement_bench or load_bench, got '$BENCH'" >&2; exit 2 ;;
esac

if [[ -f $BUILD/CMakeCache.txt ]]; then
  cmake -S "$ROOT" -B "$BUILD" >/dev/null
else
  cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null
fi
cmake --build "$BUILD" -j"$JOBS" --target "$BENCH"

mkdir -p "$OUT"
{
  echo "command: $BUILD/tests/bench/$BENCH --out $OUT $*"
  echo "uptime before: $(uptime)"
  rc=0
  "$BUILD/tests/bench/$BENCH" --out "$OUT" "$@" || rc=$?
  echo "uptime after: $(uptime)"
  exit "$rc"
} 2>&1 | tee "$OUT/output.txt"
