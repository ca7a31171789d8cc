#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"

namespace gpusched::core {

// Where a gang goes, or in plain words why it cannot go anywhere right now.
class PlacementResult {
 public:
  static PlacementResult Placed(v1::Allocation allocation) { return PlacementResult(std::move(allocation), ""); }
  static PlacementResult Unschedulable(std::string reason) { return PlacementResult({}, std::move(reason)); }

  bool placed() const { return reason_.empty(); }
  const v1::Allocation& allocation() const { return allocation_; }
  const std::string& reason() const { return reason_; }

 private:
  PlacementResult(v1::Allocation allocation, std::string reason)
      : allocation_(std::move(allocation)), reason_(std::move(reason)) {}
  v1::Allocation allocation_;
  std::string reason_;
};

// Whole free GPUs on up nodes, all or nothing. Best fit: among nodes that can
// take a part, the one with the fewest free GPUs goes first, so that whole
// nodes stay free for large gangs. Topology-aware placement replaces this.
PlacementResult PlaceGang(const ClusterState& cluster, const GangRequest& request);

// InvalidArgument when no node set of this cluster, even idle, could ever hold
// the gang ("never schedulable"). OK when it could, or when no node is known yet.
absl::Status CheckEverFits(const ClusterState& cluster, const GangRequest& request);

}  // namespace gpusched::core
