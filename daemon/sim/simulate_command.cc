#include "daemon/sim/simulate_command.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/openb_cluster.h"
#include "daemon/sim/pools_file.h"
#include "daemon/sim/report.h"
#include "daemon/sim/report_files.h"
#include "daemon/sim/resource_usage.h"
#include "daemon/sim/sim_cluster.h"
#include "daemon/sim/simulator.h"

namespace gpusched::sim {
namespace {

// A cluster spec in TOML, or the openb node list.
absl::StatusOr<SimCluster> LoadCluster(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read cluster spec ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (LooksLikeOpenbNodeList(text.str())) {
    auto nodes = ParseOpenbNodes(text.str());
    if (!nodes.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", nodes.status().message()));
    auto cluster = BuildOpenbCluster(*nodes, std::filesystem::path(path).stem().string());
    if (!cluster.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", cluster.status().message()));
    return cluster;
  }
  auto spec = ParseClusterSpec(text.str());
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", spec.status().message()));
  if (spec->name.empty()) spec->name = std::filesystem::path(path).stem().string();
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  auto cluster = BuildCluster(*spec, base_dir);
  if (!cluster.ok()) return absl::Status(cluster.status().code(), absl::StrCat(path, ": ", cluster.status().message()));
  return cluster;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return absl::StrCat(a, " ", b, " ", c);
}

}  // namespace

absl::Status RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  for (const std::string& policy : options.policies) {
    if (auto p = core::MakePlacementPolicy(policy); !p.ok()) return p.status();
  }
  TraceOptions trace_options;
  trace_options.queue = options.queue;
  auto trace = LoadTrace(options.trace_path, options.format, trace_options);
  if (!trace.ok()) return trace.status();
  for (const std::string& warning : trace->warnings)
    err << "simulate: warning: " << options.trace_path << ": " << warning << "\n";
  if (options.limit > 0 && static_cast<int64_t>(trace->jobs.size()) > options.limit) {
    trace->jobs.resize(static_cast<size_t>(options.limit));
  }
  if (options.arrival_speedup != 1) {
    for (TraceJob& job : trace->jobs) {
      job.submit_s = std::llround(static_cast<double>(job.submit_s) / options.arrival_speedup);
    }
  }
  auto cluster = LoadCluster(options.cluster_path);
  if (!cluster.ok()) return cluster.status();
  err << "simulate: " << trace->jobs.size() << " jobs on " << cluster->summary << "; load average " << LoadAverage()
      << "\n";

  // Given in hours, else the daemon's own default.
  const absl::Duration head_blocks_after = options.head_blocks_after_h >= 0
                                               ? absl::Seconds(static_cast<int64_t>(options.head_blocks_after_h * 3600))
                                               : core::CoreOptions{}.head_blocks_after;
  SimPools pools;
  if (!options.pools_path.empty()) {
    auto read = ReadSimPoolsFile(options.pools_path);
    if (!read.ok()) return read.status();
    pools = *std::move(read);
  }
  const absl::Duration demote_after = absl::Seconds(static_cast<int64_t>(options.demote_after_h * 3600));
  std::vector<SimResult> results;
  std::vector<PolicyMetrics> metrics;
  for (const std::string& policy : options.policies) {
    SimOptions sim;
    sim.policy = policy;
    sim.model = options.model;
    sim.queue_depth = options.queue_depth;
    sim.head_blocks_after = head_blocks_after;
    sim.topology_mode = options.topology_mode;
    sim.topology_wait_s = options.topology_wait_s;
    sim.time_limit_factor = options.time_limit_factor;
    sim.multifactor = options.multifactor;
    sim.pools = pools.pools;
    sim.power = pools.power;
    sim.share_packing = options.share_packing;
    sim.demote_after = demote_after;
    sim.demote_after_per_gpu = !options.demote_flat;
    if (options.checkpoint_restore_s >= 0) sim.checkpoint_restore = absl::Seconds(options.checkpoint_restore_s);
    const bool fresh_peak = ResetPeakRss();
    const absl::Time wall_start = absl::Now();
    const double cpu_start = CpuSeconds();
    auto result = Simulate(*trace, *cluster, sim);
    if (!result.ok()) return result.status();
    const double wall = absl::ToDoubleSeconds(absl::Now() - wall_start);
    err << absl::StrFormat("simulate: %-10s %8.1f s wall, %8.1f s CPU, peak RSS %lld MiB%s, %lld passes\n", policy,
                           wall, CpuSeconds() - cpu_start, static_cast<long long>(PeakRssKib() / 1024),
                           fresh_peak ? "" : " (process peak)", static_cast<long long>(result->passes));
    metrics.push_back(ComputeMetrics(*result));
    results.push_back(*std::move(result));
  }

  RunDescription run;
  run.trace_name = std::filesystem::path(options.trace_path).filename().string();
  run.queue = options.queue;
  run.cluster_name = cluster->name;
  run.cluster_summary = cluster->summary;
  run.model = options.model;
  run.time_limit_factor = options.time_limit_factor;
  run.head_blocks_after = head_blocks_after;
  run.multifactor = options.multifactor;
  run.arrival_speedup = options.arrival_speedup;
  if (demote_after > absl::ZeroDuration()) {
    run.preemption = absl::StrCat("least attained service first: demoted after ", absl::FormatDuration(demote_after),
                                  options.demote_flat ? " run" : " run times its GPUs");
  }
  if (options.checkpoint_restore_s >= 0) {
    absl::StrAppend(&run.preemption, run.preemption.empty() ? "" : "; ",
                    "requeued jobs resume from where they stopped after ", options.checkpoint_restore_s,
                    " s restoring");
  }
  if (std::any_of(trace->jobs.begin(), trace->jobs.end(), [](const TraceJob& j) { return j.gpu_milli < 1000; })) {
    run.share_packing = std::string(core::SharePackingName(options.share_packing));
  }
  if (!options.pools_path.empty()) {
    run.pools = absl::StrCat(std::filesystem::path(options.pools_path).filename().string(), ": ", pools.pools.size(),
                             " pools, boot ", absl::FormatDuration(pools.power.boot_delay), ", ",
                             absl::StrFormat("%.1f%%", 100 * pools.power.boot_failure_rate), " of boots fail");
    if (pools.power.spot_interruptions_per_node_hour > 0) {
      absl::StrAppend(&run.pools, ", spot taken back ", pools.power.spot_interruptions_per_node_hour,
                      " times per node-hour at ", absl::FormatDuration(pools.power.spot_notice), " notice");
    }
  }
  switch (options.topology_mode) {
    case v1::TOPOLOGY_MODE_STRICT:
      run.job_topology = options.topology_wait_s > 0
                             ? absl::StrCat("strict, relaxed after ", options.topology_wait_s, " s")
                             : "strict (waits for the idle cluster's best placement)";
      break;
    case v1::TOPOLOGY_MODE_ANY: run.job_topology = "any"; break;
    default: run.job_topology = "prefer (the best placement free at the time)"; break;
  }
  out << FormatComparison(run, *trace, metrics) << std::flush;

  if (!options.out_dir.empty()) {
    auto written = WriteReportFiles(options.out_dir, results, metrics);
    if (!written.ok()) return written.status();
    const bool any_completed =
        std::any_of(metrics.begin(), metrics.end(), [](const PolicyMetrics& m) { return m.completed > 0; });
    // With no job completed the CDF has no points, and gnuplot fails on it.
    absl::StatusOr<bool> rendered = any_completed ? RenderPlots(options.out_dir) : absl::StatusOr<bool>(false);
    if (!rendered.ok()) return rendered.status();
    err << "simulate: wrote " << absl::StrJoin(*written, ", ") << " to " << options.out_dir
        << (*rendered        ? " and rendered jct_cdf.png, utilization.png, waiting.png"
            : !any_completed ? " (no job completed: nothing to plot, no PNGs)"
                             : " (gnuplot not found: no PNGs; run `gnuplot plots.gp` there later)")
        << "\n";
  }
  return absl::OkStatus();
}

std::string SimulateHelpFooter() {
  return absl::StrCat(
      "Replays a job trace through the daemon's scheduling core (same code as `serve`) on a virtual clock, with\n"
      "simulated agents: no sockets, no processes, no database. Same inputs, same output, byte for byte\n"
      "(stdout and --out files; timings and memory go to stderr).\n\n"
      "Traces: the CSV of shared/traces (job_id,submit_time_s,num_gpus,duration_s,user,queue,status) or a Slurm\n"
      "`sacct --parsable2` export (JobID, Submit, Elapsed or Start+End, AllocTRES or ReqTRES gres/gpu=N; User,\n"
      "Partition, State if present), or the Alibaba openb pod list (shared/traces/alibaba-openb: a job per pod\n"
      "with GPUs, from creation_time for deletion_time - scheduled_time, asking gpu_milli of each GPU; --cluster\n"
      "then takes the openb node list, every GPU time-sliced). Rows without a duration or without GPUs are\n"
      "skipped and counted.\n\n"
      "Runtime model: a trace's duration is the job's run time at an ideal placement. A multi-GPU job placed\n"
      "worse runs\n"
      "    duration x (1 + c x (ideal_bw / placed_bw - 1))\n"
      "where placed_bw is the allocation's estimated bus bandwidth, ideal_bw what the topology policy estimates\n"
      "for the same request on the idle cluster, and c (--comm-share, default ",
      absl::StrFormat("%.1f", RuntimeModel::kDefaultCommShare),
      ") the share of the run time spent in\n"
      "communication that compute does not hide (arXiv:2507.03114 measures 10.2% on average, 26.6% at most, for\n"
      "collectives not overlapped at all on 4-GPU nodes). 1-GPU jobs never slow down; --no-slowdown turns it off.\n\n"
      "Queue: the core's own ranking (--order multifactor, the daemon's default: short work first by run\n"
      "times the core learns from the jobs that end, fair share, age) or submission order (--order fifo), and\n"
      "EASY backfill. Traces carry no time limits: reservations are planned from the learned run times, or\n"
      "from --time-limit-factor F x each job's trace duration (a job slowed past it ends TIMEOUT). The\n"
      "starvation bound --head-blocks-after-h (the daemon's default 38; a gang's is x (nodes / 4)^2, at most x4):\n"
      "a multi-node gang that has waited its bound goes first and gets the reservation, which jobs smaller than\n"
      "a node may use until it has waited twice its bound; a job no reservation can be planned for lets smaller\n"
      "ones pass it that long, then holds them back. With the slowdown model on, a multi-GPU job waits for a\n"
      "better placement when that finishes it earlier than spreading now. --head-blocks-after-h 0 with\n"
      "--order fifo is strict FIFO; --time-limit-factor 1 with --order fifo is EASY with exact limits.\n\n"
      "Metrics per policy: JCT and queueing delay (mean, p50, p95, p99; all jobs and by size 1, 2-4, 5-8, >8\n"
      "GPUs), makespan, GPU utilization, fragmentation (GPU-hours left free while jobs waited), placement\n"
      "quality (multi-GPU jobs in one node / NVLink domain / leaf; estimated bus bandwidth vs ideal).\n\n"
      "Cluster specs: see daemon/sim/clusters/*.toml.");
}

}  // namespace gpusched::sim
