// Wait or spread (daemon/core/wait_or_spread.h) on a real DGX-1 topology: a
// pair job when only an NV1 pair is free (25 GB/s), where the idle node
// gives NV2 (50 GB/s).
#include "daemon/core/wait_or_spread.h"

#include <catch2/catch.hpp>

#include "daemon/core/policy/placement_policy.h"
#include "tests/unit/core/policy_test_cluster.h"

namespace gpusched::core {
namespace {

using policy_testing::Gpus;
using policy_testing::Hold;
using policy_testing::kDgx1;

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

struct PairOnBusyDgx1 {
  PairOnBusyDgx1() {
    policy_testing::AddNode(cluster, "node", kDgx1);
    Hold(cluster, "node", {2, 3, 4, 5, 6, 7}, 50);  // job 50 holds all but GPUs 0 and 1
    auto made = MakePlacementPolicy("topology");
    REQUIRE(made.ok());
    policy = *std::move(made);
    auto now = policy->Place(cluster, Gpus(2));
    REQUIRE(now.placed());
    free_now = now.allocation();
    REQUIRE(free_now.est_bus_bandwidth_gbps() == Approx(25));
  }

  std::optional<BetterPlacement> Decide(absl::Duration job50_left, SpreadCost cost) {
    held = Held();
    ends.assign({ExpectedEnd{kNow + job50_left, 50, &held}});
    return BetterByWaiting(cluster, *policy, 7, Gpus(2), free_now, cost, kNow, [&] { return ends; });
  }

  static v1::Allocation Held() {
    v1::Allocation a;
    v1::NodeAllocation* part = a.add_nodes();
    part->set_node("node");
    for (int gpu : {2, 3, 4, 5, 6, 7}) part->add_gpu_indices(gpu);
    return a;
  }

  ClusterState cluster;
  std::unique_ptr<PlacementPolicy> policy;
  v1::Allocation free_now, held;
  std::vector<ExpectedEnd> ends;
};

TEST_CASE("a pair job waits for NV2 when that finishes it earlier than NV1 now", "[wait_or_spread]") {
  PairOnBusyDgx1 s;
  // NV1 now: 10,000 s x (1 + 0.5 x (50/25 - 1)) = 15,000 s; NV2 after 100 s: 10,100 s.
  auto better = s.Decide(absl::Seconds(100), SpreadCost{absl::Seconds(10'000), 0.5});
  REQUIRE(better.has_value());
  CHECK(better->reservation.start == kNow + absl::Seconds(100));
  CHECK(better->finish_waiting == kNow + absl::Seconds(10'100));
  CHECK(better->finish_now == kNow + absl::Seconds(15'000));
  CHECK(better->reservation.allocation.est_bus_bandwidth_gbps() == Approx(50));
  // The cluster is as it was.
  CHECK(s.cluster.Find("node")->FreeGpus() == 2);
}

TEST_CASE("a pair job spreads when waiting would finish it later", "[wait_or_spread]") {
  PairOnBusyDgx1 s;
  SECTION("the better pair frees too late: 6,000 s + 10,000 s > 15,000 s") {
    CHECK_FALSE(s.Decide(absl::Seconds(6'000), SpreadCost{absl::Seconds(10'000), 0.5}).has_value());
  }
  SECTION("communication a small share (1.05x): waiting 100 s still wins (10,100 < 10,500 s), 1,000 s does not") {
    CHECK(s.Decide(absl::Seconds(100), SpreadCost{absl::Seconds(10'000), 0.05}).has_value());
    CHECK_FALSE(s.Decide(absl::Seconds(1'000), SpreadCost{absl::Seconds(10'000), 0.05}).has_value());
  }
  SECTION("nothing says how long it runs") {
    CHECK_FALSE(s.Decide(absl::Seconds(100), SpreadCost{absl::InfiniteDuration(), 0.5}).has_value());
  }
  SECTION("the model says placement costs nothing") {
    CHECK_FALSE(s.Decide(absl::Seconds(100), SpreadCost{absl::Seconds(10'000), 0}).has_value());
  }
}

TEST_CASE("a job whose best placement is free now never waits", "[wait_or_spread]") {
  ClusterState cluster;
  policy_testing::AddNode(cluster, "node", kDgx1);
  auto policy = MakePlacementPolicy("topology");
  REQUIRE(policy.ok());
  auto now = (*policy)->Place(cluster, Gpus(2));
  REQUIRE(now.placed());
  CHECK_FALSE(
      BetterByWaiting(cluster, **policy, 7, Gpus(2), now.allocation(), SpreadCost{absl::Hours(10), 0.5}, kNow, [] {
        return std::vector<ExpectedEnd>{};
      }).has_value());
}

}  // namespace
}  // namespace gpusched::core
