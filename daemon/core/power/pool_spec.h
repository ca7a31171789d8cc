#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// How a pool's nodes are paid for. Resumes prefer them in this order:
// reserved capacity is paid whether used or not, spot is cheap but can be
// taken back, on-demand is the dearest.
enum class PoolClass { kReserved = 0, kSpot = 1, kOnDemand = 2 };

absl::string_view PoolClassName(PoolClass pool_class);  // "reserved", "spot", "on-demand"

// One [[pool]] of gpuschedd.toml (daemon/config/pool_settings.h reads it):
// nodes that the daemon may power up and down with the operator's programs.
struct PoolSpec {
  std::string name;
  PoolClass pool_class = PoolClass::kOnDemand;
  double cost_per_gpu_hour = 0;
  std::vector<std::string> nodes;  // expanded from the pool's hostlist, in file order
  int min_nodes = 0;               // kept up even when idle
  int max_nodes = 0;               // up or booting at once
  // Empty programs: the pool is static (its nodes are never powered up or
  // down by the daemon). Reserved pools are never powered down.
  std::string resume_program;
  std::string suspend_program;
  absl::Duration resume_timeout = absl::Minutes(10);  // program run + agent registered with its GPUs
  absl::Duration suspend_timeout = absl::Minutes(5);  // program run
  absl::Duration idle_before_suspend = absl::Minutes(10);
  int resumes_per_minute = 0;   // nodes; 0 = no limit. A gang's nodes always go together.
  int suspends_per_minute = 0;  // nodes; 0 = no limit
  // Scaling on measured demand (power/headroom.h): keep this share of the
  // peak GPU demand of the last demand_window free on nodes that are on
  // (0: only the jobs waiting now resume nodes).
  double headroom = 0;
  // And keep enough GPUs on that the peak of GPUs in use over the window
  // is at most this share of them (0: off), as a target-tracking
  // autoscaler does: load that grows finds room before it queues.
  double target_utilization = 0;
  absl::Duration demand_window = absl::Minutes(5);
  // What a node of the pool that never registered is taken to be (GPUs,
  // CPUs, memory, labels), so that placement can count it before it boots.
  // Once its agent registered, the node as registered is kept instead.
  v1::NodeInfo shape;

  bool elastic() const { return !resume_program.empty(); }
  bool may_suspend() const { return !suspend_program.empty() && pool_class != PoolClass::kReserved; }
};

// The NodeInfo a never-registered node `name` of `pool` is placed as.
v1::NodeInfo ShapedNode(const PoolSpec& pool, const std::string& name);

}  // namespace gpusched::core
