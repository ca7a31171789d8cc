#include "daemon/sim/runtime_model.h"

#include <algorithm>

namespace gpusched::sim {

double RuntimeModel::Factor(int64_t gpus, double ideal_bw, double placed_bw) const {
  if (!slowdown || gpus < 2 || ideal_bw <= 0 || placed_bw <= 0) return 1.0;
  const double lost = std::max(1.0, ideal_bw / placed_bw);
  return 1.0 + comm_share * (lost - 1.0);
}

IdealBandwidth::IdealBandwidth(const std::vector<v1::NodeInfo>& nodes)
    : topology_(*core::MakePlacementPolicy("topology")) {
  for (const v1::NodeInfo& node : nodes) {
    idle_.UpsertNode(node);
    idle_.SetState(node.name(), v1::NODE_STATE_UP, "");
  }
}

double IdealBandwidth::For(core::GangRequest request) {
  // The ideal is the best placement whatever the job asked for: a job that
  // said "any" still runs slower on a worse one.
  request.topology = v1::TOPOLOGY_MODE_PREFER;
  auto key =
      std::tuple(request.total_gpus, request.nodes, request.gpus_per_node, request.gpu_model, request.gpu_memory_mb);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  core::PlacementResult placed = topology_->Place(idle_, request);
  const double bw = placed.placed() ? placed.allocation().est_bus_bandwidth_gbps() : 0.0;
  cache_.emplace(std::move(key), bw);
  return bw;
}

}  // namespace gpusched::sim
