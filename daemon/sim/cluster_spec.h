#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/network_topology_conf.h"

namespace gpusched::sim {

// A kind of machine: the wiring of a real one (an `nvidia-smi topo -m`
// fixture) plus what topo -m does not tell.
struct NodeTypeSpec {
  std::string name;
  std::string topology;  // fixture name or path, resolved by sim_cluster
  std::string gpu_model;
  int64_t gpu_memory_mb = 0;
  int64_t cpus = 0;
  int64_t memory_mb = 0;
  int32_t nic_gbps = 0;  // link speed of every NIC; 0 = unknown (the estimate assumes 200)
  int line = 0;
};

struct NodeGroupSpec {
  std::vector<std::string> names;  // expanded hostlist
  std::string type;
  int line = 0;
};

// A simulated cluster, as written in a small TOML file (read with
// common/config, so any TOML v1.0 spelling of the same tables is accepted):
//
//   name = "dgx-h100-64"
//
//   [[node_type]]
//   name = "h100"
//   topology = "hgx-h200-8gpu-12nic.txt"  # a fixture, or a path relative to this file
//   gpu_model = "NVIDIA H100 80GB HBM3"
//   gpu_memory_mb = 81559
//   cpus = 224
//   memory_mb = 2063937
//   nic_gbps = 400                         # optional
//
//   [[nodes]]
//   names = "h[001-064]"                   # a Slurm hostlist
//   type = "h100"
//
//   [[switch]]                             # the network, in topology.conf terms:
//   name = "leaf01"                        # a leaf lists nodes,
//   nodes = "h[001-008]"
//   [[switch]]
//   name = "spine01"                       # an upper switch lists switches
//   switches = "leaf[01-08]"
//
//   [[nvlink_domain]]                      # multi-node NVLink (BlockName)
//   name = "nvl01"
//   nodes = "gb[001-018]"
//
// The [[switch]] and [[nvlink_domain]] tables are handed to the daemon's own
// topology.conf parser (common/net), with its rules: one leaf and one domain
// per node, a switch lists nodes or switches. Every error is an
// InvalidArgument "line N: ..." naming the table or key.
struct ClusterSpec {
  std::string name;
  std::vector<NodeTypeSpec> node_types;
  std::vector<NodeGroupSpec> node_groups;
  NetworkTopologyConf network;
};

absl::StatusOr<ClusterSpec> ParseClusterSpec(absl::string_view text);

}  // namespace gpusched::sim
