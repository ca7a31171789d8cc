#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/runtime_model.h"
#include "daemon/sim/trace.h"

namespace gpusched::sim {

// What the table's heading says about the run.
struct RunDescription {
  std::string trace_name;  // file name
  std::string queue;       // "" = all queues
  std::string cluster_name;
  std::string cluster_summary;
  RuntimeModel model;
  double time_limit_factor = 0;
  // How long a job that cannot be given a reservation lets smaller ones pass.
  absl::Duration head_blocks_after = absl::ZeroDuration();
  std::string job_topology;    // "prefer", "strict (wait 3600 s)", "any": what every job asked for
  bool multifactor = false;    // the daemon's ranking, or submission order
  std::string pools;           // "" = no elastic pools: no cost section
  double arrival_speedup = 1;  // SimulateOptions::arrival_speedup
  std::string preemption;      // demotion and checkpoints (SimulateOptions); "" = neither
  std::string share_packing;   // how shares pick their GPUs; "" = the trace has no shares
};

// The comparison table, policies side by side: a few heading lines, then one
// row per metric. Pure text, byte-for-byte the same for the same inputs.
std::string FormatComparison(const RunDescription& run, const Trace& trace, const std::vector<PolicyMetrics>& policies);

}  // namespace gpusched::sim
