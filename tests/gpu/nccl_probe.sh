#!/usr/bin/env bash
# On a machine with NVIDIA GPUs, driver, CUDA toolkit and NCCL: build
# gpusched-nccl-probe and print its all-reduce tables, first over all local
# GPUs, then (with 2-8 GPUs) over every pair, to see which links are fast.
# Run from anywhere; builds into <repo>/build-gpu. Extra arguments go to every
# probe run, e.g. --max-bytes 1073741824.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-gpu"

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "nccl_probe.sh: nvidia-smi not found; this check needs a machine with the NVIDIA driver" >&2
  exit 2
fi

echo "== building gpusched-nccl-probe in ${build}"
cmake -S "${repo}" -B "${build}" -G Ninja -DGPUSCHED_WITH_NCCL_PROBE=ON >/dev/null
ninja -C "${build}" gpusched-nccl-probe
probe="${build}/agent/nccl/gpusched-nccl-probe"

count="$(nvidia-smi -L | grep -c '^GPU ' || true)"
echo
echo "== nvidia-smi -L (${count} GPUs)"
nvidia-smi -L
if [[ "${count}" -eq 0 ]]; then
  echo "nccl_probe.sh: nvidia-smi lists no GPU" >&2
  exit 1
fi

all="$(seq -s, 0 $((count - 1)))"
echo
echo "== gpusched-nccl-probe --gpus ${all}"
"${probe}" --gpus "${all}" "$@"

if ((count >= 2 && count <= 8)); then
  for ((a = 0; a < count; a++)); do
    for ((b = a + 1; b < count; b++)); do
      echo
      echo "== gpusched-nccl-probe --gpus ${a},${b}"
      "${probe}" --gpus "${a},${b}" "$@"
    done
  done
fi
