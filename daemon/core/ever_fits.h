#pragma once

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core {

// InvalidArgument when no node set of this cluster, even idle, could ever hold
// the gang ("never schedulable"). OK when it could, or when no node is known yet.
absl::Status CheckEverFits(const ClusterState& cluster, const GangRequest& request);

// CheckEverFits, remembered per request until the cluster's fit_epoch
// changes: the check reads every node, and a submit of a shape seen before
// (most are) then costs a lookup. Holds at most kMaxAnswers at a time.
class EverFitsCache {
 public:
  absl::Status Check(const ClusterState& cluster, const GangRequest& request);

 private:
  static constexpr size_t kMaxAnswers = 4096;
  uint64_t epoch_ = 0;
  absl::flat_hash_map<GangRequest, absl::Status> answers_;
};

}  // namespace gpusched::core
