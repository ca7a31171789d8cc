// ChooseGpus on the real `nvidia-smi topo -m` fixtures, as tables of
// (free GPUs, k) -> what the choice must look like.
#include <catch2/catch.hpp>

#include "daemon/core/placement/gpu_choice.h"
#include "placement_test_util.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::FormatLink;
using gpusched::topology::LinkKind;
using gpusched::topology::NodeTopology;

namespace {

struct Case {
  const char* why;
  uint64_t free_mask;
  int k;
  std::vector<int> ring;    // expected GpuChoice::gpus, in order; empty: not checked
  std::vector<int> within;  // every chosen GPU must be one of these; empty: not checked
  double ring_gbps;         // expected ring bandwidth; < 0: not checked
  const char* worst_link;   // expected FormatLink(worst_link); nullptr: not checked
};

void Check(const NodeTopology& topo, const Case& c) {
  INFO(c.why);
  std::optional<GpuChoice> choice = ChooseGpus(topo, c.free_mask, c.k);
  REQUIRE(choice.has_value());
  INFO("chosen ring: " << ::Catch::Detail::stringify(choice->gpus));
  CHECK(choice->gpus.size() == static_cast<size_t>(c.k));
  for (int g : choice->gpus) CHECK((c.free_mask >> g & 1) == 1);
  if (!c.ring.empty()) CHECK(choice->gpus == c.ring);
  for (int g : choice->gpus) {
    if (!c.within.empty()) CHECK(std::count(c.within.begin(), c.within.end(), g) == 1);
  }
  if (c.ring_gbps >= 0) CHECK(choice->ring_bandwidth_gbps == Approx(c.ring_gbps));
  if (c.worst_link != nullptr) CHECK(FormatLink(choice->worst_link) == c.worst_link);
  CHECK(choice->exact);
}

// Every pair of the choice is linked as `kind`.
void CheckAllPairs(const NodeTopology& topo, const std::vector<int>& gpus, LinkKind kind) {
  for (int a : gpus) {
    for (int b : gpus) {
      if (a != b) CHECK(topo.GpuLink(a, b).kind == kind);
    }
  }
}

}  // namespace

TEST_CASE("DGX-1 V100 hybrid cube mesh: NVLink quads, NV2 pairs, NVLink-only rings") {
  NodeTopology topo = LoadTopo("dgx1-v100.txt", "Tesla V100-SXM2-32GB");
  const Case cases[] = {
      {"a pair gets an NV2 link inside one quad", AllFree(8), 2, {0, 3}, {}, 50, "NV2"},
      {"a quad gets the fully NVLinked quad 0-3, ring along NV1/NV2", AllFree(8), 4, {0, 1, 2, 3}, {}, 25, "NV1"},
      {"eight GPUs ring over the NV2 links only (they form one 8-cycle)",
       AllFree(8),
       8,
       {0, 3, 2, 1, 5, 6, 7, 4},
       {},
       50,
       "NV2"},
      {"three GPUs: an NVLinked triangle inside quad 0-3", AllFree(8), 3, {}, {0, 1, 2, 3}, 25, "NV1"},
      {"GPU 0 busy: the pair goes next to it, leaving quad 4-7 whole", AllFreeBut(8, {0}), 2, {}, {1, 2, 3}, 50, "NV2"},
      {"3 and 7 busy: NV2 pairs 0-4 and 1-5 would break both quads",
       AllFreeBut(8, {3, 7}),
       2,
       {},
       {0, 1, 2},
       50,
       "NV2"},
      {"only the cube face 0,3,4,7 free: the ring follows its NVLinks, not the SYS diagonals",
       MaskOf({0, 3, 4, 7}),
       4,
       {0, 3, 7, 4},
       {},
       25,
       "NV1"},
      {"quad 0-3 partly busy: a single GPU fills it", AllFreeBut(8, {0, 1, 2}), 1, {3}, {}, 0, "X"},
  };
  for (const Case& c : cases) Check(topo, c);

  // Whenever an NV2 pair inside one quad is free, a pair job never straddles
  // the quads (the cross-quad NV2 links 0-4 and 1-5 are just as fast).
  for (uint64_t free_mask = 0; free_mask < 256; ++free_mask) {
    bool same_quad_nv2_free = false;
    for (int a = 0; a < 8; ++a) {
      for (int b = a + 1; b < 8; ++b) {
        same_quad_nv2_free |=
            (free_mask >> a & 1) && (free_mask >> b & 1) && a / 4 == b / 4 && topo.GpuLink(a, b) == Nv(2);
      }
    }
    if (!same_quad_nv2_free) continue;
    INFO("free_mask=" << free_mask);
    std::optional<GpuChoice> pair = ChooseGpus(topo, free_mask, 2);
    REQUIRE(pair);
    CHECK(pair->gpus[0] / 4 == pair->gpus[1] / 4);
    CHECK(pair->worst_link == Nv(2));
  }

  std::optional<GpuChoice> quad = ChooseGpus(topo, AllFree(8), 4);
  REQUIRE(quad);
  CheckAllPairs(topo, quad->gpus, LinkKind::kNvLink);
  CHECK(quad->numa_domains_spanned == 1);  // from CPU affinity: topo -m has no NUMA column here
  CHECK(quad->nic_link == gpusched::topology::Link{LinkKind::kPix, 0});
}

TEST_CASE("DGX A100 (NVSwitch, NUMA 3/1/7/5 in GPU pairs): NUMA and best fit decide") {
  NodeTopology topo = LoadTopo("dgx-a100.txt", "NVIDIA A100-SXM4-40GB");
  const Case cases[] = {
      {"a pair shares a NUMA node and its PXB NICs", AllFree(8), 2, {0, 1}, {}, 300, "NV12"},
      {"a quad spans the fewest NUMA nodes (two)", AllFree(8), 4, {0, 1, 2, 3}, {}, 300, "NV12"},
      {"all eight", AllFree(8), 8, {0, 1, 2, 3, 4, 5, 6, 7}, {}, 300, "NV12"},
      {"GPU 0 busy: one GPU takes its NUMA sibling", AllFreeBut(8, {0}), 1, {1}, {}, 0, "X"},
      {"GPU 2 busy: a pair takes a whole NUMA node (the lowest), not lone GPU 3",
       AllFreeBut(8, {2}),
       2,
       {0, 1},
       {},
       300,
       "NV12"},
      {"GPU 2 busy: one GPU takes lone GPU 3", AllFreeBut(8, {2}), 1, {3}, {}, 0, "X"},
      {"one free GPU per NUMA node: any pair spans two, lowest wins", MaskOf({1, 3, 5, 7}), 2, {1, 3}, {}, 300, "NV12"},
  };
  for (const Case& c : cases) Check(topo, c);
  std::optional<GpuChoice> pair = ChooseGpus(topo, AllFree(8), 2);
  REQUIRE(pair);
  CHECK(pair->numa_domains_spanned == 1);
  CHECK(pair->nic_link == gpusched::topology::Link{LinkKind::kPxb, 0});
}

TEST_CASE("HGX H200 (NVSwitch, NUMA halves 0-3 / 4-7, one PXB NIC per GPU)") {
  NodeTopology topo = LoadTopo("hgx-h200-8gpu-12nic.txt", "NVIDIA H200");
  const Case cases[] = {
      {"a quad is one NUMA half", AllFree(8), 4, {0, 1, 2, 3}, {}, 450, "NV18"},
      {"GPU 0 busy: a pair stays in the used half", AllFreeBut(8, {0}), 2, {}, {1, 2, 3}, 450, "NV18"},
      {"GPU 0 busy: a quad takes the whole other half", AllFreeBut(8, {0}), 4, {4, 5, 6, 7}, {}, 450, "NV18"},
      {"GPU 4 busy: three GPUs fill half 4-7, keeping half 0-3 whole",
       AllFreeBut(8, {4}),
       3,
       {5, 6, 7},
       {},
       450,
       "NV18"},
      {"k = 1: any GPU with its PXB NIC, next to nothing busy: the lowest", AllFree(8), 1, {0}, {}, 0, "X"},
  };
  for (const Case& c : cases) Check(topo, c);
}

TEST_CASE("AWS p4d / p5 (NVSwitch, two NUMA halves, no NICs in topo -m)") {
  for (auto [file, model, gbps, link] : {std::tuple{"aws-p4d.24xlarge.txt", "NVIDIA A100-SXM4-40GB", 300.0, "NV12"},
                                         std::tuple{"aws-p5.48xlarge.txt", "NVIDIA H100 80GB HBM3", 450.0, "NV18"}}) {
    INFO(file);
    NodeTopology topo = LoadTopo(file, model);
    const Case cases[] = {
        {"a quad is one NUMA half", AllFree(8), 4, {0, 1, 2, 3}, {}, gbps, link},
        {"GPU 5 busy: a pair joins it", AllFreeBut(8, {5}), 2, {}, {4, 6, 7}, gbps, link},
        {"GPUs 0 and 5 busy: 3 GPUs fill either half exactly; the lowest",
         AllFreeBut(8, {0, 5}),
         3,
         {1, 2, 3},
         {},
         gbps,
         link},
    };
    for (const Case& c : cases) Check(topo, c);
    std::optional<GpuChoice> choice = ChooseGpus(topo, AllFree(8), 2);
    REQUIRE(choice);
    CHECK_FALSE(choice->nic_link.has_value());
  }
}

TEST_CASE("AWS g6e 4x L40S (PCIe, every pair NODE, one NUMA node)") {
  NodeTopology topo = LoadTopo("aws-g6e.12xlarge-4xL40S.txt", "NVIDIA L40S");
  const Case cases[] = {
      {"a pair over NODE: Gen4 x16 at 0.80", AllFree(4), 2, {0, 1}, {}, 20, "NODE"},
      {"GPU 1 busy", AllFreeBut(4, {1}), 2, {0, 2}, {}, 20, "NODE"},
      {"all four", AllFree(4), 4, {0, 1, 2, 3}, {}, 20, "NODE"},
  };
  for (const Case& c : cases) Check(topo, c);
}

TEST_CASE("8x RTX 4090 (every GPU pair SYS; NUMA halves 0-3 / 4-7; NICs PHB to GPU 6 only)") {
  NodeTopology topo = LoadTopo("pcie-8x-rtx4090.txt", "NVIDIA GeForce RTX 4090");
  const double sys = 25 * 0.65;
  const Case cases[] = {
      {"a pair stays in one NUMA half; GPU 6 and its NIC stay free", AllFree(8), 2, {0, 1}, {}, sys, "SYS"},
      {"GPU 0 busy: the pair goes to the partly used half", AllFreeBut(8, {0}), 2, {}, {1, 2, 3}, sys, "SYS"},
      {"GPU 4 busy: the pair goes to the partly used half and leaves GPU 6 free",
       AllFreeBut(8, {4}),
       2,
       {5, 7},
       {},
       sys,
       "SYS"},
      {"a quad is a NUMA half, the one without the NIC GPU", AllFree(8), 4, {0, 1, 2, 3}, {}, sys, "SYS"},
      {"one GPU: the only one near a NIC (rule 2 before best fit)", AllFree(8), 1, {6}, {}, 0, "X"},
  };
  for (const Case& c : cases) Check(topo, c);
}

TEST_CASE("every fixture: busy GPUs are never chosen; too few free or k <= 0 is nullopt") {
  for (const TopoFixture& fixture : AllTopoFixtures()) {
    INFO(fixture.file);
    NodeTopology topo = LoadTopo(fixture);
    const int n = topo.num_gpus();
    CHECK_FALSE(ChooseGpus(topo, AllFree(n), 0));
    CHECK_FALSE(ChooseGpus(topo, AllFree(n), -1));
    CHECK_FALSE(ChooseGpus(topo, AllFree(n), n + 1));
    CHECK_FALSE(ChooseGpus(topo, 0, 1));
    CHECK_FALSE(ChooseGpus(topo, AllFreeBut(n, {0}), n));
    // Bits beyond the node's GPUs are not GPUs.
    CHECK_FALSE(ChooseGpus(topo, ~AllFree(n), 1));
    std::optional<GpuChoice> all = ChooseGpus(topo, ~uint64_t{0}, n);
    REQUIRE(all);
    CHECK(Sorted(all->gpus) == Sorted([&] {
            std::vector<int> v;
            for (int i = 0; i < n; ++i) v.push_back(i);
            return v;
          }()));
    std::optional<GpuChoice> one = ChooseGpus(topo, AllFreeBut(n, {0, 1}), 2);
    REQUIRE(one);
    for (int g : one->gpus) CHECK(g >= 2);
  }
}
