#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "daemon/core/cluster_state.h"

namespace gpusched::core {

// When each node's agent was last heard (a registration or a heartbeat),
// and what its silence makes of the node. Decides, changes nothing:
// SchedulerCore applies the verdicts.
class NodeLiveness {
 public:
  // Silent `not_responding_after`, an up node takes no new work (its jobs
  // keep running: its agent keeps them alive); silent `down_after`, it is
  // DOWN and its gangs are given up.
  NodeLiveness(absl::Duration not_responding_after, absl::Duration down_after)
      : not_responding_after_(not_responding_after), down_after_(down_after) {}

  void Heard(const std::string& node, absl::Time now) { last_seen_[node] = now; }
  // Not watched any more (powered down): its silence is expected.
  void Forget(const std::string& node) { last_seen_.erase(node); }
  std::optional<absl::Time> LastSeen(const std::string& node) const;

  struct Silent {
    std::string node;
    absl::Duration silent;
  };
  struct Verdicts {
    std::vector<Silent> not_responding;  // up, silent past not_responding_after
    std::vector<Silent> down;            // silent past down_after, not DOWN already
  };
  // The nodes of `cluster` whose silence crossed a bound by `now`, in name
  // order. Nodes DOWN already, powered down or powering up or down, and
  // nodes never heard are left out.
  Verdicts Judge(const ClusterState& cluster, absl::Time now) const;

 private:
  absl::Duration not_responding_after_;
  absl::Duration down_after_;
  std::map<std::string, absl::Time> last_seen_;
};

}  // namespace gpusched::core
