#pragma once

#include <vector>

#include "daemon/core/gang_request.h"
#include "daemon/core/sharing/fragmentation.h"

namespace gpusched::core {

// The task mix FGD packing expects over (ShareWeighing::mix): what each of
// the cluster's jobs, running or waiting, asks of one node. A share as its
// GPUs and share; whole GPUs as GPUs of 1000 (a gang as its part per node);
// CPU-only jobs as CPUs and memory. MIG jobs take no shared GPU and are left
// out.
sharing::TaskMix ShareMixOf(const std::vector<GangRequest>& requests);

}  // namespace gpusched::core
