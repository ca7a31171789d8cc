#!/usr/bin/env bash
# Fuzzes every target in tests/fuzz for a fixed time each (default 60 s) with
# libFuzzer, ASan and UBSan. Not part of the default test run:
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
#
# Installs clang if missing, builds in build-fuzz/ (beside build/), starts
# each target from its saved corpus (tests/fuzz/corpus/<target>, plus the
# real topo -m fixtures for the topology parser) and keeps what it learns in
# build-fuzz/corpus/. An input that crashes a target is copied into
# tests/fuzz/corpus/<target>/ as crash-<hash>, so that the normal test run
# replays it from then on; fix the bug and commit the input. Exits 1 when any
# target crashed.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(topo_parser hostlist time_limit topology_conf submit_spec node_registration settings local_call_frame trace)
fi

./packaging/install-deps.sh
if ! command -v clang++ >/dev/null; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends clang
fi

build=build-fuzz
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -g -O1"
cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$sanitize" -DGPUSCHED_FUZZ=ON >/dev/null
cmake --build "$build" --target "${targets[@]/%/_fuzz}"

failed=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus" "$build/crashes/$t"
  seeds=(tests/fuzz/corpus/"$t")
  [[ $t == topo_parser && -d ../shared/fixtures/topo ]] && seeds+=(../shared/fixtures/topo)
  echo "== $t: ${seconds}s"
  if ! "$build/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/crashes/$t/" -print_final_stats=1 "$corpus" "${seeds[@]}" 2>"$build/$t.log"; then
    failed+=("$t")
    for crash in "$build/crashes/$t"/*; do
      [[ -f $crash ]] && cp "$crash" "tests/fuzz/corpus/$t/crash-$(sha1sum "$crash" | cut -c1-12)"
    done
    grep -E "ERROR|SUMMARY|invariant" "$build/$t.log" | head -5
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$t.log" | tr '\n' ' '
  echo
done
if ((${#failed[@]} > 0)); then
  echo "crashed: ${failed[*]} (inputs saved under tests/fuzz/corpus/)"
  exit 1
fi
echo "no crashes in ${#targets[@]} targets, ${seconds}s each"
