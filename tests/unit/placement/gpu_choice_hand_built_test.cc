// ChooseGpus on hand-built nodes that isolate one preference rule each.
#include <catch2/catch.hpp>

#include "daemon/core/placement/gpu_choice.h"
#include "placement_test_util.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::LinkKind;
using gpusched::topology::NodeTopology;

namespace {

// Two NVLink bridge pairs, 0-1 and 2-3, on a two-socket PCIe host.
NodeTopology NvLinkBridgePairs() {
  NodeTopology topo = UniformNode(4, kSys, "NVIDIA A100-PCIE-40GB");
  SetPair(topo, 0, 1, Nv(4));
  SetPair(topo, 2, 3, Nv(4));
  SetPair(topo, 0, 2, kPhb);
  SetPair(topo, 1, 3, kPhb);
  return topo;
}

std::vector<int> Chosen(const NodeTopology& topo, uint64_t free_mask, int k) {
  std::optional<GpuChoice> choice = ChooseGpus(topo, free_mask, k);
  REQUIRE(choice);
  return choice->gpus;
}

}  // namespace

TEST_CASE("NVLink bridge pairs: a pair job gets a bridged pair, never 1-2") {
  NodeTopology topo = NvLinkBridgePairs();
  CHECK(Chosen(topo, AllFree(4), 2) == std::vector<int>{0, 1});
  CHECK(Chosen(topo, AllFreeBut(4, {0}), 2) == std::vector<int>{2, 3});
  CHECK(Chosen(topo, AllFreeBut(4, {3}), 2) == std::vector<int>{0, 1});
  std::optional<GpuChoice> pair = ChooseGpus(topo, AllFree(4), 2);
  REQUIRE(pair);
  CHECK(pair->ring_bandwidth_gbps == Approx(100));
  CHECK(pair->worst_link == Nv(4));
  // Whenever a bridged pair is free, a pair job gets one.
  for (uint64_t free_mask = 0; free_mask < 16; ++free_mask) {
    const bool bridged_free = (free_mask & 3) == 3 || (free_mask & 12) == 12;
    if (!bridged_free) continue;
    INFO("free_mask=" << free_mask);
    std::vector<int> gpus = Sorted(Chosen(topo, free_mask, 2));
    CHECK((gpus == std::vector<int>{0, 1} || gpus == std::vector<int>{2, 3}));
  }
}

TEST_CASE("NVLink bridge pairs: a single GPU takes the partner of a busy one") {
  NodeTopology topo = NvLinkBridgePairs();
  CHECK(Chosen(topo, AllFreeBut(4, {0}), 1) == std::vector<int>{1});
  CHECK(Chosen(topo, AllFreeBut(4, {3}), 1) == std::vector<int>{2});
  std::optional<GpuChoice> one = ChooseGpus(topo, AllFree(4), 1);
  REQUIRE(one);
  CHECK(one->ring_bandwidth_gbps == 0);
  CHECK(one->worst_link.kind == LinkKind::kSelf);
  CHECK(one->weakest_pair_gbps == 0);
  CHECK(one->numa_domains_spanned == 1);
}

TEST_CASE("rule 1 before rule 2: an NVLink pair across NUMA nodes beats PCIe within one") {
  NodeTopology topo = UniformNode(4, kPix, "NVIDIA A100-PCIE-40GB", /*gpus_per_numa_node=*/2);
  SetPair(topo, 0, 2, Nv(2));
  std::optional<GpuChoice> choice = ChooseGpus(topo, AllFree(4), 2);
  REQUIRE(choice);
  CHECK(choice->gpus == std::vector<int>{0, 2});
  CHECK(choice->numa_domains_spanned == 2);
}

TEST_CASE("rule 1, weakest pair: of two equally fast rings, the one without slow diagonals") {
  // 0-3: a ring of NV1 with SYS diagonals; 4-7: every pair NV1. Both ring at
  // 25 GB/s; only 4-7 is NVLinked all-to-all. Rule 3 alone would rather
  // leave 4-7 free, so this also shows rule 1 wins over it.
  NodeTopology topo = UniformNode(8, kSys, "Tesla V100-SXM2-32GB");
  for (auto [a, b] : {std::pair{0, 1}, {1, 2}, {2, 3}, {3, 0}}) SetPair(topo, a, b, Nv(1));
  for (int a = 4; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) SetPair(topo, a, b, Nv(1));
  }
  std::optional<GpuChoice> choice = ChooseGpus(topo, AllFree(8), 4);
  REQUIRE(choice);
  CHECK(choice->gpus == std::vector<int>{4, 5, 6, 7});
  CHECK(choice->weakest_pair_gbps == Approx(25));
}

TEST_CASE("rule 2: closer NICs, then fewer NUMA nodes") {
  SECTION("the pair next to the NIC") {
    NodeTopology topo = UniformNode(4, kPix, "NVIDIA L40S", 0, /*nics=*/1);
    for (int i = 0; i < 4; ++i) topo.SetGpuNicLink(i, 0, i >= 2 ? kPxb : kSys);
    std::optional<GpuChoice> choice = ChooseGpus(topo, AllFree(4), 2);
    REQUIRE(choice);
    CHECK(choice->gpus == std::vector<int>{2, 3});
    CHECK(choice->nic_link == kPxb);
  }
  SECTION("one NUMA node, even when its GPUs are interleaved") {
    NodeTopology topo = UniformNode(4, kNode, "NVIDIA L40S");
    for (int i = 0; i < 4; ++i) topo.gpus()[i].numa_node = i % 2;
    CHECK(Chosen(topo, AllFree(4), 2) == std::vector<int>{0, 2});
    CHECK(Chosen(topo, AllFreeBut(4, {2}), 2) == std::vector<int>{1, 3});
  }
}

TEST_CASE("a stale or mixed matrix never makes a pair look faster than its slower side") {
  NodeTopology topo = UniformNode(4, kPix, "NVIDIA A100-PCIE-40GB");
  topo.SetGpuLink(0, 1, Nv(4));                 // 1 -> 0 still says PIX
  topo.SetGpuLink(2, 3, {LinkKind::kSelf, 0});  // nonsense off the diagonal
  std::optional<GpuChoice> pair = ChooseGpus(topo, MaskOf({0, 1}), 2);
  REQUIRE(pair);
  CHECK(pair->ring_bandwidth_gbps == Approx(25));
  CHECK(pair->worst_link == kPix);
  std::optional<GpuChoice> stale = ChooseGpus(topo, MaskOf({2, 3}), 2);
  REQUIRE(stale);
  CHECK(stale->worst_link == kSys);

  NodeTopology mixed = UniformNode(2, kPix, "NVIDIA H200");
  mixed.gpus()[1].model = "Tesla V100-SXM2-32GB";  // Gen3 next to Gen5
  std::optional<GpuChoice> slow = ChooseGpus(mixed, AllFree(2), 2);
  REQUIRE(slow);
  CHECK(slow->ring_bandwidth_gbps == Approx(12));
}

TEST_CASE("degenerate nodes") {
  CHECK_FALSE(ChooseGpus(NodeTopology(), ~uint64_t{0}, 1));
  NodeTopology single = UniformNode(1, kSys, "");
  std::optional<GpuChoice> one = ChooseGpus(single, 1, 1);
  REQUIRE(one);
  CHECK(one->gpus == std::vector<int>{0});
  CHECK_FALSE(one->nic_link.has_value());
  CHECK_FALSE(ChooseGpus(single, 1, 2));
}
