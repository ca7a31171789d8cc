#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/core/policy/share_packing.h"
#include "daemon/sim/runtime_model.h"
#include "daemon/sim/trace_file.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::sim {

struct SimulateOptions {
  std::string trace_path;
  std::string cluster_path;
  std::vector<std::string> policies = {"topology"};
  std::string queue;  // "" = every queue of the trace
  TraceFormat format = TraceFormat::kAuto;
  RuntimeModel model;
  size_t queue_depth = 500;
  v1::TopologyMode topology_mode = v1::TOPOLOGY_MODE_PREFER;
  int64_t topology_wait_s = 0;
  double time_limit_factor = 0;      // SimOptions::time_limit_factor
  bool multifactor = true;           // SimOptions::multifactor (--order)
  double head_blocks_after_h = -1;   // SimOptions::head_blocks_after in hours; negative: the daemon's default
  double demote_after_h = 0;         // SimOptions::demote_after in hours; 0 = off
  bool demote_flat = false;          // !SimOptions::demote_after_per_gpu
  double checkpoint_restore_s = -1;  // SimOptions::checkpoint_restore; negative: requeued jobs start over
  int64_t limit = 0;                 // replay only the first N selected jobs; 0 = all
  // Arrivals this many times as fast (submit times divided by it), run
  // times as they are: the offered load grows as much.
  double arrival_speedup = 1;
  std::string out_dir;                                              // "" = no files
  std::string pools_path;                                           // "" = no elastic pools (sim/pools_file.h)
  core::SharePacking share_packing = core::SharePacking::kBestFit;  // SimOptions::share_packing
};

// `gpuschedd simulate`: loads the trace and the cluster, replays the trace
// once per policy, prints the comparison table on `out` and, with an output
// folder, writes the CSV files (and PNGs when gnuplot is installed). `out`
// and the files are deterministic; progress, wall time, CPU time and peak
// memory per policy go to `err`, since they are not.
absl::Status RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

// The runtime model and the metrics in words, for `gpuschedd simulate --help`.
std::string SimulateHelpFooter();

}  // namespace gpusched::sim
