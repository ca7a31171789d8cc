#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs dependencies, builds
# everything, runs every test through ctest. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI gives the whole run 90 minutes; the steps after the normal suite share
# what is left of GPUSCHED_TIME_BUDGET_S (75 minutes) and say SKIPPED when a
# build of theirs cannot finish within it (a cold ccache); what they compiled
# stays in the cache for the next run.
budget_s=${GPUSCHED_TIME_BUDGET_S:-4500}
seconds_left() { echo $((budget_s - SECONDS)); }
# Runs a build with what is left of the budget, less RESERVE seconds for
# the tests after it; 124 when it did not finish in time (or had no time).
build_within_budget() {
  local reserve=$1
  shift
  local limit=$(($(seconds_left) - reserve))
  ((limit > 0)) || return 124
  timeout "$limit" "$@"
}

./packaging/install-deps.sh
# ccache keys on paths relative to the checkout, so a second clone (CI's)
# reuses what an earlier build of the same sources compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# Warnings are errors here (GPUSCHED_WERROR): a warning that lands is one
# that every later build prints.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCHED_WERROR=ON
cmake --build build
ctest --test-dir build --output-on-failure --timeout 900

# Once more under AddressSanitizer and UBSan (errors fatal), for the code
# whose tests are single-threaded and quick: the scheduling core, placement,
# sharing, the simulator, the store, the settings readers and the pure
# libraries below them. GPUSCHED_SANITIZE_TESTS=0 leaves this out.
if [[ ${GPUSCHED_SANITIZE_TESTS:-1} != 0 ]]; then
  sanitized=(core_unit_tests placement_unit_tests sharing_unit_tests sim_unit_tests store_unit_tests config_unit_tests
             topology_unit_tests net_unit_tests convert_unit_tests common_unit_tests)
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCHED_WERROR=ON \
    -DGPUSCHED_SANITIZE=address,undefined
  cmake --build build-sanitize --target "${sanitized[@]}"
  # Left out: replaying a real trace twice, 42 s uninstrumented and more
  # than its 300 s under ASan; the replay code runs sanitized in the other
  # simulator cases. And fill-fgd's packing goal over ten seeds (6 s
  # uninstrumented, 43 s under ASan): the same packer runs sanitized in the
  # other inflation cases.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-sanitize --output-on-failure --timeout 900 -j2 \
      -R "^($(IFS='|'; echo "${sanitized[*]}")): " -E "two runs give identical output|fill-fgd leaves at most"

  # Then the threaded code and the real processes under the same sanitizers:
  # the daemon's server, the agent, the CLI, the metrics, and every
  # integration case (gpuschedd, gpusched-agent and gpusched built with
  # ASan). About 200 s of tests; its build is the costly part (gRPC-heavy
  # files), so it runs when the budget leaves room, else says it skipped.
  threaded=(server_unit_tests agent_unit_tests cli_unit_tests h2_unit_tests metrics_unit_tests nccl_unit_tests
            gpu_unit_tests integration_tests)
  built=0
  build_within_budget 600 cmake --build build-sanitize --target "${threaded[@]}" || built=$?
  ((built == 0 || built == 124)) || exit "$built"  # a real build error fails the run
  if ((built == 0)); then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-sanitize --output-on-failure --timeout 900 -j2 -R "^($(IFS='|'; echo "${threaded[*]}")): "
  else
    echo "SKIPPED: the daemon, agent, CLI and integration tests under ASan+UBSan: their build did not finish" \
         "within the time budget (${budget_s} s in all, ${SECONDS} s used)" >&2
  fi
fi

# ThreadSanitizer over the threaded code's unit tests: the daemon's scheduler
# loop, committer and read pool; the agent's session (and the HTTP/2 stream
# under it), runner, shims and MPS supervisor (about 15 s). Its build (about 20 minutes cold here)
# runs within the same budget as the ASan step above, and says SKIPPED when
# it cannot finish; GPUSCHED_TSAN_TESTS=0 leaves it out. Debian's gRPC,
# protobuf and Abseil are not built for TSan: races inside them are
# suppressed (tests/tsan/suppressions.txt).
if [[ ${GPUSCHED_TSAN_TESTS:-1} != 0 ]]; then
  tsan_targets=(server_unit_tests agent_unit_tests h2_unit_tests)
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCHED_WERROR=ON \
    -DGPUSCHED_SANITIZE=thread
  built=0
  build_within_budget 180 cmake --build build-tsan --target "${tsan_targets[@]}" || built=$?
  ((built == 0 || built == 124)) || exit "$built"
  if ((built == 0)); then
    TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan/suppressions.txt" \
      ctest --test-dir build-tsan --output-on-failure --timeout 900 -j2 \
        -R "^($(IFS='|'; echo "${tsan_targets[*]}")): "
  else
    echo "SKIPPED: the daemon's and agent's threaded unit tests under ThreadSanitizer: their build did not" \
         "finish within the time budget (${budget_s} s in all, ${SECONDS} s used)" >&2
  fi
fi
