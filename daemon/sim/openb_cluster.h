#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/sim/openb_trace.h"
#include "daemon/sim/sim_cluster.h"

namespace gpusched::sim {

// The Alibaba openb node list as a cluster the core can place on: each node
// with GPUs registers its CPUs, memory and GPUs of its model, every GPU
// shared by time-slicing (so that it takes either one whole-GPU job or
// shares, as the trace's GPUs did). The list says nothing of the wiring:
// GPUs are linked as SYS (the worst class, as topo -m reads when unknown)
// and no node has a NIC or a switch. GPU memory is the model's where it is
// public (T4, P100, V100M16, V100M32, A10); the undisclosed G1-G3 read as
// unknown (0), which shares of memory do not need. Nodes without GPUs are
// left out. Errors name the node's line.
absl::StatusOr<SimCluster> BuildOpenbCluster(const std::vector<OpenbNode>& nodes, const std::string& name);

// Whether `text` starts with the openb node list's header (its first column
// is `sn`), which LoadCluster tells from a TOML cluster spec by.
bool LooksLikeOpenbNodeList(const std::string& text);

}  // namespace gpusched::sim
