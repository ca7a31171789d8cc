#pragma once

#include "absl/status/statusor.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct PoolsOptions {
  bool json = false;
};

// `gpusched pools`: each [[pool]] (Scheduler.ListPools): its class, nodes by
// power state, GPUs paid for (on nodes that are not powered down) and used,
// what it costs per hour now, the demand over its window and the headroom
// it keeps; --json prints the ListPoolsResponse.
absl::StatusOr<int> RunPools(const PoolsOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
