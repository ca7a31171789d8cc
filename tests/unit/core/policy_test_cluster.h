#pragma once

// Clusters of real-fixture nodes for the placement policy tests: each node is
// a parsed `nvidia-smi topo -m` output from shared/fixtures/topo with the GPU
// model and memory its machine has, its rack / leaf / spine / NVLink domain
// set through NodeTopology::network(), and put into a ClusterState the way
// an agent's registration does (TopologyToProto -> UpsertNode).

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/convert/topology_proto.h"
#include "common/topology/node_topology.h"
#include "common/topology/nvidia_smi_topo.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core::policy_testing {

// One machine of shared/fixtures/topo, with what topo -m does not show.
struct Machine {
  const char* file;
  const char* model;      // as NVML reports it
  int64_t gpu_memory_mb;  // per GPU
  bool nvswitch;          // NVLinks through NVSwitch rather than point to point
  int64_t cpus;
  int64_t memory_mb;
};

inline const Machine kDgx1{"dgx1-v100.txt", "Tesla V100-SXM2-32GB", 32768, false, 80, 512000};
inline const Machine kDgxA100{"dgx-a100.txt", "NVIDIA A100-SXM4-40GB", 40960, true, 256, 1024000};
inline const Machine kHgxH200{"hgx-h200-8gpu-12nic.txt", "NVIDIA H200", 143771, true, 224, 2063937};
inline const Machine kP4d{"aws-p4d.24xlarge.txt", "NVIDIA A100-SXM4-40GB", 40960, true, 96, 1152000};
inline const Machine kP5{"aws-p5.48xlarge.txt", "NVIDIA H100 80GB HBM3", 81559, true, 192, 2048000};
inline const Machine kG6e{"aws-g6e.12xlarge-4xL40S.txt", "NVIDIA L40S", 46068, false, 48, 393216};
inline const Machine kRtx4090{"pcie-8x-rtx4090.txt", "NVIDIA GeForce RTX 4090", 24564, false, 224, 1031560};

inline const std::vector<Machine>& AllMachines() {
  static const std::vector<Machine> machines = {kDgx1, kDgxA100, kHgxH200, kP4d, kP5, kG6e, kRtx4090};
  return machines;
}

// The parsed fixture, read once per process (tests place thousands of nodes).
inline const topology::NodeTopology& FixtureTopology(const std::string& file) {
  static std::map<std::string, topology::NodeTopology> cache;
  auto it = cache.find(file);
  if (it != cache.end()) return it->second;
  const std::string path = std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + file;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  INFO("fixture " << path << " (shared/ must sit beside the repository)");
  REQUIRE_FALSE(text.str().empty());
  absl::StatusOr<topology::NodeTopology> topo = topology::ParseNvidiaSmiTopo(text.str());
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return cache.emplace(file, *std::move(topo)).first->second;
}

// Where a node sits in the network; empty fields are unknown.
struct Labels {
  std::string leaf;
  std::string spine;
  std::string nvlink_domain;
  std::string rack;
};

inline Labels Net(std::string leaf, std::string spine, std::string nvlink_domain = "") {
  Labels labels;
  labels.leaf = std::move(leaf);
  labels.spine = std::move(spine);
  labels.nvlink_domain = std::move(nvlink_domain);
  return labels;
}

// What an agent on this machine would register.
inline v1::NodeInfo NodeInfoFor(const std::string& name, topology::NodeTopology topo, const Labels& labels,
                                int64_t cpus, int64_t memory_mb) {
  for (topology::GpuInfo& gpu : topo.gpus()) {
    if (gpu.uuid.empty()) gpu.uuid = "GPU-" + name + "-" + std::to_string(gpu.index);
  }
  topo.network().leaf = labels.leaf;
  topo.network().spine = labels.spine;
  topo.network().nvlink_domain = labels.nvlink_domain;
  topo.network().rack = labels.rack;
  v1::NodeInfo info;
  info.set_name(name);
  info.set_address(name + ".cluster.local");
  info.set_cpus(cpus);
  info.set_memory_mb(memory_mb);
  convert::TopologyToProto(topo, &info);
  return info;
}

inline v1::NodeInfo NodeInfoFor(const std::string& name, const Machine& machine, const Labels& labels = {}) {
  topology::NodeTopology topo = FixtureTopology(machine.file);
  for (topology::GpuInfo& gpu : topo.gpus()) {
    gpu.model = machine.model;
    gpu.memory_mb = machine.gpu_memory_mb;
  }
  topo.set_nvswitch(machine.nvswitch);
  return NodeInfoFor(name, std::move(topo), labels, machine.cpus, machine.memory_mb);
}

inline void AddUpNode(ClusterState& cluster, const v1::NodeInfo& info) {
  cluster.UpsertNode(info);
  cluster.SetState(info.name(), v1::NODE_STATE_UP, "");
}

inline void AddNode(ClusterState& cluster, const std::string& name, const Machine& machine, const Labels& labels = {}) {
  AddUpNode(cluster, NodeInfoFor(name, machine, labels));
}

// Job `job` holds the GPUs with these indices on `node`, as if it ran there.
inline void Hold(ClusterState& cluster, const std::string& node, const std::vector<int>& gpus, uint64_t job) {
  v1::Allocation a;
  v1::NodeAllocation* part = a.add_nodes();
  part->set_node(node);
  for (int g : gpus) part->add_gpu_indices(g);
  absl::Status s = cluster.Allocate(job, a);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

// Job `job` holds the lowest `count` free GPUs of `node`.
inline void HoldFirst(ClusterState& cluster, const std::string& node, int count, uint64_t job) {
  const NodeSlot* slot = cluster.Find(node);
  REQUIRE(slot != nullptr);
  std::vector<int32_t> free = slot->FreeGpuIndices();
  REQUIRE(static_cast<int>(free.size()) >= count);
  v1::Allocation a;
  v1::NodeAllocation* part = a.add_nodes();
  part->set_node(node);
  for (int i = 0; i < count; ++i) part->add_gpu_indices(free[i]);
  REQUIRE(cluster.Allocate(job, a).ok());
}

inline void ReleaseAll(ClusterState& cluster, const std::string& node, uint64_t job) {
  const NodeSlot* slot = cluster.Find(node);
  REQUIRE(slot != nullptr);
  v1::Allocation a;
  v1::NodeAllocation* part = a.add_nodes();
  part->set_node(node);
  for (size_t p = 0; p < slot->gpu_owner.size(); ++p) {
    if (slot->gpu_owner[p] == job) part->add_gpu_indices(slot->info.gpus(static_cast<int>(p)).index());
  }
  cluster.Release(job, a);
}

// `total` GPUs wherever they fit best.
inline GangRequest Gpus(int64_t total, v1::TopologyMode mode = v1::TOPOLOGY_MODE_PREFER) {
  GangRequest r;
  r.total_gpus = total;
  r.topology = mode;
  return r;
}

// Exactly `nodes` nodes with `per_node` GPUs each.
inline GangRequest Shape(int64_t nodes, int64_t per_node, v1::TopologyMode mode = v1::TOPOLOGY_MODE_PREFER) {
  GangRequest r;
  r.total_gpus = nodes * per_node;
  r.nodes = nodes;
  r.gpus_per_node = per_node;
  r.topology = mode;
  return r;
}

inline std::set<int> GpuSet(const v1::NodeAllocation& part) {
  return {part.gpu_indices().begin(), part.gpu_indices().end()};
}

inline std::vector<int> GpuList(const v1::NodeAllocation& part) {
  return {part.gpu_indices().begin(), part.gpu_indices().end()};
}

inline std::set<std::string> NodeSet(const v1::Allocation& a) {
  std::set<std::string> nodes;
  for (const v1::NodeAllocation& part : a.nodes()) nodes.insert(part.node());
  return nodes;
}

inline int64_t TotalGpus(const v1::Allocation& a) {
  int64_t total = 0;
  for (const v1::NodeAllocation& part : a.nodes()) total += part.gpu_indices_size();
  return total;
}

// "n1:[0,3] n2:[1] (topology, leaf x, NET, 37.5 GB/s)": for failure messages.
inline std::string Describe(const v1::Allocation& a) {
  std::ostringstream out;
  for (const v1::NodeAllocation& part : a.nodes()) {
    out << part.node() << ":[";
    for (int i = 0; i < part.gpu_indices_size(); ++i) out << (i ? "," : "") << part.gpu_indices(i);
    out << "] ";
  }
  out << "(" << a.policy() << ", " << a.span() << ", " << a.worst_link() << ", " << a.est_bus_bandwidth_gbps()
      << " GB/s)";
  return out.str();
}

}  // namespace gpusched::core::policy_testing
