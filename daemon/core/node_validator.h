#pragma once

#include "absl/status/status.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// What an agent registers must make sense before the scheduler counts on it:
// a name, non-negative CPU/memory/GPU-memory figures and a well-formed
// topology. InvalidArgument names the field.
absl::Status ValidateNodeInfo(const v1::NodeInfo& node);

}  // namespace gpusched::core
