#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/sim/inflation.h"

namespace gpusched::sim {

struct SimulateSharingOptions {
  std::string nodes_path;     // openb node list
  std::string pods_path;      // openb pod list: what is sampled, and the task mix FGD expects
  std::string arrivals_path;  // optional: replay this pod list in its order instead of sampling
  std::vector<std::string> policies = core::sharing::AllPackingPolicyNames();
  std::string seeds = "42-51";  // "A-B" or "A,B,C"
  InflationOptions inflation;
  std::string out_dir;  // "" = no files
};

// `gpuschedd simulate-sharing`: the workload-inflation experiment once per
// policy and seed, side by side; prints the table on `out` and, with an
// output folder, writes summary.csv and one placement log per policy and
// seed (placements-<policy>-seed<N>.csv, or placements-<policy>.csv for
// given arrivals): seq,pod,source,node,gpus with gpus "index:milli;...".
// Wall time per policy goes to `err`.
absl::Status RunSimulateSharing(const SimulateSharingOptions& options, std::ostream& out, std::ostream& err);

// "42-51" or "1,5,9" into seeds; InvalidArgument naming what is wrong.
absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& spec);

}  // namespace gpusched::sim
