// EverFitsCache answers as CheckEverFits does, whatever the cluster went
// through since it last answered.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "daemon/core/ever_fits.h"
#include "tests/unit/core/test_cluster.h"

namespace gpusched::core {
namespace {

using testing::MakeNode;

GangRequest OneNode(int64_t gpus) {
  GangRequest r;
  r.total_gpus = gpus;
  r.nodes = 1;
  r.gpus_per_node = gpus;
  r.cpus_per_gpu = 1;
  r.mem_per_gpu_mb = 1000;
  return r;
}

TEST_CASE("the ever-fits cache forgets a refusal once a node that fits registers, and an answer once access changes") {
  ClusterState cluster;
  cluster.UpsertNode(MakeNode("a", 8));
  EverFitsCache cache;
  const GangRequest sixteen = OneNode(16);
  const absl::Status refused = cache.Check(cluster, sixteen);
  CHECK(absl::IsInvalidArgument(refused));
  CHECK(cache.Check(cluster, sixteen) == refused);  // remembered

  cluster.UpsertNode(MakeNode("big", 16));
  CHECK(cache.Check(cluster, sixteen).ok());

  // Only queue bit 2 may use the big node now: a job of queue bit 1 can
  // never get 16 GPUs on one node again.
  GangRequest queue1 = sixteen;
  queue1.queue_bit = 1;
  CHECK(cache.Check(cluster, queue1).ok());
  REQUIRE(cluster.SetAccess("big", 2, false));
  CHECK(cache.Check(cluster, queue1) == CheckEverFits(cluster, queue1));
  CHECK(absl::IsInvalidArgument(cache.Check(cluster, queue1)));
}

TEST_CASE("the ever-fits cache gives CheckEverFits' answer through registrations and access changes, at random") {
  std::mt19937_64 rng(11);
  ClusterState cluster;
  EverFitsCache cache;
  int refusals = 0, checks = 0;
  for (int step = 0; step < 3000; ++step) {
    const int action = static_cast<int>(rng() % 20);
    if (action == 0) {
      const int gpus = static_cast<int>(1 + rng() % 16);
      cluster.UpsertNode(MakeNode("n" + std::to_string(rng() % 12), gpus, 8 + static_cast<int64_t>(rng() % 64)));
      continue;
    }
    if (action == 1 && !cluster.nodes().empty()) {
      cluster.SetAccess("n" + std::to_string(rng() % 12), rng() % 4, rng() % 2 == 0);
      continue;
    }
    GangRequest r = OneNode(static_cast<int64_t>(1 + rng() % 20));
    if (rng() % 3 == 0) {
      r.nodes = 0;
      r.gpus_per_node = 0;
    }
    r.cpus_per_gpu = static_cast<int64_t>(rng() % 6);
    r.queue_bit = rng() % 2 == 0 ? ~uint64_t{0} : uint64_t{1} << (rng() % 2);
    r.no_spot = rng() % 4 == 0;
    const absl::Status want = CheckEverFits(cluster, r);
    REQUIRE(cache.Check(cluster, r) == want);
    ++checks;
    refusals += want.ok() ? 0 : 1;
  }
  CHECK(refusals > 100);  // both answers were exercised
  CHECK(checks - refusals > 100);
}

}  // namespace
}  // namespace gpusched::core
