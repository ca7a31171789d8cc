#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/topology/node_topology.h"

namespace gpusched {

class NetworkTopologyConfBuilder;

// A switch of the tree described by SwitchName lines.
struct NetworkSwitch {
  std::string name;
  int line = 0;                       // where it is defined, 1-based
  std::vector<std::string> nodes;     // Nodes=, expanded: set on leaf switches
  std::vector<std::string> children;  // Switches=, expanded, in written order
  std::string parent;                 // the switch listing it; empty at a top
};

// A group of nodes on one multi-node NVLink fabric (BlockName lines), such as
// the 18 trays of a GB200 NVL72 rack.
struct NetworkBlock {
  std::string name;
  int line = 0;
  std::vector<std::string> nodes;
};

// The cluster network as described in a file in the vocabulary of Slurm's
// topology.conf, so that operators can reuse the file they already have:
//
//   # tree: leaf switches list nodes, upper switches list switches
//   SwitchName=leaf01 Nodes=gpu[001-032] LinkSpeed=400
//   SwitchName=leaf02 Nodes=gpu[033-064]
//   SwitchName=spine01 Switches=leaf[01-02]
//   # blocks: multi-node NVLink domains
//   BlockName=nvl01 Nodes=gb[001-018]
//   BlockSizes=9,18
//
// Keys are case-insensitive; '#' starts a comment; values are hostlists (see
// ExpandHostlist) except SwitchName and BlockName, which name one switch or
// block. LinkSpeed is accepted and ignored (Slurm does not use it either). BlockSizes,
// the only key allowed on a line of its own, is a comma-separated list of
// positive integers, kept for later use.
//
// Choices where Slurm's plugins differ from, or say less than, this parser:
//   - One file may hold both a tree and blocks, since a GB200 cluster has
//     both an InfiniBand/Ethernet tree and NVLink domains; Slurm uses one
//     plugin, so its files hold one or the other.
//   - A switch has Nodes= or Switches=, not both, as topology.conf describes
//     a switch's children; a switch with nodes is a leaf.
//   - A node may sit under one leaf switch and in one block; a switch may be
//     listed by one parent. Anything else would make "the leaf" or "the
//     spine" of a node ambiguous, so it is an error rather than Slurm's
//     looser handling.
//   - Switches= may name switches defined further down the file.
//   - Nodes are not checked against any node list: a node named here that
//     never registers is harmless, and one missing here is simply unlocated.
// Every error is an InvalidArgument naming the 1-based line and the problem.
class NetworkTopologyConf {
 public:
  NetworkTopologyConf() = default;  // an empty network: nothing is located

  // Where `node` sits, or nullopt when it is under no switch and in no
  // block. leaf: the switch whose Nodes= lists it. spine: the top of the
  // leaf's tree (the topmost switch when there are more than two levels; the
  // levels in between are in SwitchPath), empty when nothing is above the
  // leaf. nvlink_domain: its block. rack stays empty: topology.conf has no
  // racks; they come from the node's own labels.
  std::optional<topology::NetworkLocation> Locate(absl::string_view node) const;

  // The switches from `node`'s leaf up to the top of its tree; empty when
  // the node is under no switch.
  std::vector<std::string> SwitchPath(absl::string_view node) const;

  // In file order.
  const std::vector<NetworkSwitch>& switches() const { return switches_; }
  const std::vector<NetworkBlock>& blocks() const { return blocks_; }
  const std::vector<int>& block_sizes() const { return block_sizes_; }

  const NetworkSwitch* FindSwitch(absl::string_view name) const;
  const NetworkBlock* FindBlock(absl::string_view name) const;

 private:
  friend class NetworkTopologyConfBuilder;

  std::vector<NetworkSwitch> switches_;
  std::vector<NetworkBlock> blocks_;
  std::vector<int> block_sizes_;
  absl::flat_hash_map<std::string, int> switch_index_;
  absl::flat_hash_map<std::string, int> block_index_;
  absl::flat_hash_map<std::string, int> node_leaf_;   // node -> switches_ index
  absl::flat_hash_map<std::string, int> node_block_;  // node -> blocks_ index
};

// Parses the text of a topology file (the caller reads it); see
// NetworkTopologyConf for the format.
absl::StatusOr<NetworkTopologyConf> ParseNetworkTopologyConf(absl::string_view text);

}  // namespace gpusched
