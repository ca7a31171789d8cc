#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs dependencies, builds
# everything, runs every test through ctest. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

./packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
ctest --test-dir build --output-on-failure --timeout 900
