#!/usr/bin/env bash
# On a machine with NVIDIA GPUs, their driver, Podman (Debian's podman, runc)
# and busybox-static, run as root: runs gpuschedd and one gpusched-agent on
# NVML, makes a busybox image locally (no registry needed), and runs a 1-GPU
# job in it whose rank calls the host's nvidia-smi, mounted by the agent with
# the driver's libraries. Checks that nvidia-smi inside lists exactly one GPU,
# the one the job was given (by UUID), and that no container is left after.
# Changes no GPU setting. Builds into <repo>/build-gpu. Exit 0: all passed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-gpu"
for tool in nvidia-smi podman runc busybox python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "container.sh: $tool not found" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "container.sh: run as root (the agent drives rootful Podman)" >&2; exit 2; }

echo "== building in ${build}"
cmake -S "${repo}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "${build}" gpuschedd gpusched-agent gpusched gpusched-shim

work="$(mktemp -d /tmp/gpusched-container-XXXXXX)"
chmod 755 "$work"
port=$((20000 + RANDOM % 20000))
image=localhost/gpusched-gpu-check:1
cleanup() {
  [ -n "${agent:-}" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null || true
  [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
  echo "== agent log (tail)"; tail -20 "$work/agent.log" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/rootfs/bin" "$work/rootfs/tmp" "$work/rootfs/usr/bin"
cp "$(command -v busybox)" "$work/rootfs/bin/busybox"
for applet in sh echo cat ls grep wc; do ln -s busybox "$work/rootfs/bin/$applet"; done
tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
podman import "$work/rootfs.tar" "$image" >/dev/null

"${build}/daemon/gpuschedd" serve --init --listen "127.0.0.1:${port}" --state-dir "$work/state" \
  --allow-unauthenticated-tcp --allow-root-jobs >"$work/daemon.log" 2>&1 &
daemon=$!
"${build}/agent/gpusched-agent" --daemon "127.0.0.1:${port}" --gpu-source nvml --log-dir "$work/logs" \
  --calibrate-on-start false --container-runtime podman --container-oci-runtime runc \
  --container-registry localhost >"$work/agent.log" 2>&1 &
agent=$!
cli=("${build}/cli/gpusched" --addr "127.0.0.1:${port}")
for _ in $(seq 50); do "${cli[@]}" nodes 2>/dev/null | grep -q ' UP ' && break; sleep 0.2; done
"${cli[@]}" nodes show "$(hostname)" | grep -i container

submitted=$("${cli[@]}" submit --gpus 1 --image "$image" -- /bin/sh -c \
  'echo CVD=$CUDA_VISIBLE_DEVICES; ls /dev/nvidia*; nvidia-smi -L; echo COUNT=$(nvidia-smi -L | grep -c "^GPU ")')
id=$(echo "$submitted" | grep -o '[0-9]\+' | head -1)
for _ in $(seq 300); do
  "${cli[@]}" status "$id" --json | python3 -c 'import json,sys; s=json.load(sys.stdin)["state"]; sys.exit(0 if s in ("JOB_STATE_COMPLETED","JOB_STATE_FAILED","JOB_STATE_CANCELLED","JOB_STATE_TIMEOUT","JOB_STATE_NODE_FAIL") else 1)' && break
  sleep 0.2
done
"${cli[@]}" status "$id"
out=$("${cli[@]}" logs "$id")
echo "== the job's output"; echo "$out"
state=$("${cli[@]}" status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
given=$("${cli[@]}" status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocation"]["nodes"][0].get("gpuIndices",[0])[0])')
uuid=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader | awk -F', ' -v g="$given" '$1==g {print $2}')
echo "== job ${id}: ${state}; given GPU ${given} (${uuid})"
[ "$state" = "JOB_STATE_COMPLETED" ]
echo "$out" | grep -q '^COUNT=1$' || { echo "FAIL: nvidia-smi inside saw other than one GPU" >&2; exit 1; }
echo "$out" | grep -q "$uuid" || { echo "FAIL: the GPU inside is not the one given" >&2; exit 1; }
[ -z "$(podman ps --all --filter "label=gpusched.job=${id}" --format '{{.Names}}')" ] || {
  echo "FAIL: the job's container is still there" >&2; exit 1; }
echo "== all container checks passed"
