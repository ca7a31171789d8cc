// The topology policy on real `nvidia-smi topo -m` fixtures: what an ML
// engineer checks after `gpusched submit`: did my gang get the NVLinks, did
// it stay under one leaf switch, and if it waits, does it say for what.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <iterator>
#include <memory>
#include <string>

#include "daemon/core/policy/gang_estimate.h"
#include "daemon/core/policy/placement_policy.h"
#include "tests/unit/core/policy_test_cluster.h"

using namespace gpusched;
using namespace gpusched::core::policy_testing;
using core::ClusterState;
using core::GangRequest;
using core::PlacementResult;
using topology::LinkKind;

namespace {

std::unique_ptr<core::PlacementPolicy> Policy(const char* name) {
  auto policy = core::MakePlacementPolicy(name);
  REQUIRE(policy.ok());
  return *std::move(policy);
}

PlacementResult Place(const char* policy, const ClusterState& cluster, const GangRequest& req) {
  return Policy(policy)->Place(cluster, req);
}

ClusterState OneNode(const Machine& machine, const char* name = "node") {
  ClusterState cluster;
  AddNode(cluster, name, machine);
  return cluster;
}

// Every GPU pair of the part is linked as `kind` on its node.
bool AllPairs(const ClusterState& cluster, const v1::NodeAllocation& part, LinkKind kind) {
  const core::NodeSlot* slot = cluster.Find(part.node());
  for (int a : part.gpu_indices()) {
    for (int b : part.gpu_indices()) {
      if (a != b && slot->topology.GpuLink(slot->PositionOf(a), slot->PositionOf(b)).kind != kind) return false;
    }
  }
  return true;
}

// Every hop of the ring the part lists (CUDA_VISIBLE_DEVICES order) is NVLink.
bool RingIsNvLinkOnly(const ClusterState& cluster, const v1::NodeAllocation& part) {
  const core::NodeSlot* slot = cluster.Find(part.node());
  const int k = part.gpu_indices_size();
  for (int i = 0; i < k; ++i) {
    int a = slot->PositionOf(part.gpu_indices(i));
    int b = slot->PositionOf(part.gpu_indices((i + 1) % k));
    if (slot->topology.GpuLink(a, b).kind != LinkKind::kNvLink) return false;
  }
  return true;
}

std::set<int> NumaNodesOf(const ClusterState& cluster, const v1::NodeAllocation& part) {
  const core::NodeSlot* slot = cluster.Find(part.node());
  std::set<int> numa;
  for (int g : part.gpu_indices()) numa.insert(slot->topology.gpus()[slot->PositionOf(g)].numa_node);
  return numa;
}

// One single-node case: GPUs `busy` held, `k` GPUs asked for.
struct NodeCase {
  const char* why;
  std::vector<int> busy;
  int k;
  std::set<int> exactly;   // the chosen set; empty: not checked
  std::set<int> within;    // every chosen GPU is one of these; empty: not checked
  const char* worst_link;  // the allocation's worst_link
  double gbps;             // its est_bus_bandwidth_gbps
};

v1::Allocation CheckNodeCase(const Machine& machine, const NodeCase& c) {
  INFO(machine.file << ": " << c.why);
  ClusterState cluster = OneNode(machine);
  if (!c.busy.empty()) Hold(cluster, "node", c.busy, 99);
  PlacementResult result = Place("topology", cluster, Gpus(c.k));
  INFO(result.reason());
  REQUIRE(result.placed());
  const v1::Allocation& a = result.allocation();
  INFO(Describe(a));
  REQUIRE(a.nodes_size() == 1);
  const std::set<int> chosen = GpuSet(a.nodes(0));
  CHECK(chosen.size() == static_cast<size_t>(c.k));
  for (int g : c.busy) CHECK(chosen.count(g) == 0);
  if (!c.exactly.empty()) CHECK(chosen == c.exactly);
  for (int g : chosen) {
    if (!c.within.empty()) CHECK(c.within.count(g) == 1);
  }
  CHECK(a.worst_link() == c.worst_link);
  CHECK(a.est_bus_bandwidth_gbps() == Approx(c.gbps));
  CHECK(a.span() == "node");
  CHECK(a.policy() == "topology");
  return a;
}

}  // namespace

TEST_CASE("DGX-1 V100 hybrid cube mesh: quads fully NVLinked, pairs on NV2, 8-GPU rings on NVLink only",
          "[policy][topology][fixtures]") {
  // The cube mesh: quads 0-3 and 4-7 are fully NVLinked (NV1/NV2 mix); the
  // links between the quads (0-4, 1-5, 2-6, 3-7) are NV2/NV1; the quads'
  // diagonals across (0-5, 0-6, ...) are SYS.
  const NodeCase cases[] = {
      {"an idle node: a 4-GPU job gets the fully NVLinked quad 0-3 (ring 25 GB/s over NV1)",
       {},
       4,
       {0, 1, 2, 3},
       {},
       "NV1",
       25},
      {"an idle node: a pair gets an NV2 pair (50 GB/s), not an NV1 one", {}, 2, {}, {}, "NV2", 50},
      {"GPU 0 busy: the pair goes next to it in quad 0-3, leaving quad 4-7 whole", {0}, 2, {}, {1, 2, 3}, "NV2", 50},
      {"quad 0-3 broken (GPU 1 busy): a quad job takes quad 4-7", {1}, 4, {4, 5, 6, 7}, {}, "NV1", 25},
      {"only NV1 pairs free (2-7 busy): PREFER still places the NV1 pair",
       {2, 3, 4, 5, 6, 7},
       2,
       {0, 1},
       {},
       "NV1",
       25},
      {"all eight: the ring follows the NV2 8-cycle 0-3-2-1-5-6-7-4", {}, 8, {0, 1, 2, 3, 4, 5, 6, 7}, {}, "NV2", 50},
  };
  for (const NodeCase& c : cases) CheckNodeCase(kDgx1, c);

  ClusterState cluster = OneNode(kDgx1);
  SECTION("the quad's every GPU pair is NVLinked") {
    auto quad = Place("topology", cluster, Gpus(4));
    REQUIRE(quad.placed());
    CHECK(AllPairs(cluster, quad.allocation().nodes(0), LinkKind::kNvLink));
  }
  SECTION("the pair's link is NV2 and stays inside one quad") {
    auto pair = Place("topology", cluster, Gpus(2));
    REQUIRE(pair.placed());
    const auto& part = pair.allocation().nodes(0);
    const core::NodeSlot* slot = cluster.Find("node");
    CHECK(slot->topology.GpuLink(part.gpu_indices(0), part.gpu_indices(1)) == topology::Link{LinkKind::kNvLink, 2});
    CHECK(part.gpu_indices(0) / 4 == part.gpu_indices(1) / 4);
  }
  SECTION("an 8-GPU ring only uses NVLink hops, in the order CUDA_VISIBLE_DEVICES lists") {
    auto all = Place("topology", cluster, Gpus(8));
    REQUIRE(all.placed());
    INFO(Describe(all.allocation()));
    CHECK(RingIsNvLinkOnly(cluster, all.allocation().nodes(0)));
    CHECK(GpuList(all.allocation().nodes(0)) == std::vector<int>{0, 3, 2, 1, 5, 6, 7, 4});
    // First-fit lists 0..7: hop 3-4 is SYS, the ring runs at PCIe speed.
    auto blind = Place("first-fit", cluster, Gpus(8));
    REQUIRE(blind.placed());
    CHECK(blind.allocation().worst_link() == "SYS");
    CHECK(all.allocation().est_bus_bandwidth_gbps() > blind.allocation().est_bus_bandwidth_gbps());
  }
}

TEST_CASE("NVLinked pairs (0-1 NV4, 2-3 NV4, the rest SYS): a pair job never gets {1,2}", "[policy][topology]") {
  topology::NodeTopology topo(4, 0);
  for (int g = 0; g < 4; ++g) {
    topo.gpus()[g].index = g;
    topo.gpus()[g].model = "NVIDIA RTX A6000";
    topo.gpus()[g].memory_mb = 49140;
    topo.gpus()[g].numa_node = 0;
  }
  const topology::Link nv4{LinkKind::kNvLink, 4};
  for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 3}}) {
    topo.SetGpuLink(a, b, nv4);
    topo.SetGpuLink(b, a, nv4);
  }
  struct Case {
    std::vector<int> busy;
    std::set<int> expected;
    const char* worst_link;
  } const cases[] = {
      {{}, {0, 1}, "NV4"},     {{0}, {2, 3}, "NV4"},  // 1 is free but alone: the other bridged pair
      {{3}, {0, 1}, "NV4"},    {{1}, {2, 3}, "NV4"},
      {{0, 3}, {1, 2}, "SYS"},  // the only two free: PREFER places them anyway
  };
  for (const Case& c : cases) {
    ClusterState cluster;
    AddUpNode(cluster, NodeInfoFor("bridged", topo, {}, 64, 256000));
    if (!c.busy.empty()) Hold(cluster, "bridged", c.busy, 7);
    INFO("busy " << ::Catch::Detail::stringify(c.busy));
    auto result = Place("topology", cluster, Gpus(2));
    REQUIRE(result.placed());
    INFO(Describe(result.allocation()));
    CHECK(GpuSet(result.allocation().nodes(0)) == c.expected);
    CHECK(result.allocation().worst_link() == c.worst_link);
  }
  SECTION("whatever is busy, a pair job is {1,2} only when no bridged pair is free") {
    for (int busy_mask = 0; busy_mask < 16; ++busy_mask) {
      ClusterState cluster;
      AddUpNode(cluster, NodeInfoFor("bridged", topo, {}, 64, 256000));
      v1::Allocation hold;
      auto* part = hold.add_nodes();
      part->set_node("bridged");
      for (int g = 0; g < 4; ++g) {
        if (busy_mask >> g & 1) part->add_gpu_indices(g);
      }
      REQUIRE(cluster.Allocate(5, hold).ok());
      auto result = Place("topology", cluster, Gpus(2));
      const bool pair01 = !(busy_mask & 0b0011), pair23 = !(busy_mask & 0b1100);
      INFO("busy mask " << busy_mask << ": " << result.reason());
      if (4 - std::popcount(static_cast<unsigned>(busy_mask)) < 2) {
        CHECK_FALSE(result.placed());
        continue;
      }
      REQUIRE(result.placed());
      const std::set<int> chosen = GpuSet(result.allocation().nodes(0));
      if (pair01 || pair23) {
        CHECK((chosen == std::set<int>{0, 1} || chosen == std::set<int>{2, 3}));
        CHECK(result.allocation().worst_link() == "NV4");
      }
    }
  }
}

TEST_CASE("PCIe-only boxes: a pair stays inside one NUMA half when one is free", "[policy][topology][fixtures]") {
  // 8x RTX 4090: every pair SYS, NUMA 0 = GPUs 0-3, NUMA 1 = GPUs 4-7.
  const double sys = 25 * 0.65;  // Gen4 x16 derated for SYS
  const NodeCase rtx[] = {
      {"idle: the pair takes one NUMA half", {}, 2, {}, {0, 1, 2, 3}, "SYS", sys},
      {"GPU 0 busy: the pair joins it in half 0-3", {0}, 2, {}, {1, 2, 3}, "SYS", sys},
      {"GPUs 0-2 busy: lone GPU 3 would cross the sockets; the pair takes half 4-7",
       {0, 1, 2},
       2,
       {},
       {4, 5, 6, 7},
       "SYS",
       sys},
      {"GPU 4 busy: the pair fills half 4-7", {4}, 2, {}, {5, 6, 7}, "SYS", sys},
      {"only 3 and 7 free: crossing is the only way, and PREFER takes it",
       {0, 1, 2, 4, 5, 6},
       2,
       {3, 7},
       {},
       "SYS",
       sys},
  };
  for (const NodeCase& c : rtx) {
    v1::Allocation a = CheckNodeCase(kRtx4090, c);
    INFO(c.why);
    const bool half_free = &c != &rtx[std::size(rtx) - 1];  // all but the last case leave a pair in one half
    if (half_free) CHECK(NumaNodesOf(OneNode(kRtx4090), a.nodes(0)).size() == 1);
  }
  // g6e.12xlarge: 4x L40S, all pairs NODE, one NUMA node.
  const NodeCase l40s[] = {
      {"idle: any pair is one NUMA node over NODE (Gen4 x16 at 0.80)", {}, 2, {0, 1}, {}, "NODE", 20},
      {"GPU 1 busy", {1}, 2, {}, {0, 2, 3}, "NODE", 20},
      {"all four", {}, 4, {0, 1, 2, 3}, {}, "NODE", 20},
  };
  for (const NodeCase& c : l40s) {
    v1::Allocation a = CheckNodeCase(kG6e, c);
    CHECK(NumaNodesOf(OneNode(kG6e), a.nodes(0)) == std::set<int>{0});
  }
}

namespace {

// Two leaves under one spine, 8-GPU HGX H200 nodes. Name order puts leaf B
// first, so the topology-blind answer (name order) crosses the spine.
//   leaf-b: b1 idle, b2 with 6 GPUs busy (2 free)
//   leaf-a: c1, c2 idle
ClusterState TwoLeaves() {
  ClusterState cluster;
  AddNode(cluster, "b1", kHgxH200, Net("leaf-b", "spine-1"));
  AddNode(cluster, "b2", kHgxH200, Net("leaf-b", "spine-1"));
  AddNode(cluster, "c1", kHgxH200, Net("leaf-a", "spine-1"));
  AddNode(cluster, "c2", kHgxH200, Net("leaf-a", "spine-1"));
  HoldFirst(cluster, "b2", 6, 100);
  return cluster;
}

// H200 node: 12 NICs of unknown speed (200 Gb/s assumed) for 8 GPUs.
constexpr double kLeafGbps = 12 * 200 / 8.0 / 8;  // 37.5 GB/s per GPU
constexpr double kSpineGbps = kLeafGbps / 2;
constexpr double kH200NvLinkGbps = 18 * 25;  // NV18 Hopper

}  // namespace

TEST_CASE("a 16-GPU job on 8-GPU H200 nodes goes to two nodes under one leaf, not across the spine",
          "[policy][topology][multinode]") {
  ClusterState cluster = TwoLeaves();
  auto result = Place("topology", cluster, Gpus(16));
  REQUIRE(result.placed());
  const v1::Allocation& a = result.allocation();
  INFO(Describe(a));
  CHECK(NodeSet(a) == std::set<std::string>{"c1", "c2"});
  CHECK(a.span() == "leaf leaf-a");
  CHECK(a.worst_link() == "NET");
  CHECK(a.est_bus_bandwidth_gbps() == Approx(kLeafGbps));
  for (int i = 0; i < a.nodes_size(); ++i) {
    CHECK(a.nodes(i).gpu_indices_size() == 8);
    CHECK(a.nodes(i).node_rank() == i);
    CHECK(a.nodes(i).address() == a.nodes(i).node() + ".cluster.local");
  }

  // What the topology-blind policy would have done: name order, across the spine.
  auto blind = Place("first-fit", cluster, Gpus(16));
  REQUIRE(blind.placed());
  INFO(Describe(blind.allocation()));
  CHECK(blind.allocation().span() == "spine spine-1");
  CHECK(blind.allocation().est_bus_bandwidth_gbps() == Approx(kSpineGbps));
}

TEST_CASE("when no leaf has room, a 16-GPU job spans the spine; without labels, the cluster",
          "[policy][topology][multinode]") {
  ClusterState cluster = TwoLeaves();
  HoldFirst(cluster, "c2", 4, 101);  // leaf-a: 12 free, leaf-b: 10 free
  auto result = Place("topology", cluster, Gpus(16));
  REQUIRE(result.placed());
  INFO(Describe(result.allocation()));
  CHECK(result.allocation().nodes_size() == 2);  // the two idle nodes, b1 and c1
  CHECK(NodeSet(result.allocation()) == std::set<std::string>{"b1", "c1"});
  CHECK(result.allocation().span() == "spine spine-1");
  CHECK(result.allocation().est_bus_bandwidth_gbps() == Approx(kSpineGbps));

  ClusterState unlabeled;
  for (const char* name : {"u1", "u2", "u3"}) AddNode(unlabeled, name, kHgxH200);
  auto anywhere = Place("topology", unlabeled, Gpus(16));
  REQUIRE(anywhere.placed());
  CHECK(anywhere.allocation().span() == "cluster");
  CHECK(anywhere.allocation().est_bus_bandwidth_gbps() == Approx(kLeafGbps / 4));
}

TEST_CASE("an NVLink domain beats a leaf switch", "[policy][topology][multinode]") {
  ClusterState cluster = TwoLeaves();
  // Two more nodes on one multi-node NVLink fabric, under different leaves.
  AddNode(cluster, "d1", kHgxH200, Net("leaf-a", "spine-1", "nvl-0"));
  AddNode(cluster, "d2", kHgxH200, Net("leaf-b", "spine-1", "nvl-0"));
  auto result = Place("topology", cluster, Gpus(16));
  REQUIRE(result.placed());
  INFO(Describe(result.allocation()));
  CHECK(NodeSet(result.allocation()) == std::set<std::string>{"d1", "d2"});
  CHECK(result.allocation().span() == "nvlink-domain nvl-0");
  CHECK(result.allocation().est_bus_bandwidth_gbps() == Approx(kH200NvLinkGbps));
}

TEST_CASE("a gang that fits one node never spans two", "[policy][topology][multinode]") {
  ClusterState cluster = TwoLeaves();
  HoldFirst(cluster, "c1", 1, 102);
  // 7 free on c1, 8 on b1 and c2, 2 on b2: 7 GPUs fit one node (c1 fits best).
  auto result = Place("topology", cluster, Gpus(7));
  REQUIRE(result.placed());
  INFO(Describe(result.allocation()));
  CHECK(NodeSet(result.allocation()) == std::set<std::string>{"c1"});
  CHECK(result.allocation().span() == "node");
  CHECK(result.allocation().worst_link() == "NV18");
  CHECK(result.allocation().est_bus_bandwidth_gbps() == Approx(kH200NvLinkGbps));
}

// Fewest nodes comes before the network tier and the group: leaf-b could
// hold 16 GPUs on three nodes (8 + 4 + 4), leaf-a on two idle ones.
TEST_CASE("a 16-GPU gang prefers two whole nodes under one leaf to three partial ones under another",
          "[policy][topology][multinode]") {
  ClusterState cluster;
  AddNode(cluster, "b1", kHgxH200, Net("leaf-b", "spine-1"));
  AddNode(cluster, "b2", kHgxH200, Net("leaf-b", "spine-1"));
  AddNode(cluster, "b3", kHgxH200, Net("leaf-b", "spine-1"));
  AddNode(cluster, "c1", kHgxH200, Net("leaf-a", "spine-1"));
  AddNode(cluster, "c2", kHgxH200, Net("leaf-a", "spine-1"));
  HoldFirst(cluster, "b2", 4, 100);
  HoldFirst(cluster, "b3", 4, 101);
  auto result = Place("topology", cluster, Gpus(16));
  REQUIRE(result.placed());
  INFO(Describe(result.allocation()));
  CHECK(result.allocation().nodes_size() == 2);
}

// STRICT must never settle for less than PREFER or first-fit would give:
// fixed shapes rank nodes by their ring first, and what is free now raises
// the ideal. Here the 4-GPU L40S box without NICs (200 Gb/s assumed for 4
// GPUs: 1.56 GB/s per GPU across the cluster) must lose to the A100 + H200
// nodes (12 NICs each: 9.4 GB/s).
TEST_CASE("STRICT never places a gang worse than PREFER (or first-fit) would", "[policy][topology][modes]") {
  ClusterState cluster;
  AddNode(cluster, "a", kDgxA100);
  AddNode(cluster, "b", kHgxH200);
  AddNode(cluster, "c", kG6e);
  auto prefer = Place("topology", cluster, Shape(2, 1));
  auto strict = Place("topology", cluster, Shape(2, 1, v1::TOPOLOGY_MODE_STRICT));
  auto first = Place("first-fit", cluster, Shape(2, 1));
  REQUIRE(prefer.placed());
  REQUIRE(strict.placed());
  REQUIRE(first.placed());
  INFO("prefer " << Describe(prefer.allocation()) << "\nstrict " << Describe(strict.allocation()) << "\nfirst-fit "
                 << Describe(first.allocation()));
  CHECK(prefer.allocation().est_bus_bandwidth_gbps() == Approx(12 * 200 / 8.0 / 8 / 4));
  CHECK(strict.allocation().est_bus_bandwidth_gbps() >= prefer.allocation().est_bus_bandwidth_gbps());
  CHECK(strict.allocation().est_bus_bandwidth_gbps() >= first.allocation().est_bus_bandwidth_gbps());
}

// The GPU-choice cache is keyed by node name and NodeSlot::generation, which
// is unique in the process: a policy used on a second cluster (simulator,
// benchmarks, tests) must not reuse the first cluster's topology for a node
// of the same name.
TEST_CASE("a topology policy reused on a new cluster uses the new cluster's topology", "[policy][topology][cache]") {
  auto policy = Policy("topology");
  SECTION("RTX 4090 box, then a DGX-1 of the same name: the pair must still get NV2") {
    ClusterState before = OneNode(kRtx4090, "n");
    REQUIRE(policy->Place(before, Gpus(2)).placed());
    ClusterState after = OneNode(kDgx1, "n");
    auto pair = policy->Place(after, Gpus(2));
    REQUIRE(pair.placed());
    INFO(Describe(pair.allocation()));
    CHECK(pair.allocation().worst_link() == "NV2");  // a fresh policy: NV2 at 50 GB/s
  }
  SECTION("4-GPU L40S box, then an idle H200 of the same name: STRICT 8 GPUs must place") {
    ClusterState before = OneNode(kG6e, "n");
    REQUIRE(policy->Place(before, Gpus(1)).placed());
    ClusterState after = OneNode(kHgxH200, "n");
    auto all = policy->Place(after, Gpus(8, v1::TOPOLOGY_MODE_STRICT));
    INFO(all.reason());  // "waiting for 8 free GPUs (8 free on 1 up nodes)"
    CHECK(all.placed());
  }
}

TEST_CASE("STRICT waits for the ideal placement and says what for; PREFER places the best now",
          "[policy][topology][modes]") {
  SECTION("DGX-1: a pair job when only an NV1 pair is free") {
    ClusterState cluster = OneNode(kDgx1);
    Hold(cluster, "node", {3, 4, 5, 6, 7}, 50);
    Hold(cluster, "node", {2}, 51);
    // Free: 0 and 1, linked by NV1 (25 GB/s); an idle DGX-1 gives NV2 (50).
    auto strict = Place("topology", cluster, Gpus(2, v1::TOPOLOGY_MODE_STRICT));
    REQUIRE_FALSE(strict.placed());
    CHECK(strict.reason() ==
          "strict topology: waiting for 2 GPUs on one node at ~50 GB/s (NV2); the best free now is 2 GPUs on one "
          "node at ~25 GB/s (NV1)");
    auto prefer = Place("topology", cluster, Gpus(2, v1::TOPOLOGY_MODE_PREFER));
    REQUIRE(prefer.placed());
    CHECK(GpuSet(prefer.allocation().nodes(0)) == std::set<int>{0, 1});
    CHECK(prefer.allocation().worst_link() == "NV1");

    ReleaseAll(cluster, "node", 51);  // GPU 2 frees: 1-2 is NV2
    auto now = Place("topology", cluster, Gpus(2, v1::TOPOLOGY_MODE_STRICT));
    REQUIRE(now.placed());
    CHECK(GpuSet(now.allocation().nodes(0)) == std::set<int>{1, 2});
    CHECK(now.allocation().worst_link() == "NV2");
    CHECK(now.allocation().policy() == "topology");
  }
  SECTION("16 GPUs: strict waits for a leaf rather than crossing the spine") {
    ClusterState cluster = TwoLeaves();
    HoldFirst(cluster, "c2", 4, 101);
    auto strict = Place("topology", cluster, Gpus(16, v1::TOPOLOGY_MODE_STRICT));
    REQUIRE_FALSE(strict.placed());
    CHECK_THAT(strict.reason(), Catch::StartsWith("strict topology: waiting for 16 GPUs on 2 nodes within leaf "));
    CHECK_THAT(strict.reason(),
               Catch::EndsWith("the best free now is 16 GPUs on 2 nodes within spine spine-1 at ~19 GB/s (NET)"));
    auto prefer = Place("topology", cluster, Gpus(16));
    REQUIRE(prefer.placed());
    CHECK(prefer.allocation().span() == "spine spine-1");

    ReleaseAll(cluster, "c2", 101);
    auto now = Place("topology", cluster, Gpus(16, v1::TOPOLOGY_MODE_STRICT));
    REQUIRE(now.placed());
    CHECK(now.allocation().span() == "leaf leaf-a");
  }
  SECTION("strict with nothing free names both") {
    ClusterState cluster = OneNode(kHgxH200);
    HoldFirst(cluster, "node", 7, 60);
    auto strict = Place("topology", cluster, Gpus(4, v1::TOPOLOGY_MODE_STRICT));
    REQUIRE_FALSE(strict.placed());
    CHECK(strict.reason() ==
          "strict topology: waiting for 4 GPUs on one node at ~450 GB/s (NV18); the best free now is nothing");
  }
}

TEST_CASE("ANY is the first-fit answer, stamped as such", "[policy][topology][modes]") {
  ClusterState cluster = OneNode(kDgx1);
  auto any = Place("topology", cluster, Gpus(2, v1::TOPOLOGY_MODE_ANY));
  auto first = Place("first-fit", cluster, Gpus(2));
  auto prefer = Place("topology", cluster, Gpus(2));
  REQUIRE(any.placed());
  REQUIRE(first.placed());
  REQUIRE(prefer.placed());
  CHECK_THAT(any.allocation().policy(), Catch::Contains("any"));
  CHECK(any.allocation().policy() == "topology (any: first-fit)");
  CHECK(GpuList(any.allocation().nodes(0)) == GpuList(first.allocation().nodes(0)));
  CHECK(GpuSet(any.allocation().nodes(0)) == std::set<int>{0, 1});  // NV1: ANY does not care
  CHECK(any.allocation().worst_link() == "NV1");
  CHECK(prefer.allocation().worst_link() == "NV2");

  ClusterState leaves = TwoLeaves();
  auto any16 = Place("topology", leaves, Gpus(16, v1::TOPOLOGY_MODE_ANY));
  REQUIRE(any16.placed());
  CHECK(any16.allocation().span() == "spine spine-1");  // name order, across the spine
}

TEST_CASE("a pending gang says in plain words what it waits for", "[policy][topology][reasons]") {
  ClusterState cluster = TwoLeaves();
  HoldFirst(cluster, "b1", 8, 200);
  HoldFirst(cluster, "c1", 3, 201);
  // Free: b2 2, c1 5, c2 8 = 15.
  auto result = Place("topology", cluster, Gpus(16));
  REQUIRE_FALSE(result.placed());
  CHECK(result.reason() == "waiting for 16 free GPUs (15 free on 4 up nodes)");

  auto shaped = Place("topology", cluster, Shape(2, 8));
  REQUIRE_FALSE(shaped.placed());
  CHECK(shaped.reason() == "waiting for 2 nodes with 8 free GPUs each (1 has them now)");

  GangRequest h100 = Gpus(1);
  h100.gpu_model = "H100";
  auto model = Place("topology", cluster, h100);
  REQUIRE_FALSE(model.placed());
  CHECK(model.reason() == "waiting for 1 free H100 GPU (0 free on 4 up nodes)");

  cluster.SetState("c2", v1::NODE_STATE_NOT_RESPONDING, "agent disconnected");
  auto down = Place("topology", cluster, Gpus(8));
  REQUIRE_FALSE(down.placed());
  CHECK(down.reason() == "waiting for 8 free GPUs (7 free on 3 up nodes)");
}
