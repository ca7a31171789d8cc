#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/share_packing.h"

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

// Chooses the nodes and GPUs of one gang: all or nothing, whole GPUs, on up
// nodes, within the request's model/memory constraints. Policies differ only
// in which of the possible placements they pick; every placed allocation is
// annotated with the same estimate (policy/gang_estimate.h), so they can be
// compared. Place() may keep caches, hence not const; like the rest of the
// core, a policy belongs to one thread.
// How the gangs a preemption evicts are chosen (queue/preemption.h).
enum class PreemptionOrder {
  // The plan whose placement is best (fewest nodes, fastest ring), then the
  // least work lost.
  kBestPlacement,
  // Best-fit's compaction: nodes from least to most utilized, evicting the
  // lower-tier gangs there until the job fits.
  kLeastUtilizedNodes,
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual absl::string_view name() const = 0;
  // Whole GPUs by the policy's own rule; a job with a share of its GPUs by
  // PlaceShares (share_placement.h), whatever the policy.
  PlacementResult Place(const ClusterState& cluster, const GangRequest& request);
  virtual PreemptionOrder preemption_order() const { return PreemptionOrder::kBestPlacement; }
  // Whether it weighs the links between GPUs and nodes: one that does not
  // can honour --topology strict only for a job one node holds (it waits for
  // one node), so a strict gang over several nodes is refused at submit.
  virtual bool weighs_links() const { return true; }
  // How shares pick their GPUs (PlaceShares), whatever the policy; the core
  // renews the FGD task mix before each pass.
  void set_share_weighing(ShareWeighing weighing) { share_weighing_ = std::move(weighing); }
  const ShareWeighing& share_weighing() const { return share_weighing_; }

 protected:
  virtual PlacementResult PlaceWholeGpus(const ClusterState& cluster, const GangRequest& request) = 0;

 private:
  ShareWeighing share_weighing_;
};

// "topology" (the default), "best-fit", "first-fit" or "spread";
// InvalidArgument naming the known ones otherwise.
absl::StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(absl::string_view name);
std::vector<std::string> PlacementPolicyNames();
inline constexpr char kDefaultPlacementPolicy[] = "topology";

}  // namespace gpusched::core
