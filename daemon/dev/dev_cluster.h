#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/agent.h"
#include "common/clock.h"
#include "daemon/server/daemon.h"

namespace gpusched::dev {

struct FakeNode {
  std::string name;
  int gpus;
  std::string gpu_model;
  int64_t gpu_memory_mb;
  int64_t cpus;
  int64_t memory_mb;
};

// The nodes `gpuschedd dev` starts: one NVLink training node and one PCIe
// inference node, shaped like real machines (fixtures replace the fake
// topologies once topology discovery lands).
std::vector<FakeNode> DefaultDevNodes();

// A daemon and its agents in one process, on loopback.
class DevCluster {
 public:
  static absl::StatusOr<std::unique_ptr<DevCluster>> Start(const server::DaemonOptions& daemon_options,
                                                           const std::vector<FakeNode>& nodes, const Clock& clock);
  ~DevCluster();
  // Waits until every agent has registered, or fails naming those that did not.
  absl::Status WaitForAgents(absl::Duration timeout);
  void Shutdown();

  server::Daemon& daemon() { return *daemon_; }

 private:
  DevCluster() = default;
  std::unique_ptr<server::Daemon> daemon_;
  std::vector<std::unique_ptr<agent::Agent>> agents_;
  std::vector<std::string> names_;
};

}  // namespace gpusched::dev
