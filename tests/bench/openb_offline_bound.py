#!/usr/bin/env python3
"""How little a packer that knew the future could leave unallocated.

For each placement log that `gpuschedd simulate-sharing --out DIR` wrote, takes
the pods that arrived before the request reached 100% of the cluster's GPUs
(the experiment's measuring point) and packs them offline: every GPU request
at once, largest first, each into the GPU it fills tightest (best-fit
decreasing). It ignores CPU, memory, GPU models and node boundaries (a pod on
several GPUs may take them anywhere), so it can only pack better than a real
placement could in those respects; it is not proven optimal. What it leaves
unallocated is a reference for the online policies' figure, not a bound any
of them must reach.

    tests/bench/openb_offline_bound.py NODES.csv PODS.csv DIR/placements-POLICY-seed*.csv

NODES.csv and PODS.csv are the files the run was given (--nodes, --pods).
Prints one line per log and the mean.
"""
import bisect
import csv
import sys


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    nodes_csv, pods_csv, logs = argv[1], argv[2], argv[3:]
    with open(nodes_csv, newline="") as f:
        gpus = sum(int(row["gpu"]) for row in csv.DictReader(f))
    with open(pods_csv, newline="") as f:
        pods = {row["name"]: (int(row["num_gpu"]), int(row["gpu_milli"])) for row in csv.DictReader(f)}
    capacity = gpus * 1000
    results = []
    for log in logs:
        arrived = 0
        requests = []
        with open(log, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                if row["source"] not in pods:
                    sys.exit(f"{log}:{line}: pod {row['source']} is not in {pods_csv}")
                num_gpu, milli = pods[row["source"]]
                if arrived + num_gpu * milli >= capacity:
                    break
                arrived += num_gpu * milli
                requests += [milli] * num_gpu
        requests.sort(reverse=True)
        free = [1000] * gpus  # kept sorted: best fit is the first GPU with enough free
        unplaced = 0
        for milli in requests:
            i = bisect.bisect_left(free, milli)
            if i == len(free):
                unplaced += milli
                continue
            left = free.pop(i) - milli
            bisect.insort(free, left)
        unallocated = 100.0 * sum(free) / capacity
        results.append(unallocated)
        print(f"{log}: {unallocated:.2f}% unallocated offline ({100.0 * unplaced / capacity:.2f}% of the "
              f"capacity asked for by requests left out)")
    print(f"mean over {len(results)} logs: {sum(results) / len(results):.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
