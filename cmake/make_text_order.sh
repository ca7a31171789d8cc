#!/usr/bin/env bash
# Makes the order files that put the code gpuschedd and gpusched-agent run
# first in their text (cmake/text_order.cmake): daemon/text.order and
# agent/text.order, each the functions of its program that one run executed,
# in the order the profile first names them: first what it ran while
# serving, then (the daemon's) what a native run of it executed that
# callgrind's did not see, then what only start-up and shutdown ran (the
# pages each unmaps once it serves, common/io/program_pages, then stay
# unmapped).
#
#   cmake/make_text_order.sh [BUILD_DIR]      (default build; needs valgrind)
#
# KEEP_WORK=1 keeps the run's directory (profiles, logs) for a look.
#
# The run, both programs under valgrind's callgrind: a fresh daemon with a
# SQLite state, one agent with 8 fake GPUs registering and heartbeating, and
# the CLI over the Unix socket and over TCP: nodes, a held submit, status,
# cancel, a 2-GPU job run to its end with --wait, another 1-GPU job. That is
# start-up and the steady paths an idle and a working cluster take; code
# only rarer paths run is faulted in when they run, as before. (Valgrind
# 3.19 does not know pidfd_open: under it the agent's launches fail at that
# step, so the jobs end failed and the launch beyond it is not in the order.)
#
# The native run (with llvm-bolt, on the build's $BUILD_DIR/daemon/gpuschedd.prebolt):
# the same commands on 16 agents, as tests/bench/vs_slurm.sh runs them, the
# daemon instrumented by BOLT, no valgrind.
#
# Run it again when the programs have changed much (a stale file only orders
# less), rebuild, and compare resident memory: tests/bench/agent_cost.sh,
# tests/bench/vs_slurm.sh (rows 8 and 9).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v valgrind >/dev/null || { echo "make_text_order: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
for b in daemon/gpuschedd agent/gpusched-agent agent/gpusched-shim cli/gpusched; do
  [[ -x $build/$b ]] || { echo "make_text_order: $build/$b is missing: build first" >&2; exit 1; }
done
work=$(mktemp -d /tmp/gpusched-text-order.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n ${KEEP_WORK:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
# The shim beside the agent, as installed.
cp "$build/daemon/gpuschedd" "$build/agent/gpusched-agent" "$build/agent/gpusched-shim" "$work/"
: >"$work/empty.toml"
start() {  # NAME PROGRAM ARGS...: in the background, under callgrind in the first run
  local name=$1
  shift
  if [[ $run == callgrind ]]; then
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.callgrind" "$@" >"$work/$name.$run.log" 2>&1 &
  else
    "$@" >"$work/$name.$run.log" 2>&1 &
  fi
  pids+=($!)
}

# Callgrind writes the counts so far to the next part of its profile
# (FILE.1, FILE.2, ...; the rest at exit to FILE itself).
phase_mark() {  # PID
  [[ $run == callgrind ]] || return 0
  callgrind_control --dump "$1" >"$work/dump.log" 2>&1 || {
    cat "$work/dump.log" >&2
    echo "make_text_order: callgrind_control could not split the profile of process $1" >&2
    exit 1
  }
}

scenario() {  # DAEMON_PROGRAM AGENTS
  local dir=$work/$run held n
  mkdir -p "$dir"
  port=$((20000 + RANDOM % 20000))
  cli() { "$build/cli/gpusched" --addr "unix:$dir/d.sock" "$@"; }
  start daemon "$1" serve --config "$work/empty.toml" --listen "127.0.0.1:$port" \
    --state-dir "$dir/state" --init --allow-unauthenticated-tcp --allow-root-jobs --socket "$dir/d.sock"
  # Once it logs that it serves, the daemon unmaps its pages
  # (daemon/main.cc): what it runs from here on is its steady state, even
  # what it runs only once (the first call's lazy set-up).
  for _ in $(seq 1200); do grep -q "serving on" "$work/daemon.$run.log" && break; sleep 0.1; done
  grep -q "serving on" "$work/daemon.$run.log" || {
    tail "$work/daemon.$run.log" >&2
    echo "make_text_order: the daemon never said it serves ($run run)" >&2
    exit 1
  }
  phase_mark "${pids[0]}"
  for _ in $(seq 120); do cli nodes >/dev/null 2>&1 && break; sleep 0.5; done
  for n in $(seq "$2"); do
    start "agent$n" "$work/gpusched-agent" --config "$work/empty.toml" --daemon "127.0.0.1:$port" \
      --node-name "order$n" --fake-gpus 8 --log-dir "$dir/logs$n" --cpu-bind none --calibrate-on-start false \
      --keep-jobs-on-stop false
  done
  for _ in $(seq 120); do (($(cli nodes 2>/dev/null | grep -c -E "^order[0-9]+ +UP") == $2)) && break; sleep 0.5; done
  # Registered, the agent unmaps its pages too (agent/main.cc, within a
  # second); the first agent's profile is split there as the daemon's is.
  phase_mark "${pids[1]}"
  (($(cli nodes | grep -c -E "^order[0-9]+ +UP") == $2)) || {
    echo "make_text_order: not all $2 agents came UP ($run run); the first one's log:" >&2
    tail "$work/agent1.$run.log" >&2
    exit 1
  }

  held=$(cli submit --hold -- true | awk '{print $NF}')
  cli status "$held" >/dev/null
  cli status >/dev/null
  cli submit --gpus 2 --wait -- sh -c 'echo order' >/dev/null || true  # see pidfd_open above
  cli cancel "$held" >/dev/null
  "$build/cli/gpusched" --addr "127.0.0.1:$port" nodes >/dev/null
  cli submit --gpus 1 --wait -- true >/dev/null || true
  sleep 12  # a few heartbeats and idle passes

  phase_mark "${pids[0]}"  # what follows is shutdown
  phase_mark "${pids[1]}"
  kill -TERM "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
}

# A daemon rewritten by BOLT is profiled as it was linked (valgrind cannot
# read the debug info BOLT writes); the functions are the same. The copy as
# linked is only this build's when the daemon is BOLT's output.
prebolt=
if [[ -f $build/daemon/gpuschedd.prebolt ]] && readelf -SW "$build/daemon/gpuschedd" | grep '\.note\.bolt_info' >/dev/null; then
  prebolt=$build/daemon/gpuschedd.prebolt
  cp "$prebolt" "$work/gpuschedd"
fi
run=callgrind
scenario "$work/gpuschedd" 1
# The daemon's run again, natively, with BOLT's instrumentation (its
# counters are written at exit): callgrind's CPU is not the machine's, and
# code chosen by CPU features (epoll, hashing, CRC) differs. Its functions
# that callgrind did not see follow callgrind's in daemon/text.order.
bolt=$(command -v llvm-bolt-16 || command -v llvm-bolt || true)
if [[ -n $bolt && -n $prebolt ]]; then
  # Through the link, BOLT finds its runtime library beside itself.
  "$(readlink -f "$bolt")" "$prebolt" -instrument -o "$work/gpuschedd.instrumented" \
    --instrumentation-file="$work/daemon.fdata" >"$work/instrument.log" 2>&1 || {
    grep -v '^BOLT-WARNING' "$work/instrument.log" | tail >&2
    echo "make_text_order: llvm-bolt could not instrument the daemon" >&2
    exit 1
  }
  run=native
  scenario "$work/gpuschedd.instrumented" 16
else
  echo "make_text_order: no llvm-bolt, or $build/daemon/gpuschedd is not BOLT's: callgrind's run alone" >&2
fi

# Callgrind names each function once with its id, "fn=(ID) NAME", and by id
# alone after that; "ob=" says whose object the functions that follow are.
# Kept: the functions of the program itself, without callgrind's recursion
# marks ('2) and its pseudo-functions.
executed() {  # CALLGRIND_FILE PROGRAM_PATH
  awk -v program="$2" '
    function name(entry, table,   id) {
      if (match(entry, /^\([0-9]+\)/)) {
        id = substr(entry, 2, RLENGTH - 2)
        if (length(entry) > RLENGTH) table[id] = substr(entry, RLENGTH + 2)
        return table[id]
      }
      return entry
    }
    /^ob=/ { ob = name(substr($0, 4), objects); next }
    /^cob=/ { name(substr($0, 5), objects); next }
    /^cfn=/ { name(substr($0, 5), functions); next }
    /^fn=/ {
      f = name(substr($0, 4), functions)
      sub(/\047[0-9]+$/, "", f)
      if (ob == program && f !~ /^\(/ && !(f in seen)) { seen[f] = 1; print f }
    }' "$1"
}
# BOLT's profile: "FROM_IS_SYMBOL FROM OFFSET TO_IS_SYMBOL TO OFFSET
# MISPREDICTS COUNT" per branch or call taken; a local function's name ends
# in /N. Printed: the functions that ran, as the order file names them.
instrumented() {  # FDATA
  awk '$NF > 0 { if ($1 == 1) print $2; if ($4 == 1) print $5 }' "$1" | sed 's|/[0-9]*$||' | awk '!seen[$0]++'
}
write_order() {  # NAME PROGRAM OUT
  local out=$3 profile=$work/$1.callgrind served=$work/$1.served rest=$work/$1.rest
  if [[ -f $profile.2 ]]; then
    # A run in three parts: start-up ($profile.1), serving (.2) and
    # shutdown (the last). What it runs while serving comes first, then
    # what only the daemon's native run saw (most of it is serving code
    # chosen by CPU features), then what only start-up and shutdown ran:
    # the block the program unmaps once it serves (common/io/program_pages).
    # BOLT's profile has no phases: what callgrind saw only at start-up
    # stays with start-up even where the native run may have served with it
    # too.
    executed "$profile.2" "$work/$2" >"$served"
    { executed "$profile.1" "$work/$2"; executed "$profile" "$work/$2"; } >"$rest"
  else
    executed "$profile" "$work/$2" >"$served"
    : >"$rest"
  fi
  {
    echo "# The functions of $2 that one run executed, put first in its text by"
    echo "# the linker (cmake/text_order.cmake). Made by cmake/make_text_order.sh; run it"
    echo "# again rather than editing this file."
    {
      cat "$served"
      [[ ! -f $work/$1.fdata ]] || instrumented "$work/$1.fdata" | grep -vxF -f "$rest" || true
      cat "$rest"
    } | awk '!seen[$0]++'
  } >"$out"
  echo "make_text_order: $out: $(($(wc -l <"$out") - 3)) functions"
}
write_order daemon gpuschedd daemon/text.order
write_order agent1 gpusched-agent agent/text.order
