#!/usr/bin/env bash
# On a machine with NVIDIA GPUs and driver: build gpusched-agent, print what
# NVML + hwloc discovery makes of this node, and what nvidia-smi says, for
# comparison by eye. Run from anywhere; builds into <repo>/build-gpu.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-gpu"

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "discover.sh: nvidia-smi not found; this check needs a machine with the NVIDIA driver" >&2
  exit 2
fi

echo "== building gpusched-agent in ${build}"
cmake -S "${repo}" -B "${build}" -G Ninja >/dev/null
ninja -C "${build}" gpusched-agent

echo
echo "== gpusched-agent --discover --gpu-source nvml"
"${build}/agent/gpusched-agent" --discover --gpu-source nvml

echo
echo "== nvidia-smi -L"
nvidia-smi -L

echo
echo "== nvidia-smi topo -m"
nvidia-smi topo -m
