#include "daemon/core/container_fit.h"

#include "absl/strings/str_cat.h"
#include "common/container_policy.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core {

absl::Status CheckContainerEverRuns(const ClusterState& cluster, const GangRequest& request,
                                    const v1::ContainerSpec& container) {
  GangRequest anywhere = request;
  anywhere.in_container = false;  // the queue's nodes, whether they run containers or not
  size_t known = 0, running = 0;
  for (const auto& [name, slot] : cluster.nodes()) {
    if (!policy::QueueMayUse(slot, anywhere)) continue;
    ++known;
    if (!slot.runs_containers) continue;
    ++running;
    if (absl::Status s = ContainerAllowed(container, slot.info.containers(), name); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("spec.container: ", s.message()));
    }
  }
  if (known > 0 && running == 0) {
    return absl::InvalidArgumentError(absl::StrCat("spec.container: none of the ", known,
                                                   " node(s) this job may use runs containers (an operator names a "
                                                   "container runtime in the agents' agent.toml)"));
  }
  return absl::OkStatus();
}

}  // namespace gpusched::core
