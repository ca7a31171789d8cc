#include "daemon/core/backfill.h"

#include <algorithm>
#include <utility>

#include "daemon/core/released_jobs.h"

namespace gpusched::core {

std::optional<Reservation> PlanReservation(ClusterState& cluster, PlacementPolicy& policy, uint64_t job_id,
                                           const GangRequest& request, std::vector<ExpectedEnd> ends) {
  std::stable_sort(ends.begin(), ends.end(), [](const ExpectedEnd& a, const ExpectedEnd& b) { return a.end < b.end; });
  std::vector<ReleasedJobs::Job> jobs;
  jobs.reserve(ends.size());
  for (const ExpectedEnd& e : ends) jobs.push_back({e.job_id, e.allocation});
  ReleasedJobs released(cluster, std::move(jobs));
  auto placeable_after = [&](size_t count) -> std::optional<v1::Allocation> {
    released.SetFirst(count);
    PlacementResult result = policy.Place(cluster, request);
    if (!result.placed()) return std::nullopt;
    return result.allocation();
  };
  if (ends.empty() || !placeable_after(ends.size()).has_value()) return std::nullopt;
  size_t lo = 1, hi = ends.size();  // the answer is in [lo, hi]
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (placeable_after(mid).has_value()) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  std::optional<v1::Allocation> where = placeable_after(lo);
  if (!where.has_value()) return std::nullopt;
  return Reservation{job_id, ends[lo - 1].end, *std::move(where)};
}

ReservationHold::ReservationHold(ClusterState& cluster, const Reservation& reservation)
    : cluster_(cluster), reservation_(reservation) {
  Retake();
}

void ReservationHold::Drop() {
  cluster_.Release(kHolder, held_);
  held_.Clear();
}

void ReservationHold::Retake() {
  Drop();
  for (const v1::NodeAllocation& part : reservation_.allocation.nodes()) {
    const NodeSlot* slot = cluster_.Find(part.node());
    if (slot == nullptr) continue;
    v1::NodeAllocation* held = nullptr;
    auto held_part = [&] {
      if (held == nullptr) {
        held = held_.add_nodes();
        held->set_node(part.node());
      }
      return held;
    };
    for (int32_t index : part.gpu_indices()) {
      int pos = slot->PositionOf(index);
      if (pos < 0 || slot->gpu_owner[pos] != 0) continue;
      held_part()->add_gpu_indices(index);
    }
    // A MIG job's instances, those free now, likewise.
    for (const v1::MigSlice& mig : part.mig_slices()) {
      const int pos = slot->PositionOf(mig.gpu_index());
      const int k = pos < 0 ? -1 : slot->MigPosition(pos, mig.mig_index());
      if (k < 0 || k >= static_cast<int>(slot->mig_owner[pos].size()) || slot->mig_owner[pos][k] != 0) continue;
      *held_part()->add_mig_slices() = mig;
    }
  }
  if (!cluster_.Allocate(kHolder, held_).ok()) held_.Clear();
}

}  // namespace gpusched::core
