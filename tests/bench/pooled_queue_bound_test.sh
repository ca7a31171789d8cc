#!/bin/bash
# pooled_queue_bound.py on traces small enough to replay by hand.
set -euo pipefail
bound="$(dirname "$0")/pooled_queue_bound.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect() {  # expect WANT ARGS...: the line printed contains WANT
  local want=$1 got
  shift
  got=$(python3 "$bound" "$@" 2>&1) || true
  if [[ $got != *"$want"* ]]; then
    echo "FAIL: $*"
    echo "  want: $want"
    echo "  got:  $got"
    fail=1
  fi
}

# Two GPUs. A: 1 GPU for 100 h; B: 2 GPUs for 10 h, both at 0; C: 1 GPU for
# 20 h at 5 h. Shortest remaining first: B 0-10 h, then C 10-30 h beside A
# 10-110 h: 10, 25 and 110 h, mean 48.33 h. B's remaining weighed 20x (200 h)
# puts it last: A 0-100 h, C 5-25 h, B 100-110 h: 100, 20 and 110 h.
cat >"$dir/two.csv" <<'CSV'
job_id,submit_time_s,num_gpus,duration_s,user,queue,status
A,0,1,360000,,q,
B,0,2,36000,,q,
C,18000,1,72000,,q,
x,0,1,10,,other,
CSV
expect "q srpt: 3 jobs, mean JCT 48.33 h; 1 GPU 67.50 h, 2-4 GPU 10.00 h" \
  --trace "$dir/two.csv" --queue q --gpus 2 --rule srpt
expect "q srpt: 3 jobs, mean JCT 76.67 h; 1 GPU 60.00 h, 2-4 GPU 110.00 h" \
  --trace "$dir/two.csv" --queue q --gpus 2 --rule srpt --gang-weight 20

# One GPU. A: 10 h at 0; C: 20 h at 2 h. Shortest remaining first keeps A
# (8 h left) over C: 10 and 28 h. Least attained service, 1 h: A is demoted
# at 1 h, C runs 2-3 h until it is too, then A (submitted first) 3-11 h and
# C 11-30 h: 11 and 28 h.
cat >"$dir/one.csv" <<'CSV'
job_id,submit_time_s,num_gpus,duration_s,user,queue,status
A,0,1,36000,,q,
C,7200,1,72000,,q,
CSV
expect "mean JCT 19.00 h" --trace "$dir/one.csv" --queue q --gpus 1 --rule srpt
# Limits equal to the run times order as shortest remaining first.
expect "q limits: 3 jobs, mean JCT 48.33 h" --trace "$dir/two.csv" --queue q --gpus 2 --rule limits
expect "a limit is at least the run time" --trace "$dir/one.csv" --queue q --gpus 1 --rule limits \
  --limit-factor-max 0.5
expect "mean JCT 19.50 h" --trace "$dir/one.csv" --queue q --gpus 1 --rule las --demote-after-h 1

# Mistakes are named.
expect "no jobs of queue nosuch" --trace "$dir/one.csv" --queue nosuch --gpus 1 --rule srpt
expect "larger than the pool (1 GPUs)" --trace "$dir/two.csv" --queue q --gpus 1 --rule srpt
exit $fail
