#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs dependencies, builds
# everything, runs every test through ctest. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

./packaging/install-deps.sh
# ccache keys on paths relative to the checkout, so a second clone (CI's)
# reuses what an earlier build of the same sources compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# Warnings are errors here (GPUSCHED_WERROR): a warning that lands is one
# that every later build prints.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCHED_WERROR=ON
cmake --build build
ctest --test-dir build --output-on-failure --timeout 900
