#include "daemon/core/policy/placement_policy.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/core/policy/blind_policies.h"
#include "daemon/core/policy/mig_placement.h"
#include "daemon/core/policy/share_placement.h"
#include "daemon/core/policy/topology_policy.h"

namespace gpusched::core {

PlacementResult PlacementPolicy::Place(const ClusterState& cluster, const GangRequest& request) {
  if (request.shares_gpus()) return policy::PlaceShares(cluster, request, share_weighing_);
  if (request.wants_mig()) return policy::PlaceMigSlices(cluster, request);
  return PlaceWholeGpus(cluster, request);
}

std::vector<std::string> PlacementPolicyNames() { return {"topology", "best-fit", "first-fit", "spread"}; }

absl::StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(absl::string_view name) {
  if (name == "topology") return policy::MakeTopologyPolicy();
  if (name == "best-fit") return policy::MakeBestFitPolicy();
  if (name == "first-fit") return policy::MakeFirstFitPolicy();
  if (name == "spread") return policy::MakeSpreadPolicy();
  return absl::InvalidArgumentError(absl::StrCat("unknown placement policy \"", name,
                                                 "\" (known: ", absl::StrJoin(PlacementPolicyNames(), ", "), ")"));
}

}  // namespace gpusched::core
