#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core {

// EASY backfill: the first job in queue order that cannot start gets a
// reservation — a start time and concrete GPUs — computed from when running
// jobs must end (their time limits). Jobs behind it may start now only if
// they cannot delay it: they end (by their own limit) before the reservation
// starts, or they stay off its GPUs. One reservation per pass, as in the
// EASY scheme; jobs without a time limit never count as ending.

// A placed job and the latest time it will have let go of its GPUs.
struct ExpectedEnd {
  absl::Time end;
  uint64_t job_id = 0;
  const v1::Allocation* allocation = nullptr;
};

struct Reservation {
  uint64_t job_id = 0;
  absl::Time start;
  v1::Allocation allocation;
};

// When and where `request` (job `job_id`) could start if the jobs in `ends`
// let go in time order: the shortest prefix whose release lets `policy`
// place it (found by bisection: freeing more never makes a placement
// impossible). nullopt when even all of them are not enough. `cluster` is
// changed while searching and left as it was.
std::optional<Reservation> PlanReservation(ClusterState& cluster, PlacementPolicy& policy, uint64_t job_id,
                                           const GangRequest& request, std::vector<ExpectedEnd> ends);

// Marks the reservation's GPUs (or MIG instances) that are free now as
// taken, so placements in the rest of the pass go around them. Only GPUs are
// held: a backfilled job may still use CPUs or memory of a reserved node.
class ReservationHold {
 public:
  // A job id no real job gets (ids count up from 1), and no owner marker
  // of NodeSlot::gpu_owner: as kSharedGpuOwner a held GPU read as a shared
  // one with all of its share free, and a share placed there was lost from
  // the accounts when the hold let go.
  static constexpr uint64_t kHolder = ~uint64_t{0} - 2;
  static_assert(kHolder != kSharedGpuOwner && kHolder != kMigGpuOwner);

  ReservationHold(ClusterState& cluster, const Reservation& reservation);
  ~ReservationHold() { Drop(); }
  ReservationHold(const ReservationHold&) = delete;
  ReservationHold& operator=(const ReservationHold&) = delete;

  // Lets go of the held GPUs, then takes back those still free.
  void Drop();
  void Retake();

 private:
  ClusterState& cluster_;
  const Reservation& reservation_;
  v1::Allocation held_;
};

}  // namespace gpusched::core
