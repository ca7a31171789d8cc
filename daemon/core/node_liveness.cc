#include "daemon/core/node_liveness.h"

#include "common/job_states.h"

namespace gpusched::core {

std::optional<absl::Time> NodeLiveness::LastSeen(const std::string& node) const {
  auto it = last_seen_.find(node);
  if (it == last_seen_.end()) return std::nullopt;
  return it->second;
}

NodeLiveness::Verdicts NodeLiveness::Judge(const ClusterState& cluster, absl::Time now) const {
  Verdicts verdicts;
  for (const auto& [name, slot] : cluster.nodes()) {
    if (slot.state == v1::NODE_STATE_DOWN || IsPowerState(slot.state)) continue;
    auto seen = last_seen_.find(name);
    if (seen == last_seen_.end()) continue;
    const absl::Duration silent = now - seen->second;
    if (silent >= down_after_) {
      verdicts.down.push_back({name, silent});
    } else if (slot.state == v1::NODE_STATE_UP && silent >= not_responding_after_) {
      verdicts.not_responding.push_back({name, silent});
    }
  }
  return verdicts;
}

}  // namespace gpusched::core
