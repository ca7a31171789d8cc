#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/sim/simulator.h"

namespace gpusched::sim {

// Nearest-rank percentiles, as the traces' README uses.
struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
};
Distribution Summarize(std::vector<double> values);

// Job sizes the metrics are broken down by: all, 1, 2-4, 5-8, >8 GPUs, and
// last a share of one GPU (<1), which only traces of shared GPUs have.
inline constexpr int kSizeClasses = 6;
inline constexpr int kShareClass = 5;
absl::string_view SizeClassName(int size_class);
int SizeClassOf(int64_t gpus, int gpu_milli = 1000);  // 1..5

struct PolicyMetrics {
  std::string policy;
  int64_t jobs = 0;           // in the trace
  int64_t completed = 0;      // ended COMPLETED
  int64_t refused = 0;        // never schedulable on this cluster (submit refused)
  int64_t never_started = 0;  // still pending when nothing else could happen
  int64_t timed_out = 0;      // stopped at their time limit
  // Over completed jobs, in seconds; index: size class (0 = all).
  std::array<Distribution, kSizeClasses> jct;
  std::array<Distribution, kSizeClasses> wait;
  double makespan_s = 0;   // first submission to last end
  double utilization = 0;  // allocated GPU-time / (GPUs x makespan)
  // Fragmentation: GPU-time left free while jobs waited (the head of the
  // queue could not be placed on them), and its share of all GPU-time in
  // those periods.
  double free_while_waiting_gpu_h = 0;
  double free_while_waiting_share = 0;
  double waiting_time_share = 0;  // of the makespan, with at least one job waiting
  // Placement quality, over multi-GPU jobs that started.
  int64_t multi_gpu_jobs = 0;
  double in_one_node = 0;           // share
  double in_one_nvlink_domain = 0;  // one node whose ring is all NVLink, or a multi-node NVLink domain
  double in_one_leaf = 0;           // one node, one NVLink domain or one leaf switch
  double bw_vs_ideal = 0;           // mean of placed / ideal bus bandwidth
  double mean_slowdown = 0;         // mean runtime factor
  double slowdown_gpu_h = 0;        // GPU-time added by slowdowns
  // What the cluster cost, over the makespan: GPU-hours of nodes that were
  // on (not powered down), of them held by jobs, the idle share of the paid
  // ones, and their price (UsageSample::cost_per_hour).
  double paid_gpu_h = 0;
  double used_gpu_h = 0;
  double waste = 0;
  double cost = 0;
  int64_t spot_interruptions = 0;  // SimResult's
  int64_t requeues = 0;
};

PolicyMetrics ComputeMetrics(const SimResult& result);

// Mean allocated share of the GPUs and mean number of waiting jobs in each
// `bucket_s` of virtual time, from 0 to the end of the makespan.
struct UsageBucket {
  double start_s = 0;
  double utilization = 0;
  double waiting_jobs = 0;
};
std::vector<UsageBucket> UsageOverTime(const SimResult& result, double bucket_s);

}  // namespace gpusched::sim
