#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: what the agent's NVML discovery makes of
# the GPUs' MIG mode and instances, beside what nvidia-smi says, compared
# line by line for the instances' UUIDs. Changes nothing: a GPU not in MIG
# mode is reported as such and its check SKIPPED (MIG mode is the operator's
# to set). Builds into <repo>/build-gpu. Exit 0: every MIG instance
# nvidia-smi lists was discovered with the same UUID.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-gpu"
command -v nvidia-smi >/dev/null 2>&1 || { echo "mig_discover.sh: nvidia-smi not found" >&2; exit 2; }

cmake -S "${repo}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "${build}" gpusched-agent >/dev/null

echo "== gpusched-agent --discover --gpu-source nvml"
discovered="$("${build}/agent/gpusched-agent" --discover --gpu-source nvml)"
echo "$discovered"
echo
echo "== nvidia-smi --query-gpu=index,mig.mode.current"
nvidia-smi --query-gpu=index,mig.mode.current --format=csv,noheader
echo
echo "== nvidia-smi -L"
nvidia-smi -L

expected="$(nvidia-smi -L | grep -o 'MIG-[0-9a-f-]*' || true)"
if [ -z "$expected" ]; then
  echo "SKIPPED: no GPU here is in MIG mode with instances; discovery saw: $(echo "$discovered" | grep -c '  MIG ' || true) instances"
  exit 0
fi
missing=0
for uuid in $expected; do
  if echo "$discovered" | grep -q "$uuid"; then echo "PASS $uuid"; else echo "FAIL $uuid not discovered"; missing=1; fi
done
exit $missing
