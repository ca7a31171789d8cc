#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, its driver and nvidia-cuda-mps-control:
# runs gpuschedd and one gpusched-agent whose GPU 0 is shared through MPS,
# submits a 25% job with a 2G memory limit, and checks inside the job, on the
# real GPU, that the agent's MPS control daemon enforces both
# (tests/gpu/mps_limits.py). Changes no GPU setting: the agent's MPS daemon
# uses its own pipe and log directories under a temporary directory and is
# stopped at the end. Builds into <repo>/build-gpu. Exit 0: all checks passed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-gpu"
for tool in nvidia-smi nvidia-cuda-mps-control python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "mps.sh: $tool not found; this check needs the NVIDIA driver" >&2; exit 2; }
done

echo "== building in ${build}"
cmake -S "${repo}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "${build}" gpuschedd gpusched-agent gpusched gpusched-shim

work="$(mktemp -d /tmp/gpusched-mps-XXXXXX)"
chmod 755 "$work"
port=$((20000 + RANDOM % 20000))
cleanup() {
  [ -n "${agent:-}" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null || true
  [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
  echo "== MPS control daemon log"; cat "$work/mps/log/control.log" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"${build}/daemon/gpuschedd" serve --init --listen "127.0.0.1:${port}" --state-dir "$work/state" \
  --allow-unauthenticated-tcp --allow-root-jobs >"$work/daemon.log" 2>&1 &
daemon=$!
"${build}/agent/gpusched-agent" --daemon "127.0.0.1:${port}" --gpu-source nvml --gpu-share-modes 0=mps \
  --mps-dir "$work/mps" --log-dir "$work/logs" --calibrate-on-start false >"$work/agent.log" 2>&1 &
agent=$!
cli=("${build}/cli/gpusched" --addr "127.0.0.1:${port}")
for _ in $(seq 50); do "${cli[@]}" nodes 2>/dev/null | grep -q ' UP ' && break; sleep 0.2; done

echo "== nodes show (GPU 0 should say mps)"
"${cli[@]}" nodes show "$(hostname)" || "${cli[@]}" nodes

cp "${repo}/tests/gpu/mps_limits.py" "$work/mps_limits.py"
submitted=$("${cli[@]}" submit --gpu-share 25% --gpu-mem-limit 2G --gpu-sharing mps -- python3 "$work/mps_limits.py")
id=$(echo "$submitted" | grep -o '[0-9]\+' | head -1)
# The job COMPLETES only if every check in it passed.
for _ in $(seq 300); do
  "${cli[@]}" status "$id" --json | python3 -c 'import json,sys; s=json.load(sys.stdin)["state"]; sys.exit(0 if s in ("JOB_STATE_COMPLETED","JOB_STATE_FAILED","JOB_STATE_CANCELLED","JOB_STATE_TIMEOUT","JOB_STATE_NODE_FAIL") else 1)' && break
  sleep 0.2
done
echo "== status ${id}"
"${cli[@]}" status "$id"
echo "== the job's output"
"${cli[@]}" logs "$id"
state=$("${cli[@]}" status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
echo "== job ${id}: ${state}"
[ "$state" = "JOB_STATE_COMPLETED" ]
