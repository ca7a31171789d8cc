#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/core/power/pool_spec.h"
#include "daemon/sim/simulator.h"

namespace gpusched::sim {

// `gpuschedd simulate --pools FILE`: the pools over the cluster spec's nodes
// ([[pool]] tables as in gpuschedd.toml, without programs or shapes: every
// pool but a reserved one is elastic), and how the simulated programs
// behave, at the top level:
//   boot_delay = "5:00"              resume to agent registered
//   boot_failure_rate = 0.05         share of resume calls that fail
//   suspend_delay = "1:00"
//   static_cost_per_gpu_hour = 2.0   the price of nodes in no pool
//   seed = 1
// Mistakes name the file and line, as in gpuschedd.toml.
struct SimPools {
  std::vector<core::PoolSpec> pools;
  SimPower power;
};
absl::StatusOr<SimPools> ReadSimPoolsFile(const std::string& path);

}  // namespace gpusched::sim
