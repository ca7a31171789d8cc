#pragma once

#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "daemon/core/backfill.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core {

// Wait or spread, for a multi-GPU job that said nothing about its placement
// (--topology prefer): started now on the best free placement it runs
// slower than on the one the idle cluster would give it, by the runtime
// model the simulator uses,
//     run x (1 + comm_share x (ideal_bw / placed_bw - 1)),
// while waiting for the better one costs the time until the jobs in `ends`
// have let go of it (a reservation planned as backfill plans them). The
// earlier finish wins.
struct SpreadCost {
  absl::Duration expected_run;  // at the ideal placement
  double comm_share = 0.1;      // of the run time spent in communication
};

struct BetterPlacement {
  Reservation reservation;  // where and from when it runs at full speed
  absl::Time finish_now;    // on the best free placement
  absl::Time finish_waiting;
};

// The better placement, when waiting for it finishes earlier; nullopt when
// starting on `free_now` does (or nothing better can be planned). `ends`
// gives the running jobs' expected ends, asked for only once a better
// placement is worth planning. `cluster` is changed while searching and left
// as it was.
std::optional<BetterPlacement> BetterByWaiting(ClusterState& cluster, PlacementPolicy& policy, uint64_t job_id,
                                               const GangRequest& request, const v1::Allocation& free_now,
                                               const SpreadCost& cost, absl::Time now,
                                               absl::FunctionRef<std::vector<ExpectedEnd>()> ends);

}  // namespace gpusched::core
