#!/usr/bin/env bash
# Pod mixes made from the Alibaba openb default pod list, to check a packing
# policy beyond the mix it was tuned on (issue 18: "no worse than FGD on pod
# mixes with more sharing, more multi-GPU pods or model constraints"), and
# the workload-inflation experiment on each, policies side by side.
#
#   tests/bench/openb_mixes.sh [OUT_DIR]      (default /tmp/openb-mixes)
#
# The mixes are derived deterministically (no random draws), in the
# published format, so that others can rebuild them:
#   sharing    every fractional pod twice (61% of the GPU pods share a GPU,
#              against 44%);
#   multi-gpu  every multi-GPU pod ten times (10% of the GPU pods, against 1%);
#   gpu-spec   every third GPU pod limited to one model, the models taken in
#              turn roughly in proportion to the cluster's GPUs (G2 5 of 9).
# Then `gpuschedd simulate-sharing` on each, seeds 42-51, with POLICIES
# (default best-fit,fgd,fill-fgd). Prints one table per mix.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/openb-mixes}
policies=${POLICIES:-best-fit,fgd,fill-fgd}
traces=${GPUSCHED_TRACES:-../shared/traces}/alibaba-openb
gpuschedd=${GPUSCHEDD:-./build/daemon/gpuschedd}
nodes=$traces/openb_node_list_gpu_node.csv
pods=$traces/openb_pod_list_default.csv
for f in "$nodes" "$pods" "$gpuschedd"; do
  [[ -e $f ]] || { echo "openb_mixes: $f is missing" >&2; exit 1; }
done
mkdir -p "$out"

# Columns: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...
awk -F, -v OFS=, 'NR == 1 { print; next }
  { print } $4 == 1 && $5 < 1000 { $1 = $1 "-again"; print }' "$pods" >"$out/sharing.csv"
awk -F, -v OFS=, 'NR == 1 { print; next }
  { print } $4 > 1 { name = $1; for (k = 2; k <= 10; k++) { $1 = name "-" k; print } }' "$pods" >"$out/multi-gpu.csv"
awk -F, -v OFS=, 'BEGIN { split("G2 G2 G2 G2 G2 T4 P100 V100M32 G3", models, " ") }
  NR == 1 { print; next }
  $4 > 0 { if (gpu_pods++ % 3 == 0) $6 = models[(turn++ % 9) + 1] } { print }' "$pods" >"$out/gpu-spec.csv"

echo "openb_mixes: load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for mix in default sharing multi-gpu gpu-spec; do
  list=$out/$mix.csv
  [[ $mix == default ]] && list=$pods
  awk -F, 'NR > 1 { n++; if ($4 > 0) g++; if ($4 == 1 && $5 < 1000) s++; if ($4 > 1) m++; if ($6 != "") c++ }
    END { printf "\n== %s: %d pods, %d with GPUs (%.0f%% of them share a GPU, %.0f%% multi-GPU, %.0f%% limited to a model)\n",
          mix, n, g, 100 * s / g, 100 * m / g, 100 * c / g }' mix="$mix" "$list"
  "$gpuschedd" simulate-sharing --nodes "$nodes" --pods "$list" --policy "$policies" --out "$out/$mix"
done
