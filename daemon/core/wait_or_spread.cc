#include "daemon/core/wait_or_spread.h"

namespace gpusched::core {

std::optional<BetterPlacement> BetterByWaiting(ClusterState& cluster, PlacementPolicy& policy, uint64_t job_id,
                                               const GangRequest& request, const v1::Allocation& free_now,
                                               const SpreadCost& cost, absl::Time now,
                                               absl::FunctionRef<std::vector<ExpectedEnd>()> ends) {
  const double placed_bw = free_now.est_bus_bandwidth_gbps();
  if (request.total_gpus < 2 || placed_bw <= 0 || cost.comm_share <= 0 ||
      cost.expected_run == absl::InfiniteDuration()) {
    return std::nullopt;
  }
  GangRequest best = request;
  best.topology = v1::TOPOLOGY_MODE_STRICT;
  // The best placement is free now: nothing to wait for.
  if (policy.Place(cluster, best).placed()) return std::nullopt;
  std::optional<Reservation> later = PlanReservation(cluster, policy, job_id, best, ends());
  if (!later.has_value()) return std::nullopt;
  const double ideal_bw = later->allocation.est_bus_bandwidth_gbps();
  if (ideal_bw <= placed_bw) return std::nullopt;
  const double slowdown = 1 + cost.comm_share * (ideal_bw / placed_bw - 1);
  BetterPlacement better{*std::move(later), now + cost.expected_run * slowdown, absl::InfinitePast()};
  better.finish_waiting = std::max(now, better.reservation.start) + cost.expected_run;
  if (better.finish_waiting >= better.finish_now) return std::nullopt;
  return better;
}

}  // namespace gpusched::core
