// Randomized invariants of every placement policy on clusters of real-fixture
// nodes with random labels, random busy GPUs and random requests (seeded: a
// failure prints its round and replays bit-identically).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/core/policy/gang_estimate.h"
#include "daemon/core/policy/placement_policy.h"
#include "tests/unit/core/policy_test_cluster.h"

using namespace gpusched;
using namespace gpusched::core::policy_testing;
using core::ClusterState;
using core::GangRequest;
using core::PlacementResult;

namespace {

constexpr int kRounds = 300;
constexpr int kRequestsPerRound = 6;

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
}

bool Chance(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }

int Uniform(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// 2-12 nodes of mixed machines under 2 spines / 4 leaves, some in an NVLink
// domain, some labels unknown, some nodes down, random GPUs held by jobs.
ClusterState RandomCluster(std::mt19937& rng) {
  ClusterState cluster;
  const int n = Uniform(rng, 2, 12);
  uint64_t job = 1'000'000;
  for (int i = 0; i < n; ++i) {
    const Machine& machine = Pick(rng, AllMachines());
    Labels labels;
    const int leaf = Uniform(rng, 0, 3);
    if (!Chance(rng, 0.1)) labels.leaf = absl::StrCat("leaf-", leaf);
    if (!Chance(rng, 0.1)) labels.spine = absl::StrCat("spine-", leaf / 2);
    if (Chance(rng, 0.25)) labels.nvlink_domain = absl::StrCat("nvl-", Uniform(rng, 0, 1));
    labels.rack = absl::StrCat("r", leaf);
    const std::string name = absl::StrCat("n", i < 10 ? "0" : "", i);
    AddNode(cluster, name, machine, labels);
    if (Chance(rng, 0.1)) {
      cluster.SetState(name, Chance(rng, 0.5) ? v1::NODE_STATE_DOWN : v1::NODE_STATE_NOT_RESPONDING, "test");
    }
    // Random GPUs busy, in one to three jobs, some with CPUs and memory.
    const core::NodeSlot* slot = cluster.Find(name);
    const double busy = std::uniform_real_distribution<double>(0, 1)(rng);
    for (int j = Uniform(rng, 1, 3); j > 0; --j) {
      v1::Allocation hold;
      v1::NodeAllocation* part = hold.add_nodes();
      part->set_node(name);
      for (int p = 0; p < slot->info.gpus_size(); ++p) {
        if (slot->gpu_owner[p] == 0 && Chance(rng, busy / 2)) part->add_gpu_indices(slot->info.gpus(p).index());
      }
      if (part->gpu_indices_size() == 0) continue;
      if (Chance(rng, 0.3)) part->set_cpus(std::min<int64_t>(slot->FreeCpus(), Uniform(rng, 1, 64)));
      if (Chance(rng, 0.3)) part->set_mem_mb(std::min<int64_t>(slot->FreeMemMb(), Uniform(rng, 1, 400000)));
      REQUIRE(cluster.Allocate(++job, hold).ok());
    }
  }
  return cluster;
}

GangRequest RandomRequest(std::mt19937& rng) {
  GangRequest r;
  if (Chance(rng, 0.3)) {
    r.nodes = Uniform(rng, 1, 3);
    r.gpus_per_node = Pick(rng, std::vector<int64_t>{1, 2, 3, 4, 8});
    r.total_gpus = r.nodes * r.gpus_per_node;
  } else {
    r.total_gpus = Pick(rng, std::vector<int64_t>{1, 1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16, 24, 32});
  }
  if (Chance(rng, 0.15)) {
    r.gpu_model = Pick(rng, std::vector<std::string>{"h200", "A100", "v100", "L40S", "4090", "h100", "NVIDIA"});
  }
  if (Chance(rng, 0.1)) r.gpu_memory_mb = Pick(rng, std::vector<int64_t>{30000, 45000, 80000});
  if (Chance(rng, 0.2)) r.cpus_per_gpu = Pick(rng, std::vector<int64_t>{4, 8, 16, 32});
  if (Chance(rng, 0.1)) r.mem_per_gpu_mb = Pick(rng, std::vector<int64_t>{64000, 128000, 256000});
  const double mode = std::uniform_real_distribution<double>(0, 1)(rng);
  r.topology = mode < 0.6 ? v1::TOPOLOGY_MODE_PREFER : mode < 0.8 ? v1::TOPOLOGY_MODE_STRICT : v1::TOPOLOGY_MODE_ANY;
  return r;
}

std::string DescribeRequest(const GangRequest& r) {
  return absl::StrCat("gpus=", r.total_gpus, " nodes=", r.nodes, " per_node=", r.gpus_per_node, " model='", r.gpu_model,
                      "' gpu_mem=", r.gpu_memory_mb, " cpus/gpu=", r.cpus_per_gpu, " mem/gpu=", r.mem_per_gpu_mb,
                      " mode=", v1::TopologyMode_Name(r.topology));
}

std::string DescribeCluster(const ClusterState& cluster) {
  std::string out;
  for (const auto& [name, slot] : cluster.nodes()) {
    absl::StrAppend(&out, name, " ", slot.info.gpus(0).model(), " ", slot.accepts_jobs() ? "up" : "down", " free ",
                    slot.FreeGpus(), "/", slot.info.gpus_size(), " cpus ", slot.FreeCpus(), " leaf '",
                    slot.topology.network().leaf, "' spine '", slot.topology.network().spine, "' nvl '",
                    slot.topology.network().nvlink_domain, "'\n");
  }
  return out;
}

bool Eligible(const v1::GpuInfo& gpu, const GangRequest& r) {
  if (!r.gpu_model.empty() &&
      !absl::StrContains(absl::AsciiStrToLower(gpu.model()), absl::AsciiStrToLower(r.gpu_model))) {
    return false;
  }
  return r.gpu_memory_mb <= 0 || gpu.memory_mb() >= r.gpu_memory_mb;
}

// GPUs of the request's kind the node can give now, computed independently
// of the policies' own node_fit.
int64_t Usable(const core::NodeSlot& slot, const GangRequest& r) {
  if (!slot.accepts_jobs()) return 0;
  int64_t n = 0;
  for (int p = 0; p < slot.info.gpus_size(); ++p) n += slot.gpu_owner[p] == 0 && Eligible(slot.info.gpus(p), r);
  if (r.cpus_per_gpu > 0) n = std::min(n, slot.FreeCpus() / r.cpus_per_gpu);
  if (r.mem_per_gpu_mb > 0) n = std::min(n, slot.FreeMemMb() / r.mem_per_gpu_mb);
  return n;
}

// Every invariant of a placed allocation against the state it was placed on.
void CheckPlaced(const ClusterState& cluster, const GangRequest& r, const core::PlacementPolicy& policy,
                 const v1::Allocation& a) {
  INFO(Describe(a));
  REQUIRE(a.nodes_size() >= 1);
  std::set<std::string> nodes;
  int64_t total = 0;
  for (int i = 0; i < a.nodes_size(); ++i) {
    const v1::NodeAllocation& part = a.nodes(i);
    INFO("part " << i << " on " << part.node());
    CHECK(nodes.insert(part.node()).second);  // a node appears once
    CHECK(part.node_rank() == i);
    const core::NodeSlot* slot = cluster.Find(part.node());
    REQUIRE(slot != nullptr);
    CHECK(slot->accepts_jobs());
    CHECK(part.address() == slot->info.address());
    CHECK(part.gpu_indices_size() >= 1);
    std::set<int> seen;
    for (int g : part.gpu_indices()) {
      CHECK(seen.insert(g).second);  // never the same GPU twice
      const int p = slot->PositionOf(g);
      REQUIRE(p >= 0);
      CHECK(slot->gpu_owner[p] == 0);  // only free GPUs
      CHECK(Eligible(slot->info.gpus(p), r));
    }
    const int64_t k = part.gpu_indices_size();
    CHECK(part.cpus() == k * r.cpus_per_gpu);
    CHECK(part.mem_mb() == k * r.mem_per_gpu_mb);
    CHECK(part.cpus() <= slot->FreeCpus());
    CHECK(part.mem_mb() <= slot->FreeMemMb());
    if (r.nodes > 0) CHECK(k == r.gpus_per_node);
    total += k;
  }
  CHECK(total == r.total_gpus);
  if (r.nodes > 0) CHECK(a.nodes_size() == r.nodes);
  // Fewest nodes: one node whenever one can hold the gang.
  if (r.nodes == 0) {
    bool one_fits = false;
    for (const auto& [name, slot] : cluster.nodes()) one_fits |= Usable(slot, r) >= r.total_gpus;
    if (one_fits) CHECK(a.nodes_size() == 1);
  }
  // ClusterState takes it as it is.
  ClusterState copy = cluster;
  absl::Status taken = copy.Allocate(987654321, a);
  INFO(taken.ToString());
  CHECK(taken.ok());
  // Annotated with the one yardstick.
  const core::policy::GangEstimate estimate = core::policy::EstimateGang(cluster, a);
  CHECK(a.est_bus_bandwidth_gbps() == Approx(estimate.bus_bandwidth_gbps));
  CHECK(a.worst_link() == estimate.worst_link);
  CHECK(a.span() == estimate.span);
  CHECK_FALSE(a.worst_link().empty());
  CHECK_FALSE(a.span().empty());
  CHECK((a.span() == "node") == (a.nodes_size() == 1));
  CHECK((a.worst_link() == "NET") == (a.nodes_size() > 1));
  CHECK((a.worst_link() == "none") == (total == 1));
  CHECK((a.est_bus_bandwidth_gbps() > 0) == (total >= 2));
  if (policy.name() == "topology" && r.topology == v1::TOPOLOGY_MODE_ANY) {
    CHECK(a.policy() == "topology (any: first-fit)");
  } else {
    CHECK(a.policy() == std::string(policy.name()));
  }
}

bool SamePlacement(const v1::Allocation& x, const v1::Allocation& y) {
  if (x.nodes_size() != y.nodes_size()) return false;
  for (int i = 0; i < x.nodes_size(); ++i) {
    if (x.nodes(i).node() != y.nodes(i).node() || GpuList(x.nodes(i)) != GpuList(y.nodes(i))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("randomized: every policy places only free GPUs of up nodes, exactly the gang, never worse than first-fit",
          "[policy][invariants]") {
  std::mt19937 rng(20240611);
  const std::vector<std::string> names = core::PlacementPolicyNames();
  int placed_topology = 0, multi_node = 0, strict_waits = 0, beat_first_fit = 0;
  for (int round = 0; round < kRounds; ++round) {
    ClusterState cluster = RandomCluster(rng);
    // Like the daemon: one instance of each policy per cluster, reused.
    std::map<std::string, std::unique_ptr<core::PlacementPolicy>> policies;
    for (const std::string& name : names) policies[name] = *core::MakePlacementPolicy(name);
    for (int q = 0; q < kRequestsPerRound; ++q) {
      const GangRequest r = RandomRequest(rng);
      INFO("round " << round << " request " << q << ": " << DescribeRequest(r) << "\n" << DescribeCluster(cluster));
      std::map<std::string, PlacementResult> results;
      for (const std::string& name : names) {
        INFO("policy " << name);
        PlacementResult result = policies[name]->Place(cluster, r);
        if (result.placed()) {
          CheckPlaced(cluster, r, *policies[name], result.allocation());
        } else {
          CHECK(result.allocation().nodes_size() == 0);
          CHECK_FALSE(result.reason().empty());
          CHECK((absl::StartsWith(result.reason(), "waiting for ") ||
                 absl::StartsWith(result.reason(), "strict topology: waiting for ")));
        }
        // Pure and deterministic: the same state and request, the same answer.
        PlacementResult again = policies[name]->Place(cluster, r);
        CHECK(again.placed() == result.placed());
        CHECK(again.reason() == result.reason());
        if (again.placed() && result.placed()) CHECK(SamePlacement(again.allocation(), result.allocation()));
        results.emplace(name, std::move(result));
      }
      const PlacementResult& topo = results.at("topology");
      const PlacementResult& first = results.at("first-fit");
      // Whether a gang fits now does not depend on the node order.
      CHECK(results.at("best-fit").placed() == first.placed());
      CHECK(results.at("spread").placed() == first.placed());
      if (r.topology == v1::TOPOLOGY_MODE_ANY) {
        CHECK(topo.placed() == first.placed());
        if (topo.placed() && first.placed()) CHECK(SamePlacement(topo.allocation(), first.allocation()));
      } else if (r.topology == v1::TOPOLOGY_MODE_PREFER) {
        // Topology-aware never means worse, and never means waiting longer.
        CHECK(topo.placed() == first.placed());
        if (topo.placed() && first.placed()) {
          CHECK(topo.allocation().est_bus_bandwidth_gbps() >= first.allocation().est_bus_bandwidth_gbps() * (1 - 1e-6));
          beat_first_fit +=
              topo.allocation().est_bus_bandwidth_gbps() > first.allocation().est_bus_bandwidth_gbps() * (1 + 1e-6);
        }
      } else {
        // STRICT places only what PREFER would, or waits with a reason.
        if (topo.placed()) {
          CHECK(first.placed());
        } else if (first.placed()) {
          CHECK_THAT(topo.reason(), Catch::StartsWith("strict topology: waiting for "));
          ++strict_waits;
        }
      }
      placed_topology += topo.placed();
      // Let the cluster fill up: run one of the placed gangs.
      const PlacementResult& run = results.at(Pick(rng, names));
      if (run.placed()) {
        multi_node += run.allocation().nodes_size() > 1;
        REQUIRE(cluster.Allocate(2'000'000 + round * 100 + q, run.allocation()).ok());
      }
    }
  }
  // The generator must reach the interesting cases, or the test proves little.
  INFO("topology placed " << placed_topology << ", multi-node runs " << multi_node << ", strict waits " << strict_waits
                          << ", topology beat first-fit " << beat_first_fit);
  CHECK(placed_topology > kRounds);
  CHECK(multi_node > kRounds / 20);
  CHECK(strict_waits > 10);
  CHECK(beat_first_fit > kRounds / 10);
}

// topology_policy.h promises "never estimates worse than first-fit"; that
// holds for STRICT too, once it places.
TEST_CASE("randomized: STRICT, once placed, is never worse than first-fit", "[policy][invariants][strict]") {
  std::mt19937 rng(77);
  auto first_fit = *core::MakePlacementPolicy("first-fit");
  for (int round = 0; round < kRounds; ++round) {
    ClusterState cluster = RandomCluster(rng);
    auto topo = *core::MakePlacementPolicy("topology");
    for (int q = 0; q < kRequestsPerRound; ++q) {
      GangRequest r = RandomRequest(rng);
      r.topology = v1::TOPOLOGY_MODE_STRICT;
      INFO("round " << round << " request " << q << ": " << DescribeRequest(r) << "\n" << DescribeCluster(cluster));
      PlacementResult strict = topo->Place(cluster, r);
      PlacementResult first = first_fit->Place(cluster, r);
      if (strict.placed() && first.placed()) {
        INFO("strict " << Describe(strict.allocation()) << "\nfirst-fit " << Describe(first.allocation()));
        CHECK(strict.allocation().est_bus_bandwidth_gbps() >= first.allocation().est_bus_bandwidth_gbps() * (1 - 1e-6));
      }
    }
  }
}

// The daemon keeps one policy for its one ClusterState; the simulator and
// benchmarks may run a policy over several, and it must answer as a fresh
// one would.
TEST_CASE("randomized: a policy reused across clusters answers like a fresh one", "[policy][invariants][cache]") {
  std::mt19937 rng(4242);
  std::map<std::string, std::unique_ptr<core::PlacementPolicy>> reused;
  for (const std::string& name : core::PlacementPolicyNames()) reused[name] = *core::MakePlacementPolicy(name);
  for (int round = 0; round < kRounds / 2; ++round) {
    ClusterState cluster = RandomCluster(rng);
    for (int q = 0; q < 3; ++q) {
      const GangRequest r = RandomRequest(rng);
      INFO("round " << round << ": " << DescribeRequest(r) << "\n" << DescribeCluster(cluster));
      for (const std::string& name : core::PlacementPolicyNames()) {
        INFO("policy " << name);
        PlacementResult fresh = (*core::MakePlacementPolicy(name))->Place(cluster, r);
        PlacementResult old = reused[name]->Place(cluster, r);
        CHECK(old.placed() == fresh.placed());
        if (old.placed() && fresh.placed()) {
          INFO("reused " << Describe(old.allocation()) << "\nfresh " << Describe(fresh.allocation()));
          CHECK(SamePlacement(old.allocation(), fresh.allocation()));
        }
      }
    }
  }
}

// The topology policy remembers each switch group's answer while the group
// stays as it was (policy/group_memo.h): placing, then freeing, gangs on one
// cluster must give what a fresh policy gives at every step.
TEST_CASE("randomized: a policy that placed on a changing cluster answers like a fresh one",
          "[policy][invariants][cache]") {
  std::mt19937 rng(777);
  for (int round = 0; round < kRounds / 3; ++round) {
    ClusterState cluster = RandomCluster(rng);
    std::unique_ptr<core::PlacementPolicy> reused = std::move(*core::MakePlacementPolicy("topology"));
    std::vector<std::pair<uint64_t, v1::Allocation>> placed;
    uint64_t job = 1;
    for (int step = 0; step < 12; ++step) {
      if (!placed.empty() && Chance(rng, 0.3)) {
        const size_t k = static_cast<size_t>(Uniform(rng, 0, static_cast<int>(placed.size()) - 1));
        cluster.Release(placed[k].first, placed[k].second);
        placed.erase(placed.begin() + static_cast<long>(k));
      }
      const GangRequest r = RandomRequest(rng);
      INFO("round " << round << " step " << step << ": " << DescribeRequest(r) << "\n" << DescribeCluster(cluster));
      PlacementResult fresh = std::move(*core::MakePlacementPolicy("topology"))->Place(cluster, r);
      PlacementResult old = reused->Place(cluster, r);
      REQUIRE(old.placed() == fresh.placed());
      if (!old.placed()) continue;
      INFO("reused " << Describe(old.allocation()) << "\nfresh " << Describe(fresh.allocation()));
      CHECK(SamePlacement(old.allocation(), fresh.allocation()));
      if (cluster.Allocate(job, old.allocation()).ok()) placed.emplace_back(job++, old.allocation());
    }
  }
}
