#include "daemon/dev/dev_cluster.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/dev/dev_topologies.h"

namespace gpusched::dev {

std::vector<DevNode> DefaultDevNodes() {
  const std::string hgx = "hgx-h200-8gpu-12nic.txt";
  const std::string pcie = "pcie-8x-rtx4090.txt";
  return {
      {"hgx-h200-01",
       EmbeddedTopology(hgx),
       hgx,
       8,
       "NVIDIA H200",
       143771,
       224,
       2063937,
       {{"rack", "r01"}, {"leaf", "leaf-01"}, {"spine", "spine-01"}}},
      // Its GPUs are time-sliced, so that `gpusched submit --gpu-share 30%`
      // has somewhere to go.
      {"pcie-4090-01",
       EmbeddedTopology(pcie),
       pcie,
       8,
       "NVIDIA GeForce RTX 4090",
       24564,
       224,
       1031560,
       {{"rack", "r02"}, {"leaf", "leaf-02"}, {"spine", "spine-01"}},
       v1::GPU_SHARE_MODE_TIMESLICE},
  };
}

absl::StatusOr<std::unique_ptr<DevCluster>> DevCluster::Start(const server::DaemonOptions& daemon_options,
                                                              const std::vector<DevNode>& nodes, const Clock& clock,
                                                              const agent::ContainerSettings& containers) {
  std::unique_ptr<DevCluster> cluster(new DevCluster());
  auto daemon = server::Daemon::Start(daemon_options, clock);
  if (!daemon.ok()) return daemon.status();
  cluster->daemon_ = std::move(*daemon);
  for (const DevNode& node : nodes) {
    agent::AgentOptions options;
    options.daemon_address = cluster->daemon_->address();
    options.node_name = node.name;
    options.advertise_address = "127.0.0.1";
    if (node.topology_text.empty()) {
      options.gpu_source = agent::GpuSource::kFake;
      options.fake_gpus = node.gpus;
    } else {
      options.gpu_source = agent::GpuSource::kFile;
      options.topology_file = node.topology_name;
      options.topology_text = node.topology_text;
    }
    options.gpu_model = node.gpu_model;
    options.gpu_memory_mb = node.gpu_memory_mb;
    options.cpus = node.cpus;
    options.memory_mb = node.memory_mb;
    options.log_dir = absl::StrCat(daemon_options.state_dir, "/logs/", node.name);
    options.labels = node.labels;
    options.gpu_share_mode = node.share_mode;
    options.labels["gpusched.dev/fake"] = "true";
    options.heartbeat_interval = absl::Seconds(2);
    options.containers = containers;
    auto agent = std::make_unique<agent::Agent>(std::move(options));
    if (absl::Status s = agent->Start(); !s.ok()) return s;
    cluster->agents_.push_back(std::move(agent));
    cluster->names_.push_back(node.name);
  }
  return cluster;
}

absl::Status DevCluster::WaitForAgents(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (!agents_[i]->connected()) missing.push_back(names_[i]);
    }
    if (missing.empty()) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("agents did not register within ", absl::FormatDuration(timeout),
                                                      ": ", absl::StrJoin(missing, ", ")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void DevCluster::Shutdown() {
  for (auto& agent : agents_) agent->Stop();
  agents_.clear();
  if (daemon_) daemon_->Shutdown();
}

DevCluster::~DevCluster() { Shutdown(); }

}  // namespace gpusched::dev
