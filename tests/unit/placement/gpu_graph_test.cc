#include "daemon/core/placement/gpu_graph.h"

#include <catch2/catch.hpp>

#include "placement_test_util.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::LinkRank;
using gpusched::topology::NodeTopology;

TEST_CASE("GpuGraph ranks DGX-1 links by estimated bandwidth") {
  GpuGraph g = GpuGraph::FromTopology(LoadTopo("dgx1-v100.txt", "Tesla V100-SXM2-32GB"));
  REQUIRE(g.size() == 8);
  CHECK(g.Level(0, 0) == 0);
  CHECK(g.Level(0, 3) > g.Level(0, 1));  // NV2 > NV1
  CHECK(g.Level(0, 1) > g.Level(0, 5));  // NV1 > SYS
  CHECK(g.Level(0, 3) == g.Level(3, 0));
  CHECK(g.LevelGBps(g.Level(0, 3)) == Approx(50));
  CHECK(g.LevelGBps(g.Level(0, 1)) == Approx(25));
  CHECK(g.LevelGBps(g.Level(0, 5)) == Approx(12 * 0.65));
  CHECK(g.GpuLink(0, 3) == Nv(2));
  CHECK(g.NicRank(0) == LinkRank(kPix));
  CHECK(g.BestNicLink(3) == kPix);
  // No NUMA column: the CPU affinity lists make the two domains.
  for (int i = 0; i < 8; ++i) CHECK(g.Domain(i) == (i < 4 ? 0 : 1));
}

TEST_CASE("GpuGraph domains: NUMA node first, then CPU affinity, else one unknown domain") {
  NodeTopology topo = UniformNode(4, kSys, "");
  topo.gpus()[0].numa_node = 5;
  topo.gpus()[1].numa_node = 5;
  topo.gpus()[2].cpu_affinity = {0, 1};
  GpuGraph g = GpuGraph::FromTopology(topo);
  CHECK(g.Domain(0) == g.Domain(1));
  CHECK(g.Domain(2) != g.Domain(0));
  CHECK(g.Domain(3) != g.Domain(2));
  CHECK(g.Domain(3) != g.Domain(0));
  CHECK_FALSE(g.BestNicLink(0).has_value());
  CHECK(g.NicRank(0) == 0);
}

TEST_CASE("GpuGraph fingerprints: equal for the same hardware, different otherwise") {
  auto fp = [](const NodeTopology& t) { return GpuGraph::FromTopology(t).Fingerprint(); };
  NodeTopology a100 = LoadTopo("dgx-a100.txt", "NVIDIA A100-SXM4-40GB");
  NodeTopology other_a100 = LoadTopo("dgx-a100.txt", "NVIDIA A100-SXM4-80GB");
  for (auto& gpu : other_a100.gpus()) gpu.uuid = "GPU-elsewhere";
  CHECK(fp(a100) == fp(other_a100));  // same generation, same links

  // NUMA ids renumbered, same grouping: same answers, same fingerprint.
  NodeTopology renumbered = a100;
  for (auto& gpu : renumbered.gpus()) gpu.numa_node += 10;
  CHECK(fp(renumbered) == fp(a100));

  NodeTopology p4d = LoadTopo("aws-p4d.24xlarge.txt", "NVIDIA A100-SXM4-40GB");
  NodeTopology p5 = LoadTopo("aws-p5.48xlarge.txt", "NVIDIA H100 80GB HBM3");
  CHECK(fp(p4d) != fp(a100));  // NUMA layout and NICs differ
  CHECK(fp(p4d) != fp(p5));    // NV12 vs NV18
  NodeTopology volta_p4d = LoadTopo("aws-p4d.24xlarge.txt", "Tesla V100-SXM2-32GB");
  CHECK(fp(volta_p4d) == fp(p4d));  // NVLink is 25 GB/s per link either way, no PCIe pair
  NodeTopology rtx = LoadTopo("pcie-8x-rtx4090.txt", "NVIDIA GeForce RTX 4090");
  NodeTopology rtx_as_h200 = LoadTopo("pcie-8x-rtx4090.txt", "NVIDIA H200");
  CHECK(fp(rtx) != fp(rtx_as_h200));  // PCIe Gen4 vs Gen5 estimates
}

TEST_CASE("GpuGraph leaves out GPUs that free_mask cannot name") {
  GpuGraph g = GpuGraph::FromTopology(UniformNode(70, kSys, ""));
  CHECK(g.size() == kMaxPlaceableGpus);
  CHECK(g.all_gpus_mask() == ~uint64_t{0});
  CHECK(GpuGraph::FromTopology(UniformNode(3, kSys, "")).all_gpus_mask() == 7);
}
