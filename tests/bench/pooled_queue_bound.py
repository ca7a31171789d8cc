#!/usr/bin/env python3
"""What a queue order could reach on a trace if placement cost nothing.

Replays one queue of a trace (the CSV of shared/traces) on a pool of GPUs with
no node boundaries (a gang takes any free GPUs), where stopping and resuming a
job is free and instant, and ranks the jobs by one rule, re-ranked at every
arrival and end (and at least every `--rerank-h`):

  srpt     shortest remaining run first, knowing every job's run time exactly
           (the trace's duration); a gang's remaining time is weighed by
           --gang-weight (below 1 favours gangs)
  las      least attained service first, as a queue's demote_after per GPU:
           jobs that have run less than --demote-after-h x their GPUs first,
           in submission order, then the others in submission order
  gittins  the Gittins index of each job's attained service, from the run
           times of the jobs of its size class that ended before (the last
           --history of them): what the trace tells an online scheduler when it
           carries no user or job name, as ITP's does not. Gangs weighed as in
           srpt.
  limits   shortest remaining time limit first, as if users gave limits: each
           job's limit is its run time times a factor drawn log-uniformly from
           [1, --limit-factor-max] (seeded by --seed). Gangs weighed as in srpt.

Every job runs its trace duration (no runtime model). Without node boundaries,
checkpoint costs or preemption churn, a rule does better here than in
`gpuschedd simulate`: a reference for what a rule could reach, not a bound
that the simulator must meet.

    tests/bench/pooled_queue_bound.py --trace shared/traces/microsoft_itp_2021.csv \\
        --queue cluster08 --gpus 96 --rule srpt --gang-weight 0.1

Prints the mean job completion time and the means by size class, in hours.
"""
import argparse
import bisect
import csv
import math
import random
import sys


def size_class(gpus):
    return "1" if gpus == 1 else "2-4" if gpus <= 4 else "5-8" if gpus <= 8 else ">8"


def history_class(gpus):  # as the daemon's RuntimeHistory groups sizes
    return gpus if gpus <= 2 else 4 if gpus <= 4 else 1 << (gpus - 1).bit_length()


def read_trace(path, queue):
    jobs = []
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row["queue"] != queue or not row["duration_s"] or not row["num_gpus"]:
                continue
            try:
                submit, gpus, run = float(row["submit_time_s"]), int(row["num_gpus"]), float(row["duration_s"])
            except ValueError as e:
                sys.exit(f"{path}:{line}: {e}")
            if gpus > 0:
                jobs.append((submit, gpus, run))
    jobs.sort()
    return jobs


def gittins_index(tail, attained):
    """max over quanta of P(ends within it) / expected service spent in it,
    for a job that has run `attained`, over the runs `tail` longer than that."""
    m = len(tail)
    best, spent = 0.0, 0.0
    for k, run in enumerate(tail):
        spent += run - attained
        expected = (spent + (m - k - 1) * (run - attained)) / m
        if expected > 0:
            best = max(best, (k + 1) / m / expected)
    return best


def replay(jobs, args):
    n = len(jobs)
    draw = random.Random(args.seed)
    limit = [run * math.exp(draw.uniform(0, math.log(args.limit_factor_max))) for _, _, run in jobs]
    remaining = [run for _, _, run in jobs]
    attained = [0.0] * n
    end = [0.0] * n
    ended_runs = {}  # history class -> the last --history run times, and sorted
    cache = {}

    def weight(j):
        return args.gang_weight if jobs[j][1] > 1 else 1.0

    def gittins(j):
        runs = ended_runs.get(history_class(jobs[j][1]), ([], []))[1]
        key = (j, len(runs), runs[-1] if runs else 0, attained[j])
        if key not in cache:
            tail = runs[bisect.bisect_right(runs, attained[j]):]
            floor = 1.0 / max(attained[j], 60.0)  # no run seen this long: as long again
            cache[key] = gittins_index(tail, attained[j]) if len(runs) >= 3 and tail else floor
        return cache[key]

    def rank(j):
        submit, gpus, _ = jobs[j]
        if args.rule == "srpt":
            return (remaining[j] * weight(j), submit)
        if args.rule == "las":
            return (attained[j] >= args.demote_after_h * 3600 * gpus, submit)
        if args.rule == "limits":
            return (max(limit[j] - attained[j], 0.0) * weight(j), submit)
        return (-gittins(j) / gpus / weight(j), submit)

    now, arrived, active = 0.0, 0, set()
    while arrived < n or active:
        while arrived < n and jobs[arrived][0] <= now:
            active.add(arrived)
            arrived += 1
        free, running = args.gpus, []
        for j in sorted(active, key=rank):
            if jobs[j][1] <= free:
                free -= jobs[j][1]
                running.append(j)
        step = (jobs[arrived][0] if arrived < n else float("inf")) - now
        for j in running:
            step = min(step, remaining[j], args.rerank_h * 3600)
            if args.rule == "las" and attained[j] < args.demote_after_h * 3600 * jobs[j][1]:
                step = min(step, args.demote_after_h * 3600 * jobs[j][1] - attained[j])
        if not running and arrived >= n:
            sys.exit(f"jobs larger than the pool ({args.gpus} GPUs) can never run")
        now += step
        for j in running:
            remaining[j] -= step
            attained[j] += step
            if remaining[j] <= 1e-6:
                end[j] = now
                active.discard(j)
                recent, ordered = ended_runs.setdefault(history_class(jobs[j][1]), ([], []))
                recent.append(jobs[j][2])
                if len(recent) > args.history:
                    ordered.remove(recent.pop(0))
                bisect.insort(ordered, jobs[j][2])
    return end


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--gpus", type=int, required=True, help="GPUs in the pool")
    p.add_argument("--rule", choices=["srpt", "las", "gittins", "limits"], required=True)
    p.add_argument("--gang-weight", type=float, default=1.0)
    p.add_argument("--demote-after-h", type=float, default=8.0)
    p.add_argument("--history", type=int, default=256)
    p.add_argument("--rerank-h", type=float, default=1.0)
    p.add_argument("--limit-factor-max", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    if args.limit_factor_max < 1:
        sys.exit(f"--limit-factor-max {args.limit_factor_max}: a limit is at least the run time (1 or more)")
    jobs = read_trace(args.trace, args.queue)
    if not jobs:
        sys.exit(f"{args.trace}: no jobs of queue {args.queue}")
    end = replay(jobs, args)
    classes = {}
    for (submit, gpus, _), done in zip(jobs, end):
        classes.setdefault(size_class(gpus), []).append(done - submit)
    total = sum(sum(v) for v in classes.values())
    print(f"{args.queue} {args.rule}: {len(jobs)} jobs, mean JCT {total / len(jobs) / 3600:.2f} h; " +
          ", ".join(f"{c} GPU {sum(v) / len(v) / 3600:.2f} h" for c, v in sorted(classes.items())))


if __name__ == "__main__":
    main()
