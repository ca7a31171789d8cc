#pragma once

#include "absl/status/statusor.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct PoolsOptions {
  bool json = false;
};

// `gpusched pools`: each elastic pool (the pool its nodes' rows name), its
// nodes by power state and its GPUs paid for (on nodes that are not powered
// down) and used; --json prints the pools' nodes (a ListNodesResponse).
absl::StatusOr<int> RunPools(const PoolsOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
