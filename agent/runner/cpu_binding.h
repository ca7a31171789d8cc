#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// --cpu-bind: kNuma binds each job process to the CPUs of its GPUs' NUMA
// node(s); kNone leaves it with the agent's own affinity.
enum class CpuBindMode { kNone, kNuma };

struct CpuBinding {
  std::vector<int> cpus;  // sorted; empty: not bound, the process keeps the agent's CPUs
  // Why a process with GPUs is not bound, worded for the agent's log; empty
  // when it is bound or has no GPUs to be near.
  std::string not_bound_reason;
};

// The CPUs local to one GPU (by CUDA index): those of its NUMA node, else its
// CPU affinity. Empty when the topology knows neither.
std::vector<int> GpuLocalCpus(const topology::NodeTopology& topo, int gpu_index);

// Where a process that drives `gpu_indices` should run: the union of their
// local CPUs, within `allowed` (the CPUs the agent itself may use, which a
// cgroup or systemd's CPUAffinity may have narrowed). Not bound when a GPU's
// CPUs are unknown (binding to the rest would starve that GPU's traffic) or
// when none of them is allowed, which is what a topology that describes
// another machine (a topo -m file, `gpuschedd dev`) gives.
CpuBinding ChooseCpuBinding(const topology::NodeTopology& topo, const std::vector<int>& gpu_indices,
                            const std::vector<int>& allowed);

// The CPUs this thread may run on (sched_getaffinity), sorted.
absl::StatusOr<std::vector<int>> AllowedCpusOfThisThread();

}  // namespace gpusched::agent
