#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/agent.h"
#include "common/clock.h"
#include "daemon/server/daemon.h"

namespace gpusched::dev {

struct DevNode {
  std::string name;
  // A real machine's `nvidia-smi topo -m` output; when empty (the build did
  // not find the fixture) the node gets `gpus` fake GPUs, all SYS.
  std::string topology_text;
  std::string topology_name;  // the fixture's file name, for messages
  int gpus;
  std::string gpu_model;
  int64_t gpu_memory_mb;
  int64_t cpus;
  int64_t memory_mb;
  std::map<std::string, std::string> labels;
  v1::GpuShareMode share_mode = v1::GPU_SHARE_MODE_EXCLUSIVE;  // agent gpu_share_mode
};

// The nodes `gpuschedd dev` starts, wired like two real machines: an HGX H200
// (NVSwitch, 12 NICs) and a PCIe server with 8 RTX 4090s, in different racks.
std::vector<DevNode> DefaultDevNodes();

// A daemon and its agents in one process, on loopback.
class DevCluster {
 public:
  // `containers`: how every agent runs jobs in container images (runtime ""
  // = not at all).
  static absl::StatusOr<std::unique_ptr<DevCluster>> Start(const server::DaemonOptions& daemon_options,
                                                           const std::vector<DevNode>& nodes, const Clock& clock,
                                                           const agent::ContainerSettings& containers = {});
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
