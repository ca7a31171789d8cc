// What every placement policy must do, whatever it prefers: the policy
// factory, fixed shapes, all-or-nothing, GPU model/memory constraints; and
// the best-fit behaviour the topology and best-fit policies promise.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "daemon/core/policy/placement_policy.h"
#include "tests/unit/core/policy_test_cluster.h"

using namespace gpusched;
using namespace gpusched::core::policy_testing;
using core::ClusterState;
using core::GangRequest;
using core::PlacementResult;

namespace {

std::unique_ptr<core::PlacementPolicy> Policy(const std::string& name) {
  auto policy = core::MakePlacementPolicy(name);
  REQUIRE(policy.ok());
  return *std::move(policy);
}

// Places with `policy` and, when placed, takes the GPUs for `job`.
PlacementResult PlaceAndTake(core::PlacementPolicy& policy, ClusterState& cluster, const GangRequest& req,
                             uint64_t job) {
  PlacementResult result = policy.Place(cluster, req);
  if (result.placed()) {
    absl::Status s = cluster.Allocate(job, result.allocation());
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  return result;
}

}  // namespace

TEST_CASE("every policy is made by name; an unknown name lists the known ones", "[policy][factory]") {
  CHECK(core::PlacementPolicyNames() == std::vector<std::string>{"topology", "best-fit", "first-fit", "spread"});
  CHECK(std::string(core::kDefaultPlacementPolicy) == "topology");
  for (const std::string& name : core::PlacementPolicyNames()) {
    auto policy = core::MakePlacementPolicy(name);
    INFO(name);
    REQUIRE(policy.ok());
    CHECK((*policy)->name() == name);
  }
  for (const char* unknown : {"round-robin", "", "Topology", "best_fit"}) {
    auto policy = core::MakePlacementPolicy(unknown);
    INFO("\"" << unknown << "\"");
    REQUIRE_FALSE(policy.ok());
    CHECK(policy.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(policy.status().message()), Catch::Contains(std::string("\"") + unknown + "\""));
    for (const std::string& known : core::PlacementPolicyNames()) {
      CHECK_THAT(std::string(policy.status().message()), Catch::Contains(known));
    }
  }
  CHECK(core::MakePlacementPolicy("spread-out").status().message() ==
        "unknown placement policy \"spread-out\" (known: topology, best-fit, first-fit, spread)");
}

TEST_CASE("nodes x gpus_per_node: exactly that shape on distinct nodes, ranks 0..n-1, for every policy",
          "[policy][shape]") {
  // h1, h4 idle; h2 2 free; h3 4 free.
  ClusterState cluster;
  for (const char* name : {"h1", "h2", "h3", "h4"}) AddNode(cluster, name, kHgxH200, Net("leaf-0", "spine-0"));
  HoldFirst(cluster, "h2", 6, 90);
  HoldFirst(cluster, "h3", 4, 91);
  struct Case {
    int64_t nodes, per_node;
    std::set<std::string> only_from;  // every part on one of these
  } const cases[] = {
      {2, 4, {"h1", "h3", "h4"}}, {3, 4, {"h1", "h3", "h4"}}, {4, 2, {"h1", "h2", "h3", "h4"}}, {2, 8, {"h1", "h4"}},
      {1, 8, {"h1", "h4"}},       {1, 3, {"h1", "h3", "h4"}}, {3, 1, {"h1", "h2", "h3", "h4"}},
  };
  for (const std::string& name : core::PlacementPolicyNames()) {
    for (const Case& c : cases) {
      INFO(name << ": " << c.nodes << " x " << c.per_node);
      auto result = Policy(name)->Place(cluster, Shape(c.nodes, c.per_node));
      INFO(result.reason());
      REQUIRE(result.placed());
      const v1::Allocation& a = result.allocation();
      INFO(Describe(a));
      REQUIRE(a.nodes_size() == c.nodes);
      CHECK(NodeSet(a).size() == static_cast<size_t>(c.nodes));
      for (int i = 0; i < a.nodes_size(); ++i) {
        CHECK(a.nodes(i).node_rank() == i);
        CHECK(a.nodes(i).gpu_indices_size() == c.per_node);
        CHECK(GpuSet(a.nodes(i)).size() == static_cast<size_t>(c.per_node));
        CHECK(c.only_from.count(a.nodes(i).node()) == 1);
      }
      ClusterState copy = cluster;
      CHECK(copy.Allocate(1000, a).ok());
    }
    // One node with room is not two: 2 x 4 never doubles up on an idle node,
    // and 3 x 8 is more than there is.
    auto too_many = Policy(name)->Place(cluster, Shape(3, 8));
    REQUIRE_FALSE(too_many.placed());
    CHECK(too_many.allocation().nodes_size() == 0);
    CHECK(too_many.reason() == "waiting for 3 nodes with 8 free GPUs each (2 have them now)");
  }
}

TEST_CASE("a gang is all or nothing: 16 GPUs on 15 free places nothing, for every policy", "[policy][all-or-nothing]") {
  ClusterState cluster;
  for (const char* name : {"a", "b", "c"}) {
    AddNode(cluster, name, kHgxH200);
    HoldFirst(cluster, name, 3, 80);
  }
  for (const std::string& name : core::PlacementPolicyNames()) {
    INFO(name);
    auto policy = Policy(name);
    auto flexible = policy->Place(cluster, Gpus(16));
    CHECK_FALSE(flexible.placed());
    CHECK(flexible.allocation().nodes_size() == 0);
    CHECK(flexible.reason() == "waiting for 16 free GPUs (15 free on 3 up nodes)");
    auto shaped = policy->Place(cluster, Shape(2, 6));
    CHECK_FALSE(shaped.placed());
    CHECK(shaped.allocation().nodes_size() == 0);
    CHECK(shaped.reason() == "waiting for 2 nodes with 6 free GPUs each (0 have them now)");
    // Host CPUs count too: 5 free GPUs per node, but CPUs for only 3 of them.
    GangRequest cpus = Gpus(12);
    cpus.cpus_per_gpu = 70;  // 224 CPUs per node
    auto cpu_bound = policy->Place(cluster, cpus);
    CHECK_FALSE(cpu_bound.placed());
    CHECK(cpu_bound.reason() == "waiting for 12 free GPUs (9 free on 3 up nodes)");
    cpus.total_gpus = 9;
    auto fits = policy->Place(cluster, cpus);
    REQUIRE(fits.placed());
    CHECK(TotalGpus(fits.allocation()) == 9);
    for (const auto& part : fits.allocation().nodes()) CHECK(part.cpus() == 70 * part.gpu_indices_size());
  }
  for (const char* name : {"a", "b", "c"}) CHECK(cluster.Find(name)->FreeGpus() == 5);
}

TEST_CASE("--topology strict: a job one node could hold is never split over nodes, by any policy", "[policy][strict]") {
  ClusterState cluster;
  for (const char* name : {"a", "b"}) {
    AddNode(cluster, name, kHgxH200);
    HoldFirst(cluster, name, 4, 90);  // 4 of 8 free on each
  }
  for (const std::string& name : core::PlacementPolicyNames()) {
    INFO(name);
    auto policy = Policy(name);
    const PlacementResult strict = policy->Place(cluster, Gpus(8, v1::TOPOLOGY_MODE_STRICT));
    CHECK_FALSE(strict.placed());
    if (name != "topology") CHECK(strict.reason() == "waiting for 1 node with 8 free GPUs each (0 have them now)");
    // Asked for nothing, 8 GPUs on two half-free nodes are placed.
    const PlacementResult prefer = policy->Place(cluster, Gpus(8));
    REQUIRE(prefer.placed());
    CHECK(prefer.allocation().nodes_size() == 2);
  }
}

TEST_CASE("best fit: small jobs fill partly used nodes so that an 8-GPU job still finds an idle one",
          "[policy][best-fit]") {
  for (const char* name : {"topology", "best-fit"}) {
    INFO(name);
    ClusterState cluster;
    AddNode(cluster, "idle1", kHgxH200);
    AddNode(cluster, "idle2", kHgxH200);
    AddNode(cluster, "partly", kHgxH200);
    HoldFirst(cluster, "partly", 5, 70);
    auto policy = Policy(name);
    for (uint64_t job = 1; job <= 3; ++job) {
      auto one = PlaceAndTake(*policy, cluster, Gpus(1), job);
      REQUIRE(one.placed());
      CHECK(one.allocation().nodes(0).node() == "partly");
    }
    auto big = PlaceAndTake(*policy, cluster, Gpus(8), 10);
    REQUIRE(big.placed());
    CHECK(big.allocation().nodes_size() == 1);
    auto big2 = PlaceAndTake(*policy, cluster, Gpus(8), 11);
    REQUIRE(big2.placed());
    CHECK(big2.allocation().nodes_size() == 1);
    CHECK(NodeSet(big.allocation()) != NodeSet(big2.allocation()));
  }
  SECTION("spread does the opposite, by design: the least used node") {
    ClusterState cluster;
    AddNode(cluster, "busy", kHgxH200);
    AddNode(cluster, "idle", kHgxH200);
    HoldFirst(cluster, "busy", 5, 70);
    auto one = Policy("spread")->Place(cluster, Gpus(1));
    REQUIRE(one.placed());
    CHECK(one.allocation().nodes(0).node() == "idle");
  }
  SECTION("topology: eight 1-GPU jobs on two idle nodes share one node") {
    ClusterState cluster;
    AddNode(cluster, "x", kHgxH200);
    AddNode(cluster, "y", kHgxH200);
    auto policy = Policy("topology");
    for (uint64_t job = 1; job <= 8; ++job) {
      auto one = PlaceAndTake(*policy, cluster, Gpus(1), job);
      REQUIRE(one.placed());
    }
    CHECK(((cluster.Find("x")->FreeGpus() == 0 && cluster.Find("y")->FreeGpus() == 8) ||
           (cluster.Find("y")->FreeGpus() == 0 && cluster.Find("x")->FreeGpus() == 8)));
  }
}

TEST_CASE("topology: a fixed-shape gang takes the nodes it fills, so an 8-GPU job still finds an idle one",
          "[policy][best-fit][shape]") {
  ClusterState cluster;
  for (const char* name : {"h1", "h2", "h3", "h4"}) AddNode(cluster, name, kHgxH200, Net("leaf-0", "spine-0"));
  HoldFirst(cluster, "h3", 4, 91);
  HoldFirst(cluster, "h4", 4, 92);
  auto policy = Policy("topology");
  auto shaped = PlaceAndTake(*policy, cluster, Shape(2, 4), 1);
  REQUIRE(shaped.placed());
  INFO(Describe(shaped.allocation()));
  CHECK(NodeSet(shaped.allocation()) == std::set<std::string>{"h3", "h4"});
  auto big = policy->Place(cluster, Gpus(8));
  CHECK(big.placed());
}

// For a fixed shape best-fit fills the fullest nodes that still hold a part:
// 2 x 4 goes to h3 and h4 (4 free each), and the idle nodes stay whole for
// the next 8-GPU job.
TEST_CASE("best-fit: a 2 x 4 gang fills the half-used nodes rather than breaking the idle ones",
          "[policy][best-fit][shape]") {
  ClusterState cluster;
  for (const char* name : {"h1", "h2", "h3", "h4"}) AddNode(cluster, name, kHgxH200);
  HoldFirst(cluster, "h3", 4, 91);
  HoldFirst(cluster, "h4", 4, 92);
  auto policy = Policy("best-fit");
  auto shaped = PlaceAndTake(*policy, cluster, Shape(2, 4), 1);
  REQUIRE(shaped.placed());
  INFO(Describe(shaped.allocation()));
  CHECK(NodeSet(shaped.allocation()) == std::set<std::string>{"h3", "h4"});
  auto big = policy->Place(cluster, Gpus(8));
  INFO(big.reason());
  CHECK(big.placed());
}

TEST_CASE("GPU model (substring, any case) and memory constraints filter nodes, for every policy",
          "[policy][constraints]") {
  // Name order puts the A100 first, so a blind answer would land there.
  ClusterState cluster;
  AddNode(cluster, "a100-1", kDgxA100);
  AddNode(cluster, "h200-1", kHgxH200);
  AddNode(cluster, "v100-1", kDgx1);
  struct Case {
    const char* model;
    int64_t memory_mb;
    int64_t gpus;
    std::set<std::string> nodes;  // empty: unschedulable
  } const cases[] = {
      {"h200", 0, 1, {"h200-1"}},
      {"H200", 0, 4, {"h200-1"}},
      {"nvidia h200", 0, 8, {"h200-1"}},
      {"a100", 0, 2, {"a100-1"}},
      {"v100-sxm2", 0, 2, {"v100-1"}},
      {"", 80000, 2, {"h200-1"}},
      {"", 143771, 1, {"h200-1"}},
      {"", 143772, 1, {}},
      {"a100", 80000, 1, {}},
      {"b200", 0, 1, {}},
      {"h200", 0, 9, {}},
  };
  for (const std::string& name : core::PlacementPolicyNames()) {
    for (const Case& c : cases) {
      INFO(name << ": --gpu-model '" << c.model << "' --gpu-memory-mb " << c.memory_mb << " --gpus " << c.gpus);
      GangRequest req = Gpus(c.gpus);
      req.gpu_model = c.model;
      req.gpu_memory_mb = c.memory_mb;
      auto result = Policy(name)->Place(cluster, req);
      if (c.nodes.empty()) {
        CHECK_FALSE(result.placed());
        CHECK_THAT(result.reason(), Catch::StartsWith("waiting for "));
        if (*c.model) CHECK_THAT(result.reason(), Catch::Contains(c.model));
        continue;
      }
      INFO(result.reason());
      REQUIRE(result.placed());
      INFO(Describe(result.allocation()));
      CHECK(NodeSet(result.allocation()) == c.nodes);
      CHECK(TotalGpus(result.allocation()) == c.gpus);
      for (const auto& part : result.allocation().nodes()) {
        const core::NodeSlot* slot = cluster.Find(part.node());
        for (int g : part.gpu_indices()) {
          const v1::GpuInfo& gpu = slot->info.gpus(slot->PositionOf(g));
          CHECK(absl::StrContains(absl::AsciiStrToLower(gpu.model()), absl::AsciiStrToLower(c.model)));
          CHECK(gpu.memory_mb() >= c.memory_mb);
        }
      }
    }
  }
  SECTION("a mixed A100 + H200 cluster: a 16-GPU --gpu-model h200 job takes both H200 nodes") {
    ClusterState mixed;
    AddNode(mixed, "a1", kDgxA100, Net("leaf-0", "spine-0"));
    AddNode(mixed, "a2", kDgxA100, Net("leaf-0", "spine-0"));
    AddNode(mixed, "h1", kHgxH200, Net("leaf-1", "spine-0"));
    AddNode(mixed, "h2", kHgxH200, Net("leaf-1", "spine-0"));
    GangRequest req = Gpus(16);
    req.gpu_model = "h200";
    for (const std::string& name : core::PlacementPolicyNames()) {
      INFO(name);
      auto result = Policy(name)->Place(mixed, req);
      REQUIRE(result.placed());
      CHECK(NodeSet(result.allocation()) == std::set<std::string>{"h1", "h2"});
      CHECK(result.allocation().span() == "leaf leaf-1");
    }
    HoldFirst(mixed, "h2", 1, 5);
    auto waiting = Policy("topology")->Place(mixed, req);
    REQUIRE_FALSE(waiting.placed());
    CHECK(waiting.reason() == "waiting for 16 free h200 GPUs (15 free on 4 up nodes)");
  }
}
