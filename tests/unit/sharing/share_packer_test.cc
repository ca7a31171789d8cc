// SharePacker: what each policy prefers, on nodes small enough to reason
// about, and its caches held to a packer built fresh at every step.
#include "daemon/core/sharing/share_packer.h"

#include <catch2/catch.hpp>
#include <random>
#include <utility>
#include <vector>

#include "tests/unit/sharing/sharing_test_util.h"

using namespace gpusched::core::sharing;
using namespace gpusched::core::sharing::testing;

namespace {

constexpr PackingPolicy kDeterministic[] = {PackingPolicy::kBestFit, PackingPolicy::kFgd, PackingPolicy::kFgdExact,
                                            PackingPolicy::kFillFgd};

// Where the packer puts the task: its node and GPUs; node -1 when refused.
std::pair<int, std::vector<int>> Where(SharePacker& packer, const ShareRequest& task) {
  auto placed = packer.Place(task);
  if (!placed) return {-1, {}};
  return {placed->node, placed->gpus};
}

}  // namespace

TEST_CASE("FGD keeps room for the tasks the mix expects where best fit takes the tightest GPU") {
  // Mostly 0.6-GPU tasks expected. A 0.2 task on node 0 (0.6 free) would
  // leave 0.4 no 0.6 task fits; on node 1 (0.8 free) it leaves 0.6.
  const std::vector<PackNode> nodes = {Node({600}), Node({800})};
  const TaskMix mix = MixOf({{Task(1, 600), 9}, {Task(1, 200), 1}});
  SharePacker best_fit(nodes, mix, PackingPolicy::kBestFit, 1);
  SharePacker fgd(nodes, mix, PackingPolicy::kFgd, 1);
  SharePacker fgd_exact(nodes, mix, PackingPolicy::kFgdExact, 1);
  CHECK(best_fit.Place(Task(1, 200))->node == 0);
  CHECK(fgd.Place(Task(1, 200))->node == 1);
  CHECK(fgd_exact.Place(Task(1, 200))->node == 1);
  CHECK(fgd.nodes()[1].gpu_free_milli == std::vector<int>{600});
}

TEST_CASE("spread puts a share on the emptiest node and there on the GPU with the most free; best fit on the fullest") {
  const std::vector<PackNode> nodes = {Node({300, 800}), Node({1000, 1000})};
  const TaskMix mix = MixOf({{Task(1, 200), 1}});
  SharePacker spread(nodes, mix, PackingPolicy::kSpread, 1);
  SharePacker best_fit(nodes, mix, PackingPolicy::kBestFit, 1);
  CHECK(Where(spread, Task(1, 200)).first == 1);
  CHECK(Where(best_fit, Task(1, 200)) == std::pair(0, std::vector<int>{0}));  // the tighter GPU
  // On node 0 alone, spread takes the GPU with 0.8 free.
  SharePacker one({nodes[0]}, mix, PackingPolicy::kSpread, 1);
  CHECK(Where(one, Task(1, 200)) == std::pair(0, std::vector<int>{1}));
}

TEST_CASE("FGD puts a share on a GPU already shared before it breaks a whole one") {
  const std::vector<PackNode> nodes = {Node({1000, 1000}), Node({1000, 500})};
  const TaskMix mix = MixOf({{Task(1, 1000), 3}, {Task(1, 500), 1}});
  for (PackingPolicy policy : kDeterministic) {
    INFO(PackingPolicyName(policy));
    SharePacker packer(nodes, mix, policy, 1);
    auto placed = packer.Place(Task(1, 500));
    REQUIRE(placed);
    CHECK(placed->node == 1);
    CHECK(placed->gpus == std::vector<int>{1});
  }
}

TEST_CASE("fill-fgd keeps a GPU fillable: a 0.32 task opens a fresh GPU rather than strand 0.21 beside a 0.47") {
  // Common sizes 0.47 and 0.32. Beside the 0.47, a 0.32 leaves 0.21 that
  // neither fills (the hole could have taken another 0.47, leaving 0.06);
  // on a fresh GPU it leaves 0.68, which 0.32 + 0.32 fill to 0.04.
  const std::vector<PackNode> nodes = {Node({530}), Node({1000})};
  const TaskMix mix = MixOf({{Task(1, 470), 50}, {Task(1, 320), 50}});
  SharePacker fill(nodes, mix, PackingPolicy::kFillFgd, 1);
  auto placed = fill.Place(Task(1, 320));
  REQUIRE(placed);
  CHECK(placed->node == 1);
  // A 0.47 still goes beside the 0.47: that fill leaves only 0.06.
  placed = fill.Place(Task(1, 470));
  REQUIRE(placed);
  CHECK(placed->node == 0);
}

TEST_CASE("fill-fgd counts on a size to fill a hole only when it is common among the shares, not among all tasks") {
  // Shares only: 0.47 and 0.32 common, 0.22 two tasks in 77 (2.6% of the
  // shares, though more than 1% of the mix). A 0.46 beside 0.68 free would
  // leave 0.22, which only that rare size fills; on a fresh GPU it leaves
  // 0.54, which a 0.47 fills to 0.07.
  const std::vector<PackNode> nodes = {Node({680}), Node({1000})};
  const TaskMix mix = MixOf({{Task(1, 470), 50}, {Task(1, 320), 25}, {Task(1, 220), 2}});
  SharePacker fill(nodes, mix, PackingPolicy::kFillFgd, 1);
  auto placed = fill.Place(Task(1, 460));
  REQUIRE(placed);
  CHECK(placed->node == 1);
}

TEST_CASE(
    "fill-fgd sends a CPU-hungry share where CPU is left for the shares to come; FGD sees no cost until it is gone") {
  // Shares of half a GPU asking 2 cores are expected. An 8-core half share
  // on node 0 leaves 4 cores for 1.5 GPUs of shares asking 6; a share would
  // still fit there, so FGD's fragment does not grow and it takes node 0.
  const std::vector<PackNode> nodes = {Node({1000, 1000}, 12000), Node({1000, 1000}, 64000)};
  const TaskMix mix = MixOf({{Task(1, 500, 2000), 10}});
  SharePacker fgd(nodes, mix, PackingPolicy::kFgd, 1);
  SharePacker fill(nodes, mix, PackingPolicy::kFillFgd, 1);
  CHECK(fgd.Place(Task(1, 500, 8000))->node == 0);
  CHECK(fill.Place(Task(1, 500, 8000))->node == 1);
  // A share asking what the shares ask costs neither node anything: FGD's
  // order decides.
  CHECK(fill.Place(Task(1, 500, 2000))->node == 0);
}

TEST_CASE("fill-fgd leaves a scarce model to the tasks limited to it; FGD's rounded score takes the first node") {
  // One task in 100 may run only on model 1, which has a third of the GPUs.
  // FGD's fragment for that task falls by a hundredth of a GPU on node 1,
  // which its integer node score does not show.
  const std::vector<PackNode> nodes = {Node({1000, 1000}, 32000, 1), Node({1000, 1000, 1000, 1000}, 32000, 0)};
  ShareRequest limited = Task(1, 1000);
  limited.allowed_models = 0b10;
  const TaskMix mix = MixOf({{Task(1, 1000), 99}, {limited, 1}});
  SharePacker fgd(nodes, mix, PackingPolicy::kFgd, 1);
  SharePacker fill(nodes, mix, PackingPolicy::kFillFgd, 1);
  CHECK(fgd.Place(Task(1, 1000))->node == 0);
  CHECK(fill.Place(Task(1, 1000))->node == 1);
  // A limited task goes where it may.
  CHECK(fill.Place(limited)->node == 0);
}

TEST_CASE("fill-fgd sends a CPU-only task where CPU is left over once the free GPUs are fed") {
  // Node 0: 8 GPUs and 96 cores, 12 a GPU; node 1: 2 GPUs and 104 cores.
  PackNode gpu_dense = Node(std::vector<int>(8, 1000), 96000);
  gpu_dense.cpu_capacity_milli = 96000;
  PackNode cpu_rich = Node({1000, 1000}, 104000);
  cpu_rich.cpu_capacity_milli = 104000;
  const TaskMix mix = MixOf({{Task(0, 0, 16000), 1}, {Task(1, 1000, 12000), 4}});
  SharePacker fill({gpu_dense, cpu_rich}, mix, PackingPolicy::kFillFgd, 1);
  auto placed = fill.Place(Task(0, 0, 16000));
  REQUIRE(placed);
  CHECK(placed->node == 1);
  CHECK(placed->gpus.empty());
}

TEST_CASE("a task that fits nowhere is refused and changes nothing") {
  const std::vector<PackNode> nodes = {Node({300, 1000}, 500), Node({400})};
  const TaskMix mix = MixOf({{Task(1, 500), 1}});
  for (PackingPolicy policy : {PackingPolicy::kRandom, PackingPolicy::kBestFit, PackingPolicy::kFgd}) {
    SharePacker packer(nodes, mix, policy, 1);
    CHECK_FALSE(packer.Place(Task(1, 500, 1000)));  // node 0 lacks CPU, node 1 GPU share
    CHECK(packer.nodes()[0].gpu_free_milli == nodes[0].gpu_free_milli);
    CHECK(packer.nodes()[0].cpu_free_milli == 500);
    CHECK(packer.nodes()[1].gpu_free_milli == nodes[1].gpu_free_milli);
  }
}

TEST_CASE("policy names parse back, and an unknown one does not") {
  for (PackingPolicy policy : {PackingPolicy::kRandom, PackingPolicy::kBestFit, PackingPolicy::kSpread,
                               PackingPolicy::kFgd, PackingPolicy::kFgdExact, PackingPolicy::kFillFgd}) {
    CHECK(ParsePackingPolicy(PackingPolicyName(policy)) == policy);
  }
  CHECK_FALSE(ParsePackingPolicy("tetris"));
  CHECK(PackingPolicyNames() == "random, best-fit, spread, fgd, fgd-exact, fill-fgd");
}

TEST_CASE("random placement is the same for the same seed") {
  std::vector<PackNode> nodes(20, Node({1000, 1000, 1000, 1000}));
  const TaskMix mix = MixOf({{Task(1, 300), 1}});
  SharePacker a(nodes, mix, PackingPolicy::kRandom, 5), b(nodes, mix, PackingPolicy::kRandom, 5),
      c(nodes, mix, PackingPolicy::kRandom, 6);
  int differs = 0;
  for (int i = 0; i < 50; ++i) {
    auto pa = a.Place(Task(1, 300));
    auto pb = b.Place(Task(1, 300));
    auto pc = c.Place(Task(1, 300));
    REQUIRE(pa);
    REQUIRE(pb);
    CHECK(pa->node == pb->node);
    CHECK(pa->gpus == pb->gpus);
    differs += pc->node != pa->node;
  }
  CHECK(differs > 0);
}

// The packer remembers each node's best answer per task until the node
// changes; a packer built from the same nodes at every step remembers
// nothing. They must agree on every placement of a long random sequence.
TEST_CASE("oracle: a long-lived packer places exactly as one built fresh from the same nodes") {
  std::mt19937_64 rng(11);
  std::vector<PackNode> nodes;
  for (int n = 0; n < 30; ++n) {
    const int gpus = std::vector<int>{1, 2, 4, 8}[rng() % 4];
    nodes.push_back(Node(std::vector<int>(gpus, 1000), 4000 * gpus));
    nodes.back().cpu_capacity_milli = 4000 * gpus;
    nodes.back().model = static_cast<int>(rng() % 2);
  }
  const std::vector<ShareRequest> kinds = {Task(0, 0, 3000),     Task(1, 250, 1000),  Task(1, 470, 2000),
                                           Task(1, 810, 500),    Task(1, 1000, 4000), Task(2, 1000, 6000),
                                           Task(8, 1000, 16000), Task(2, 300, 1000)};
  std::vector<ShareRequest> requests;
  for (int i = 0; i < 400; ++i) requests.push_back(kinds[rng() % kinds.size()]);
  requests[3].allowed_models = 0b10;
  const TaskMix mix = TaskMix::Of(requests);
  for (PackingPolicy policy : {PackingPolicy::kBestFit, PackingPolicy::kSpread, PackingPolicy::kFgd,
                               PackingPolicy::kFgdExact, PackingPolicy::kFillFgd}) {
    INFO(PackingPolicyName(policy));
    SharePacker long_lived(nodes, mix, policy, 1);
    int placed = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      INFO("request " << i);
      SharePacker fresh(long_lived.nodes(), mix, policy, 1);
      auto expected = fresh.Place(requests[i]);
      auto got = long_lived.Place(requests[i]);
      REQUIRE(got.has_value() == expected.has_value());
      if (!got) continue;
      ++placed;
      CHECK(got->node == expected->node);
      CHECK(got->gpus == expected->gpus);
    }
    // The sequence asks for more than the nodes hold: some are refused.
    CHECK(placed > 50);
    CHECK(placed < static_cast<int>(requests.size()));
  }
}
