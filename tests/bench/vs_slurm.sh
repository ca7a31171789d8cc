#!/usr/bin/env bash
# gpusched next to Slurm, same workloads, same machine, same sitting (a
# benchmark, not a test: it prints what it measured and exits 0 unless it
# could not set up gpusched at all).
#
#   tests/bench/vs_slurm.sh [--quick]
#
# Each side is a private 16-node cluster of 8 fake GPUs per node on loopback,
# run as the current user, everything (binaries, configs, state, logs, sockets)
# under one temporary directory that is removed at exit:
#   gpusched  copies of gpuschedd, gpusched-agent, gpusched-shim and gpusched
#             taken from $BUILD_DIR (default <repo>/build) at start; gpuschedd
#             with a SQLite state dir, 16 `gpusched-agent --fake-gpus 8`.
#   Slurm     the installed slurmctld and 16 `slurmd -N nodeNN` (multiple-slurmd,
#             one port each) with a slurm.conf of their own (SLURM_CONF), a
#             private munged (own key and socket, AuthInfo=socket=...), 8 GPUs
#             per node as gres.conf File= links to /dev/null, select/cons_tres,
#             proctrack/linuxproc, task/none, no accounting. Settings are
#             Slurm's defaults but for what the workloads need: MaxJobCount
#             (>10,000 jobs) and MaxArraySize (2,000-task arrays), and
#             CPUs=16 per node (SlurmdParameters=config_overrides) so that
#             8 one-GPU jobs fit on a node as they do on gpusched's nodes.
#             When Slurm is not installed its column is SKIPPED. Nothing is
#             ever installed by this script.
# Rows (medians where repeated; ratio > 1: gpusched better, i.e. gpusched/Slurm
# for rates, Slurm/gpusched for times, CPU and memory):
#   1  N sequential held 1-GPU CLI submits (sbatch --hold --gres=gpu:1 --wrap
#      true / gpusched submit --hold --gpus 1 -- true): submits/s
#   2  4 parallel CLI loops x N/4 held submits: submits/s
#   3  P held submits in 4 loops (they stay pending for rows 4-6, 8b)
#   4  one job's status with P pending (squeue -j ID / gpusched status ID)
#   5  node list (sinfo / gpusched nodes)
#   6  one held A-task array submit command
#   7  controller CPU (utime+stime of /proc/PID/stat) per submit of row 1
#   8  controller RSS just after a fresh start with 1 held job; 8b with P pending
#   9  the 16 node daemons' RSS summed (idle, after the start)
#   10 row 1's N held jobs released (scontrol release / gpusched release,
#      all ids in one command) until all have ended: jobs/s
#   11 an A-task array (not held) submitted until all have ended: jobs/s
#   12 idle cluster: submit command start until the job's command has run
#      (it creates a marker file, polled every 10 ms), L times
# Shared state: rows 8, 9 on the fresh clusters; rows 1, 7 then 10 (10
# releases row 1's jobs); row 2 (its jobs cancelled after); rows 3, 8b, 4, 5,
# 6 (all cancelled after); row 11; row 12. Each block runs on one system at a
# time (the other one idle and empty), the order flipping from block to block.
# "All ended" is polled every 0.25 s: squeue / gpusched status list no job.
# Jobs write what they print to a file each, as by default: Slurm's
# slurm-<id>.out in the submit directory, gpusched's rank log.
# Counts: default N=2000 P=10000 A=2000 (calls 50, L=10); --quick N=100
# P=500 A=200 (calls 15, L=5). On a busy 2-CPU machine --quick takes about
# 1.5 minutes and the default about 15 (most of it the 2 x 14,000 CLI
# submits of rows 1-3 and Slurm's rows 10-11). Environment overrides: VS_N, VS_PENDING,
# VS_ARRAY, VS_CALLS, VS_LAT, VS_TIMEOUT_S (wait for jobs to end), BUILD_DIR,
# VS_SLURM_CONF_EXTRA (lines added to slurm.conf, e.g. to try
# SchedulerParameters=batch_sched_delay=0 against Slurm's defaults),
# VS_NO_SLURM=1 (gpusched alone), VS_GPUSCHED_CLI=tcp (the CLI uses unauthenticated loopback TCP instead of
# gpuschedd's Unix socket, where each call is authenticated by uid as Slurm's are by munge; the default).
set -uo pipefail
export LC_ALL=C
if ((BASH_VERSINFO[0] < 5)); then echo "vs_slurm.sh: needs bash 5 (EPOCHREALTIME)" >&2; exit 2; fi

quick=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "vs_slurm.sh: unknown argument '$arg' (only --quick)" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
if ((quick)); then N=100 P=500 A=200 CALLS=15 LAT=5 TIMEOUT_S=120
else N=2000 P=10000 A=2000 CALLS=50 LAT=10 TIMEOUT_S=600; fi
N=${VS_N:-$N} P=${VS_PENDING:-$P} A=${VS_ARRAY:-$A} CALLS=${VS_CALLS:-$CALLS} LAT=${VS_LAT:-$LAT}
TIMEOUT_S=${VS_TIMEOUT_S:-$TIMEOUT_S}
NODES=16 GPUS=8 LOOPS=4
hz=$(getconf CLK_TCK)
# Nothing from a surrounding Slurm job or the user's defaults may change what the commands do.
for v in "${!SLURM_@}" "${!SBATCH_@}" "${!SQUEUE_@}" "${!SINFO_@}" "${!SCANCEL_@}" "${!SCONTROL_@}"; do unset "$v"; done
me=$(id -un)

# ---------------------------------------------------------------- helpers
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
us() { local t=$EPOCHREALTIME; REPLY=${t/./}; }  # microseconds, no fork
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) exit 1; print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }
free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
}
declare -A used_ports=()
port() {  # a free port not handed out before in this run
  local p
  while :; do p=$(free_port); [[ -z ${used_ports[$p]:-} ]] && break; done
  used_ports[$p]=1
  echo "$p"
}

W=$(mktemp -d "${TMPDIR:-/tmp}/vs_slurm.XXXXXX") || exit 1
chmod 755 "$W"  # munged wants every directory above its socket searchable by all
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    local any=0
    for pid in "${pids[@]}"; do alive "$pid" && any=1; done
    ((any)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do alive "$pid" && kill -9 "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/work" && cd "$W/work" || exit 1  # the jobs' working directory: Slurm's slurm-%j.out files go here

# Results: val[SYS:ROW] is a number or "n/a"; a note says why.
declare -A val=() note=()
munge_ms=""
notes=()
record() {  # SYS ROW VALUE UNIT-TEXT
  val[$1:$2]=$3
  log "$(printf '%-8s row %-3s %s %s' "$1" "$2" "$3" "$4")"
}
fail() {  # SYS ROW REASON
  val[$1:$2]=n/a
  notes+=("$1, row $2: $3")
  note[$1:$2]=${#notes[@]}
  log "$(printf '%-8s row %-3s n/a: %s' "$1" "$2" "$3")"
}

# ---------------------------------------------------------------- gpusched
gs_bin=$W/gpusched-bin
mkdir -p "$gs_bin"
for b in daemon/gpuschedd agent/gpusched-agent agent/gpusched-shim cli/gpusched; do
  if [[ ! -x $build/$b ]]; then echo "vs_slurm.sh: $build/$b not built" >&2; exit 2; fi
  cp "$build/$b" "$gs_bin/" || exit 2
done
gs_built=$(date -r "$build/daemon/gpuschedd" '+%F %T')
: >"$W/empty.toml"
gs_port=$(port)
gs_addr=127.0.0.1:$gs_port      # the agents' address, and the CLI's unless VS_GPUSCHED_CLI=unix
gs_cli_addr=$gs_addr
gs_socket_args=()
gs_auth_note="talks to gpuschedd over loopback TCP with --allow-unauthenticated-tcp (VS_GPUSCHED_CLI=tcp: no per-call authentication)."
case ${VS_GPUSCHED_CLI:-unix} in
  tcp) ;;
  unix)
    gs_socket_args=(--socket "$W/gs/gpuschedd.sock")
    gs_cli_addr=unix:$W/gs/gpuschedd.sock
    gs_auth_note="talks to gpuschedd over its Unix socket, in local calls (the caller is the uid SO_PEERCRED names); the agents over loopback TCP with --allow-unauthenticated-tcp."
    ;;
  *) echo "vs_slurm.sh: VS_GPUSCHED_CLI must be tcp or unix" >&2; exit 2 ;;
esac
export XDG_CONFIG_HOME=$W/xdg  # no user cli.toml
unset GPUSCHED_ADDR GPUSCHED_TLS_CA GPUSCHED_TLS_CERT GPUSCHED_TLS_KEY
gs() { "$gs_bin/gpusched" --addr "$gs_cli_addr" "$@"; }
gs_pid="" gs_agents=()

gs_start() {
  local root_jobs=() i name
  [[ $(id -u) == 0 ]] && root_jobs=(--allow-root-jobs)
  mkdir -p "$W/gs"
  "$gs_bin/gpuschedd" serve --config "$W/empty.toml" --listen "$gs_addr" --state-dir "$W/gs/state" --init \
    --allow-unauthenticated-tcp "${root_jobs[@]}" "${gs_socket_args[@]}" >"$W/gs/gpuschedd.log" 2>&1 &
  gs_pid=$!
  pids+=("$gs_pid")
  for _ in $(seq 100); do gs nodes >/dev/null 2>&1 && break; sleep 0.1; done
  for ((i = 1; i <= NODES; i++)); do
    printf -v name 'node%02d' "$i"
    "$gs_bin/gpusched-agent" --config "$W/empty.toml" --daemon "$gs_addr" --node-name "$name" --fake-gpus "$GPUS" \
      --log-dir "$W/gs/logs/$name" --cpu-bind none --calibrate-on-start false --keep-jobs-on-stop false \
      >"$W/gs/agent-$name.log" 2>&1 &
    gs_agents+=($!)
    pids+=($!)
  done
  local up=0
  for _ in $(seq 300); do
    up=$(gs nodes 2>/dev/null | awk '$2 == "UP"' | wc -l)
    ((up == NODES)) && return 0
    sleep 0.2
  done
  log "gpusched: only $up of $NODES nodes UP after 60 s; gpuschedd log:"
  tail -20 "$W/gs/gpuschedd.log" >&2
  return 1
}

# ---------------------------------------------------------------- Slurm
slurm_state=""  # why the Slurm column is missing, when it is
for c in slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v "$c" >/dev/null || { slurm_state="not installed, its column SKIPPED ($c not found)"; break; }
done
if [[ -z $slurm_state ]] && ! command -v munged >/dev/null; then
  slurm_state="not installed, its column SKIPPED (munged not found, which its authentication needs)"
fi
[[ -n ${VS_NO_SLURM:-} ]] && slurm_state="not run, its column SKIPPED (VS_NO_SLURM is set)"
sl_pid="" sl_nodes=() munge_pid=""
sl_version=$( [[ -z $slurm_state ]] && slurmctld -V 2>/dev/null | head -1)

slurm_start() {
  local d=$W/slurm key sock ctld_port i name host
  mkdir -p "$d"/{state,spool,log,dev} && mkdir -m 755 "$d/munge"
  key=$d/munge.key sock=$d/munge/munge.sock
  if command -v mungekey >/dev/null; then mungekey -c -k "$key" -b 1024 2>"$d/log/mungekey.err"
  else dd if=/dev/urandom of="$key" bs=1024 count=1 status=none; fi
  chmod 600 "$key"
  munged -F -S "$sock" --key-file="$key" --log-file="$d/log/munged.log" --pid-file="$d/munged.pid" \
    --seed-file="$d/munged.seed" >"$d/log/munged.out" 2>&1 &
  munge_pid=$!
  pids+=("$munge_pid")
  for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
  if [[ ! -S $sock ]]; then
    slurm_state="munged did not start ($(tail -1 "$d/log/munged.out" "$d/log/munged.log" 2>/dev/null | grep -v '^==' | tail -1))"
    return 1
  fi
  for ((i = 0; i < GPUS; i++)); do ln -s /dev/null "$d/dev/gpu$i"; done
  ctld_port=$(port)
  host=$(hostname -s)
  {
    cat <<EOF
# vs_slurm.sh: a private 16-node cluster on loopback, run as $me
ClusterName=vsbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=$me
SlurmdUser=$me
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/spool/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
MaxJobCount=100000
MaxArraySize=100001
EOF
    for ((i = 1; i <= NODES; i++)); do
      printf 'NodeName=node%02d NodeHostname=%s NodeAddr=127.0.0.1 Port=%s CPUs=16 RealMemory=16000 Gres=gpu:%s State=UNKNOWN\n' \
        "$i" "$host" "$(port)" "$GPUS"
    done
    echo "PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    [[ -n ${VS_SLURM_CONF_EXTRA:-} ]] && printf '%s\n' "$VS_SLURM_CONF_EXTRA"
  } >"$d/slurm.conf"
  echo "Name=gpu File=$d/dev/gpu[0-$((GPUS - 1))]" >"$d/gres.conf"
  export SLURM_CONF=$d/slurm.conf
  slurmctld -D -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
  sl_pid=$!
  pids+=("$sl_pid")
  for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
  if ! scontrol ping 2>/dev/null | grep -q UP; then
    slurm_state="slurmctld did not come up: $(grep -E 'fatal|error' "$d/log/slurmctld.log" "$d/log/slurmctld.out" 2>/dev/null | grep -v pmix | tail -1)"
    return 1
  fi
  for ((i = 1; i <= NODES; i++)); do
    printf -v name 'node%02d' "$i"
    mkdir -p "$d/spool/$name"
    slurmd -D -N "$name" -f "$SLURM_CONF" >"$d/log/slurmd-$name.out" 2>&1 &
    sl_nodes+=($!)
    pids+=($!)
  done
  local idle=0
  for _ in $(seq 300); do
    idle=$(sinfo -h -t idle -o %D 2>/dev/null | awk '{s += $1} END {print s + 0}')
    ((idle == NODES)) && return 0
    sleep 0.2
  done
  local alive_n=0 pid
  for pid in "${sl_nodes[@]}"; do alive "$pid" && alive_n=$((alive_n + 1)); done
  slurm_state="only $idle of $NODES nodes idle after 60 s ($alive_n slurmd processes alive; multiple slurmd on one host may be unsupported): $(sinfo -h -N -o '%N %T %E' 2>/dev/null | grep -v idle | head -1)"
  return 1
}

# ---------------------------------------------------------------- workloads, per system
# The submit loop writes each command's output to OUT (job ids) and counts failures.
submit_held_loop() {  # SYS COUNT OUT
  local i
  if [[ $1 == slurm ]]; then
    for ((i = 0; i < $2; i++)); do sbatch --parsable --hold --gres=gpu:1 --wrap true >>"$3" 2>>"$3.err"; done
  else
    for ((i = 0; i < $2; i++)); do gs submit --hold --gpus 1 -- true >>"$3" 2>>"$3.err"; done
  fi
}
ids_of() {  # OUT... -> job ids (an array's id once)
  cat "$@" 2>/dev/null | awk '/^[0-9]+(;.*)?$/ {sub(/;.*/, ""); print; next}
    /^Submitted job array/ {sub(":", "", $4); print $4; next} /^Submitted job/ {print $3}'
}
active_jobs() {  # SYS -> number of listed pending/running jobs, empty when the listing failed
  local out
  if [[ $1 == slurm ]]; then out=$(squeue -h -o %i 2>/dev/null) || return 1; [[ -z $out ]] && echo 0 || wc -l <<<"$out"
  else out=$(gs status 2>/dev/null) || return 1; echo $(($(wc -l <<<"$out") - 1)); fi
}
wait_empty() {  # SYS TIMEOUT_S -> 0 when no job is listed; REPLY: jobs left
  local deadline=$((SECONDS + $2)) n
  while :; do
    n=$(active_jobs "$1") && [[ $n == 0 ]] && { REPLY=0; return 0; }
    ((SECONDS >= deadline)) && { REPLY=${n:-?}; return 1; }
    sleep 0.25
  done
}
cancel_all() {  # SYS OUT... (gpusched needs the ids; Slurm cancels by user)
  local sys=$1
  shift
  if [[ $sys == slurm ]]; then scancel --user="$me" >/dev/null 2>&1
  else ids_of "$@" | xargs -r -n 1000 "$gs_bin/gpusched" --addr "$gs_cli_addr" cancel >/dev/null 2>&1; fi
  wait_empty "$sys" 300 || log "$sys: $REPLY jobs still listed 300 s after cancelling"
}
ended_badly() {  # SYS -> jobs listed as failed
  if [[ $1 == slurm ]]; then squeue -h -r -t BF,F,NF,OOM,TO,DL -o %i 2>/dev/null | wc -l
  else gs status --state FAILED --state NODE_FAIL --state TIMEOUT 2>/dev/null | awk 'NR > 1' | wc -l; fi
}
ctl_pid() { [[ $1 == slurm ]] && echo "$sl_pid" || echo "$gs_pid"; }
node_pids() { if [[ $1 == slurm ]]; then echo "${sl_nodes[@]}"; else echo "${gs_agents[@]}"; fi; }
succeeded() {  # SYS WANT OUT... -> 0 when every submit printed an id, else a reason in REPLY
  local sys=$1 want=$2 got
  shift 2
  got=$(ids_of "$@" | wc -l)
  ((got == want)) && return 0
  REPLY="$((want - got)) of $want submits failed: $(cat "${@/%/.err}" 2>/dev/null | head -1)"
  return 1
}
ms_calls() {  # COUNT CMD... -> REPLY: median wall ms, return 1 if a call failed
  local i t0 samples=() bad=0
  for ((i = 0; i < $1; i++)); do
    us; t0=$REPLY
    "${@:2}" >/dev/null 2>>"$W/calls.err" || bad=$((bad + 1))
    us; samples+=($((REPLY - t0)))
  done
  REPLY=$(printf '%s\n' "${samples[@]}" | median | awk '{printf "%.1f", $1 / 1000}')
  ((bad == 0)) || { REPLY="$bad of $1 calls failed: $(tail -1 "$W/calls.err")"; return 1; }
}
squeue_one() { squeue -j "$1"; }
rss_row() {  # SYS ROW PID TEXT
  local k
  k=$(rss_kib "$3")
  if [[ -n $k ]]; then record "$1" "$2" "$(awk -v k="$k" 'BEGIN {printf "%.1f", k / 1024}')" "$4"
  else fail "$1" "$2" "the controller (pid $3) had exited"; fi
}
gs_status_one() { gs status "$1"; }

block_fresh() {  # rows 8, 9
  local sys=$1 pid out=$W/$1-fresh.out rss=0 p
  pid=$(ctl_pid "$sys")
  submit_held_loop "$sys" 1 "$out"
  if succeeded "$sys" 1 "$out"; then
    sleep 1
    rss_row "$sys" 8 "$pid" "MiB controller RSS, 1 job"
  else fail "$sys" 8 "$REPLY"; fi
  cancel_all "$sys" "$out"
  local k dead=0
  for p in $(node_pids "$sys"); do
    k=$(rss_kib "$p")
    [[ -n $k ]] && rss=$((rss + k)) || dead=$((dead + 1))
  done
  if ((dead)); then fail "$sys" 9 "$dead of $NODES node daemons had exited"
  else record "$sys" 9 "$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')" "MiB, $NODES node daemons' RSS summed"; fi
}

block_sequential() {  # rows 1, 7, 10
  local sys=$1 pid out=$W/$1-seq.out t0 t1 c0 c1 m0=0 m1=0 bad
  pid=$(ctl_pid "$sys")
  [[ $sys == slurm ]] && m0=$(cpu_ticks "$munge_pid")
  c0=$(cpu_ticks "$pid")
  us; t0=$REPLY
  submit_held_loop "$sys" "$N" "$out"
  us; t1=$REPLY
  c1=$(cpu_ticks "$pid")
  [[ $sys == slurm ]] && m1=$(cpu_ticks "$munge_pid") &&
    munge_ms=$(awk -v c=$((m1 - m0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.3f", c / hz * 1000 / n}')
  if succeeded "$sys" "$N" "$out"; then
    record "$sys" 1 "$(awk -v n="$N" -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", n / (t / 1e6)}')" "submits/s ($N sequential held submits)"
    record "$sys" 7 "$(awk -v c=$((c1 - c0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.3f", c / hz * 1000 / n}')" \
      "ms controller CPU per submit"
  else
    fail "$sys" 1 "$REPLY"
    fail "$sys" 7 "row 1 failed"
    cancel_all "$sys" "$out"
    fail "$sys" 10 "row 1 failed"
    return
  fi
  local ids
  ids=$(ids_of "$out")
  bad=$(ended_badly "$sys")
  us; t0=$REPLY
  if [[ $sys == slurm ]]; then scontrol release "$(paste -sd, <<<"$ids")" >/dev/null 2>"$out.release.err"
  else xargs "$gs_bin/gpusched" --addr "$gs_cli_addr" release <<<"$ids" >/dev/null 2>"$out.release.err"; fi
  local rc=$?
  if wait_empty "$sys" "$TIMEOUT_S"; then
    us; t1=$REPLY
    bad=$(($(ended_badly "$sys") - bad))
    if ((rc != 0)); then fail "$sys" 10 "release failed: $(head -1 "$out.release.err")"
    elif ((bad > 0)); then fail "$sys" 10 "$bad of the $N jobs ended failed"
    else record "$sys" 10 "$(awk -v n="$N" -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", n / (t / 1e6)}')" "jobs/s ($N released held jobs until all ended)"; fi
  else
    fail "$sys" 10 "$REPLY of $N jobs had not ended ${TIMEOUT_S} s after the release"
    cancel_all "$sys" "$out"
  fi
}

parallel_submits() {  # SYS TOTAL PREFIX -> REPLY: submits/s, or reason with return 1
  local sys=$1 total=$2 prefix=$3 t0 t1 l per
  per=$((total / LOOPS))
  us; t0=$REPLY
  local loops=()
  for ((l = 0; l < LOOPS; l++)); do
    submit_held_loop "$sys" $((l < LOOPS - 1 ? per : total - per * (LOOPS - 1))) "$prefix.$l" &
    loops+=($!)
  done
  wait "${loops[@]}"  # not a bare wait: the daemons are children too
  us; t1=$REPLY
  succeeded "$sys" "$total" "$prefix".? || return 1
  REPLY=$(awk -v n="$total" -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", n / (t / 1e6)}')
}

block_parallel() {  # row 2
  local sys=$1
  if parallel_submits "$sys" "$N" "$W/$sys-par"; then record "$sys" 2 "$REPLY" "submits/s ($LOOPS loops x $((N / LOOPS)))"
  else fail "$sys" 2 "$REPLY"; fi
  cancel_all "$sys" "$W/$sys-par".?
}

block_pending() {  # rows 3, 8b, 4, 5, 6
  local sys=$1 pid id t0 t1 arr=$W/$1-array.out
  pid=$(ctl_pid "$sys")
  if parallel_submits "$sys" "$P" "$W/$sys-pend"; then record "$sys" 3 "$REPLY" "submits/s ($P held submits, $LOOPS loops)"
  else fail "$sys" 3 "$REPLY"; fi
  sleep 1
  rss_row "$sys" 8b "$pid" "MiB controller RSS, $P pending"
  id=$(ids_of "$W/$sys-pend".? | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  if [[ -z $id ]]; then fail "$sys" 4 "no pending job to look at"
  elif [[ $sys == slurm ]]; then
    if ms_calls "$CALLS" squeue_one "$id"; then record "$sys" 4 "$REPLY" "ms median, squeue -j $id"; else fail "$sys" 4 "$REPLY"; fi
  else
    if ms_calls "$CALLS" gs_status_one "$id"; then record "$sys" 4 "$REPLY" "ms median, gpusched status $id"; else fail "$sys" 4 "$REPLY"; fi
  fi
  if [[ $sys == slurm ]]; then
    if ms_calls "$CALLS" sinfo; then record "$sys" 5 "$REPLY" "ms median, sinfo"; else fail "$sys" 5 "$REPLY"; fi
  else
    if ms_calls "$CALLS" gs nodes; then record "$sys" 5 "$REPLY" "ms median, gpusched nodes"; else fail "$sys" 5 "$REPLY"; fi
  fi
  us; t0=$REPLY
  if [[ $sys == slurm ]]; then
    sbatch --parsable --hold --gres=gpu:1 --array="0-$((A - 1))" --wrap true >"$arr" 2>"$arr.err"
  else gs submit --hold --gpus 1 --array "0-$((A - 1))" -- true >"$arr" 2>"$arr.err"; fi
  local rc=$?
  us; t1=$REPLY
  if ((rc == 0)) && succeeded "$sys" 1 "$arr"; then record "$sys" 6 "$(awk -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", t / 1000}')" "ms, one $A-task held array submit"
  else fail "$sys" 6 "array submit failed: $(head -1 "$arr.err")"; fi
  log "$sys: cancelling $P + $A pending jobs"
  cancel_all "$sys" "$W/$sys-pend".? "$arr"
}

block_array() {  # row 11
  local sys=$1 out=$W/$1-run-array.out t0 t1 rc bad
  bad=$(ended_badly "$sys")
  us; t0=$REPLY
  if [[ $sys == slurm ]]; then
    sbatch --parsable --gres=gpu:1 --array="0-$((A - 1))" --wrap true >"$out" 2>"$out.err"
  else gs submit --gpus 1 --array "0-$((A - 1))" -- true >"$out" 2>"$out.err"; fi
  rc=$?
  if ((rc != 0)); then fail "$sys" 11 "array submit failed: $(head -1 "$out.err")"; return; fi
  if wait_empty "$sys" "$TIMEOUT_S"; then
    us; t1=$REPLY
    bad=$(($(ended_badly "$sys") - bad))
    if ((bad > 0)); then fail "$sys" 11 "$bad of the $A tasks ended failed"
    else record "$sys" 11 "$(awk -v n="$A" -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", n / (t / 1e6)}')" "jobs/s ($A-task array until all ended)"; fi
  else
    fail "$sys" 11 "$REPLY jobs of the $A-task array had not ended after ${TIMEOUT_S} s"
    cancel_all "$sys" "$out"
  fi
}

block_latency() {  # row 12
  local sys=$1 i t0 t1 mark samples=() out=$W/$1-lat.out deadline
  mkdir -p "$W/lat"
  for ((i = 0; i < LAT; i++)); do
    mark=$W/lat/$sys.$i
    us; t0=$REPLY
    if [[ $sys == slurm ]]; then sbatch --parsable --gres=gpu:1 --wrap "touch $mark" >>"$out" 2>>"$out.err"
    else gs submit --gpus 1 -- touch "$mark" >>"$out" 2>>"$out.err"; fi
    deadline=$((SECONDS + 60))
    until [[ -e $mark ]] || ((SECONDS >= deadline)); do sleep 0.01; done
    us; t1=$REPLY
    if [[ ! -e $mark ]]; then fail "$sys" 12 "job $((i + 1)) had not started 60 s after its submit ($(head -1 "$out.err" 2>/dev/null))"; cancel_all "$sys" "$out"; return; fi
    samples+=($((t1 - t0)))
    wait_empty "$sys" 60 || { fail "$sys" 12 "job $((i + 1)) did not end"; cancel_all "$sys" "$out"; return; }
    sleep 0.5
  done
  record "$sys" 12 "$(printf '%s\n' "${samples[@]}" | median | awk '{printf "%.1f", $1 / 1000}')" \
    "ms median submit -> command started ($LAT jobs; all: $(printf '%s\n' "${samples[@]}" | awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $1 / 1000}'))"
}

# ---------------------------------------------------------------- run
uptime_before=$(uptime)
log "vs_slurm.sh: counts N=$N P=$P A=$A calls=$CALLS latency-jobs=$LAT timeout=${TIMEOUT_S}s; $(nproc) CPUs; work dir $W"
log "uptime before: $uptime_before"
systems=()
if gs_start; then systems+=(gpusched); else echo "vs_slurm.sh: gpusched did not start" >&2; exit 1; fi
log "gpusched: gpuschedd pid $gs_pid on $gs_addr, $NODES agents UP"
if [[ -z $slurm_state ]]; then
  if slurm_start; then
    systems=(slurm gpusched)
    log "Slurm: slurmctld pid $sl_pid, $NODES slurmd idle, munged pid $munge_pid"
  else
    log "Slurm: set-up failed: $slurm_state"
    for pid in "${sl_nodes[@]}" $sl_pid $munge_pid; do kill "$pid" 2>/dev/null; done  # not to weigh on gpusched's rows
    slurm_state="set-up failed: $slurm_state; its column n/a"
  fi
else
  log "Slurm: $slurm_state"
fi
gs_version=$("$gs_bin/gpuschedd" --version 2>/dev/null | head -1)
gs_commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)

order=("${systems[@]}")
flip() { if ((${#order[@]} == 2)); then order=("${order[1]}" "${order[0]}"); fi; }
run_block() {  # NAME
  local sys
  for sys in "${order[@]}"; do
    log "$sys: $1"
    "block_$1" "$sys"
  done
  flip
}
run_block fresh
run_block sequential
run_block parallel
run_block pending
run_block array
run_block latency
uptime_after=$(uptime)
log "uptime after: $uptime_after"

# ---------------------------------------------------------------- table
rows=(1 2 3 4 5 6 7 8 8b 9 10 11 12)
declare -A label=(
  [1]="$N sequential held 1-GPU submits (submits/s)"
  [2]="$LOOPS parallel CLI loops x $((N / LOOPS)) held submits (submits/s)"
  [3]="$P held submits, $LOOPS loops (submits/s)"
  [4]="one job's status, $P pending (median ms)"
  [5]="node list (median ms)"
  [6]="one $A-task held array submit (ms)"
  [7]="controller CPU per held submit, row 1 (ms)"
  [8]="controller RSS, fresh start + 1 job (MiB)"
  [8b]="controller RSS, $P pending (MiB)"
  [9]="$NODES node daemons' RSS summed, idle (MiB)"
  [10]="$N held jobs released -> all ended (jobs/s)"
  [11]="$A-task array -> all ended (jobs/s)"
  [12]="idle submit -> command started (median ms of $LAT)"
)
declare -A higher_better=([1]=1 [2]=1 [3]=1 [10]=1 [11]=1)
cell() {  # SYS ROW
  local v=${val[$1:$2]:-}
  if [[ $1 == slurm && -n $slurm_state ]]; then
    [[ $slurm_state == *SKIPPED* ]] && echo SKIPPED || echo n/a
  elif [[ -z $v ]]; then echo n/a
  elif [[ $v == n/a ]]; then echo "n/a [${note[$1:$2]}]"
  else echo "$v"; fi
}
{
  echo "## gpusched vs Slurm, $NODES nodes x $GPUS fake GPUs each, loopback, one machine ($(nproc) CPUs)"
  echo
  echo "- counts: N=$N, P=$P, A=$A, $CALLS calls per median, $LAT latency jobs$( ((quick)) && echo ' (--quick)')"
  echo "- gpusched: $gs_version (repo at $gs_commit; binaries copied from $build, gpuschedd built $gs_built)"
  if [[ -n $slurm_state ]]; then echo "- Slurm: $slurm_state"
  else
    echo "- Slurm: $sl_version; $NODES slurmd -N nodeNN on one host (multiple-slurmd), one port each; private munged (auth/munge); gres/gpu File= links to /dev/null; cons_tres, linuxproc, task/none, no accounting; MaxJobCount=100000, MaxArraySize=100001, CPUs=16 per node via config_overrides, all else default${VS_SLURM_CONF_EXTRA:+; added: $(tr '\n' ' ' <<<"$VS_SLURM_CONF_EXTRA")}"
  fi
  echo "- uptime before: $uptime_before"
  echo "- uptime after:  $uptime_after"
  echo
  echo "| # | workload | Slurm | gpusched | ratio |"
  echo "|---|---|---:|---:|---:|"
  for r in "${rows[@]}"; do
    s=$(cell slurm "$r") g=$(cell gpusched "$r") ratio=-
    if [[ $s =~ ^[0-9.]+$ && $g =~ ^[0-9.]+$ ]]; then
      if [[ -n ${higher_better[$r]:-} ]]; then ratio=$(awk -v a="$g" -v b="$s" 'BEGIN {print (b > 0) ? sprintf("%.2f", a / b) : "-"}')
      else ratio=$(awk -v a="$s" -v b="$g" 'BEGIN {print (b > 0) ? sprintf("%.2f", a / b) : "-"}'); fi
    fi
    echo "| $r | ${label[$r]} | $s | $g | $ratio |"
  done
  echo
  echo "ratio > 1: gpusched better (rates gpusched/Slurm; times, CPU, memory Slurm/gpusched)."
  [[ -n $munge_ms ]] && echo "Row 7 counts slurmctld alone; munged, which Slurm's authentication goes through, used $munge_ms ms of CPU per submit more."
  echo "gpusched's CLI $gs_auth_note"
  echo "Row 12 is measured to the job's command creating a marker file (not to a RUNNING state); rows 10-11 poll the job list every 0.25 s."
  [[ " ${systems[*]} " == *" slurm "* && ${VS_SLURM_CONF_EXTRA:-} != *batch_sched_delay* ]] &&
    echo "Slurm runs with its default SchedulerParameters: a batch job may wait up to batch_sched_delay (3 s) to be scheduled, most of Slurm's row 12; VS_SLURM_CONF_EXTRA='SchedulerParameters=batch_sched_delay=0' measures without it."
  if ((${#notes[@]})); then
    echo
    for i in "${!notes[@]}"; do echo "[$((i + 1))] ${notes[$i]}"; done
  fi
}

# ---------------------------------------------------------------- stop (no job may outlive us)
for sys in "${systems[@]}"; do
  [[ $sys == slurm ]] && scancel --user="$me" >/dev/null 2>&1
  [[ $sys == gpusched ]] && ids_of "$W"/gpusched-* | xargs -r -n 1000 "$gs_bin/gpusched" --addr "$gs_cli_addr" cancel >/dev/null 2>&1
  wait_empty "$sys" 60 >/dev/null || log "$sys: $REPLY jobs still listed at the end"
done
exit 0
