#!/usr/bin/env bash
# What one gpusched-agent costs (a benchmark, not a test): its resident memory
# with no job, and its own CPU time per job it launches, over an array of
# trivial 1-GPU tasks on 8 fake GPUs. The CPU is the agent process's alone
# (utime + stime of /proc/PID/stat): not its job shims' nor the jobs'; its
# idle rate (heartbeats, GPU readings), measured over IDLE_S seconds before
# the array, is taken out of the per-job figure and shown apart.
#   tests/bench/agent_cost.sh [TASKS (default 2000)] [ROUNDS (default 1)]
# Environment: BUILD_DIR (default <repo>/build); IDLE_S (default 10); AGENT_BINS: agent binaries
# to compare, space-separated, measured alternately in each round (default
# the build's).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
tasks=${1:-2000}
rounds=${2:-1}
read -r -a agents <<<"${AGENT_BINS:-$build/agent/gpusched-agent}"
daemon_bin=$build/daemon/gpuschedd
cli=$build/cli/gpusched
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The CPU of the agent's children it has reaped: its job shims, with their jobs.
child_ticks() { awk '{print $16 + $17}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
ticks_per_s=$(getconf CLK_TCK)
idle_s=${IDLE_S:-10}
now() { date +%s.%N; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

measure() {  # AGENT_BIN ROUND
  local agent_bin=$1 dir=$work/run-$2-$RANDOM port
  mkdir -p "$dir"
  port=$(free_port)
  local root_jobs=()
  [[ $(id -u) == 0 ]] && root_jobs=(--allow-root-jobs)
  "$daemon_bin" serve --listen "127.0.0.1:$port" --state-dir "$dir/state" --init --allow-unauthenticated-tcp \
    "${root_jobs[@]}" >"$dir/daemon.log" 2>&1 &
  local daemon=$!
  pids+=("$daemon")
  export GPUSCHED_ADDR=127.0.0.1:$port
  for _ in $(seq 100); do "$cli" nodes >/dev/null 2>&1 && break; sleep 0.1; done
  "$agent_bin" --daemon "127.0.0.1:$port" --node-name bench --fake-gpus 8 --log-dir "$dir/logs" \
    --heartbeat-interval-ms 1000 >"$dir/agent.log" 2>&1 &
  local agent=$!
  pids+=("$agent")
  for _ in $(seq 100); do "$cli" nodes 2>/dev/null | grep -q " UP" && break; sleep 0.1; done
  sleep 2
  local rss=$(rss_kib "$agent") idle0=$(cpu_ticks "$agent")
  sleep "$idle_s"
  local before=$(cpu_ticks "$agent") children0=$(child_ticks "$agent") start=$(now)
  "$cli" submit --array "1-$tasks" --gpus 1 --wait -- /bin/true >/dev/null
  local after=$(cpu_ticks "$agent") children=$(($(child_ticks "$agent") - children0)) end=$(now)
  awk -v b="$agent_bin" -v r="$rss" -v idle="$((before - idle0))" -v idle_s="$idle_s" -v t="$((after - before))" \
    -v c="$children" -v hz="$ticks_per_s" -v n="$tasks" -v s0="$start" -v s1="$end" 'BEGIN {
      rate = idle / hz / idle_s; took = s1 - s0; per_job = (t / hz - rate * took) / n
      printf "%-34s idle: RSS %5.1f MiB, CPU %5.2f%%   per job: agent %.3f ms, shim+job %.3f ms of CPU   (%d jobs in %.1f s)\n",
             b, r / 1024, rate * 100, per_job * 1000, c / hz * 1000 / n, n, took }'
  kill "$agent" "$daemon"
  wait "$agent" "$daemon" 2>/dev/null || true
}

echo "agent_cost: $tasks tasks x $rounds round(s); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for agent_bin in "${agents[@]}"; do measure "$agent_bin" "$round"; done
done
