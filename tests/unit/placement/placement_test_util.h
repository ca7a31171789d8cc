#pragma once

// Topologies for the placement tests: the real fixtures with their GPU
// models set (bandwidth estimates depend on the generation), and hand-built
// nodes.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "../topology/fixture_util.h"
#include "common/topology/nvidia_smi_topo.h"

namespace gpusched::placement_testing {

struct TopoFixture {
  const char* file;
  const char* model;
};

// Every fixture in shared/fixtures/topo, each with the GPU its machine has.
inline const std::vector<TopoFixture>& AllTopoFixtures() {
  static const std::vector<TopoFixture> fixtures = {
      {"dgx1-v100.txt", "Tesla V100-SXM2-32GB"},          {"dgx-a100.txt", "NVIDIA A100-SXM4-40GB"},
      {"hgx-h200-8gpu-12nic.txt", "NVIDIA H200"},         {"aws-p4d.24xlarge.txt", "NVIDIA A100-SXM4-40GB"},
      {"aws-p5.48xlarge.txt", "NVIDIA H100 80GB HBM3"},   {"aws-g6e.12xlarge-4xL40S.txt", "NVIDIA L40S"},
      {"pcie-8x-rtx4090.txt", "NVIDIA GeForce RTX 4090"},
  };
  return fixtures;
}

inline topology::NodeTopology LoadTopo(const std::string& file, const std::string& model) {
  std::string text = testing::ReadTopoFixture(file);
  INFO("fixture " << testing::TopoFixturePath(file) << " (shared/ must sit beside the repository)");
  REQUIRE_FALSE(text.empty());
  absl::StatusOr<topology::NodeTopology> topo = topology::ParseNvidiaSmiTopo(text);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  for (topology::GpuInfo& gpu : topo->gpus()) gpu.model = model;
  return *std::move(topo);
}

inline topology::NodeTopology LoadTopo(const TopoFixture& fixture) { return LoadTopo(fixture.file, fixture.model); }

// A node whose GPU pairs are all `link` until set otherwise.
inline topology::NodeTopology UniformNode(int gpus, topology::Link link, const std::string& model,
                                          int gpus_per_numa_node = 0, int nics = 0) {
  topology::NodeTopology topo(gpus, nics);
  for (int i = 0; i < gpus; ++i) {
    topo.gpus()[i].model = model;
    if (gpus_per_numa_node > 0) topo.gpus()[i].numa_node = i / gpus_per_numa_node;
    for (int j = 0; j < gpus; ++j) {
      if (i != j) topo.SetGpuLink(i, j, link);
    }
  }
  return topo;
}

inline void SetPair(topology::NodeTopology& topo, int i, int j, topology::Link link) {
  topo.SetGpuLink(i, j, link);
  topo.SetGpuLink(j, i, link);
}

inline uint64_t MaskOf(std::initializer_list<int> gpus) {
  uint64_t mask = 0;
  for (int g : gpus) mask |= uint64_t{1} << g;
  return mask;
}

inline uint64_t AllFree(int gpus) { return gpus >= 64 ? ~uint64_t{0} : (uint64_t{1} << gpus) - 1; }

inline uint64_t AllFreeBut(int gpus, std::initializer_list<int> busy) { return AllFree(gpus) & ~MaskOf(busy); }

inline std::vector<int> Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

inline constexpr topology::Link kSys{topology::LinkKind::kSys, 0};
inline constexpr topology::Link kNode{topology::LinkKind::kNode, 0};
inline constexpr topology::Link kPhb{topology::LinkKind::kPhb, 0};
inline constexpr topology::Link kPxb{topology::LinkKind::kPxb, 0};
inline constexpr topology::Link kPix{topology::LinkKind::kPix, 0};
inline constexpr topology::Link Nv(int n) { return {topology::LinkKind::kNvLink, n}; }

}  // namespace gpusched::placement_testing
