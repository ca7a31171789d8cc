#pragma once

// Random but plausible nodes for the invariant tests: seeded, so a failure
// replays.

#include <random>
#include <string>
#include <vector>

#include "common/topology/node_topology.h"

namespace gpusched::placement_testing {

struct RandomNodeOptions {
  bool mixed_models = false;      // GPUs of different generations in one node
  bool asymmetric_links = false;  // GpuLink(i, j) != GpuLink(j, i) sometimes
};

inline topology::NodeTopology RandomNode(std::mt19937& rng, int gpus, RandomNodeOptions options = {}) {
  using topology::Link;
  using topology::LinkKind;
  const Link kinds[] = {{LinkKind::kNvLink, 1},  {LinkKind::kNvLink, 2}, {LinkKind::kNvLink, 4},
                        {LinkKind::kNvLink, 12}, {LinkKind::kPix, 0},    {LinkKind::kPxb, 0},
                        {LinkKind::kPhb, 0},     {LinkKind::kNode, 0},   {LinkKind::kSys, 0}};
  const char* models[] = {"Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-40GB", "NVIDIA H200", "NVIDIA L40S", ""};
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };

  const int nics = pick(4);
  topology::NodeTopology topo(gpus, nics);
  const std::string node_model = models[pick(5)];
  const int numa_style = pick(3);  // 0: NUMA ids, 1: CPU affinity only, 2: unknown
  for (int i = 0; i < gpus; ++i) {
    topology::GpuInfo& gpu = topo.gpus()[i];
    gpu.model = options.mixed_models ? models[pick(5)] : node_model;
    const int half = pick(2);
    if (numa_style == 0) gpu.numa_node = half;
    if (numa_style == 1) gpu.cpu_affinity = half == 0 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
    for (int nic = 0; nic < nics; ++nic) topo.SetGpuNicLink(i, nic, kinds[4 + pick(5)]);
  }
  // Few distinct classes per node, as on real machines, so that ties (and
  // with them rules 2-4) matter.
  std::vector<Link> palette = {kinds[pick(9)], kinds[pick(9)], kinds[pick(9)]};
  for (int i = 0; i < gpus; ++i) {
    for (int j = i + 1; j < gpus; ++j) {
      const Link link = palette[pick(3)];
      topo.SetGpuLink(i, j, link);
      topo.SetGpuLink(j, i, options.asymmetric_links && pick(4) == 0 ? palette[pick(3)] : link);
    }
  }
  return topo;
}

}  // namespace gpusched::placement_testing
