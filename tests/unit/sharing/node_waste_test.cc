// NodeWaste: what the common shares cannot fill of each GPU, and the share
// a node's CPU or memory cannot feed, on nodes small enough to add up by hand.
#include "daemon/core/sharing/node_waste.h"

#include <catch2/catch.hpp>

#include "tests/unit/sharing/sharing_test_util.h"

using namespace gpusched::core::sharing;
using namespace gpusched::core::sharing::testing;

TEST_CASE("a GPU's waste is what the common shares cannot fill of it") {
  // 0.47 and 0.32 common; 0.22 two shares in 102, under kFillSizeShare.
  const NodeWaste waste(MixOf({{Task(1, 470), 50}, {Task(1, 320), 50}, {Task(1, 220), 2}, {Task(1, 1000), 10}}));
  CHECK(waste.Leftover(530) == 60);                        // one 0.47
  CHECK(waste.Leftover(680) == 40);                        // two 0.32
  CHECK(waste.Leftover(800) == 10);                        // 0.47 + 0.32
  CHECK(waste.Leftover(220) == 220);                       // only the rare size fits
  CHECK(waste.Leftover(1000) == 0);                        // a whole-GPU task takes it
  CHECK(waste.Of(Node({530, 680, 1000})) == Approx(100));  // CPU and memory to spare
}

// The figures below count an unfed share at half.
static_assert(kStrandedWeight == 0.5);

TEST_CASE("the share a node's CPU cannot feed counts as waste, at kStrandedWeight") {
  const TaskMix mix = MixOf({{Task(1, 500, 4000), 10}});
  const NodeWaste waste(mix);
  // Two half-GPU holes ask 8 cores to fill; 4 are free: half of the 1000 is unfed.
  CHECK(waste.Of(Node({500, 500}, 4000)) == Approx(250));  // at kStrandedWeight 0.5
  CHECK(waste.Of(Node({500, 500}, 8000)) == Approx(0));
  CHECK(waste.Of(Node({500, 500}, 0)) == Approx(500));
  CHECK(waste.Of(Node({500, 500}, -2000)) == Approx(500));  // overcommitted: still all of it, no more
}

TEST_CASE("the share a node's memory cannot feed counts as waste too") {
  const NodeWaste waste(MixOf({{Task(1, 500), 10}}));  // 1 GiB each
  PackNode node = Node({500, 500});
  node.memory_free_mib = 512;  // a quarter of the 2 GiB the fill asks
  CHECK(waste.Of(node) == Approx(375));
}

TEST_CASE("a whole free GPU asks what a whole-GPU task asks, or what its shares ask when the mix has no whole tasks") {
  const PackNode node = Node({1000}, 6000);
  // A whole-GPU task asks 12 cores; 6 are free.
  const NodeWaste with_whole(MixOf({{Task(1, 1000, 12000), 3}, {Task(1, 500, 4000), 3}}));
  CHECK(with_whole.Of(node) == Approx(250));
  // Two half shares fill it, asking 8 cores.
  const NodeWaste shares_only(MixOf({{Task(1, 500, 4000), 3}}));
  CHECK(shares_only.Leftover(1000) == 0);
  CHECK(shares_only.Of(node) == Approx(125));
}

TEST_CASE("a share asking CPU in proportion to what fills its node costs no waste; a CPU-hungry one does") {
  const NodeWaste waste(MixOf({{Task(1, 500, 2000), 10}}));
  PackNode node = Node({1000, 1000}, 12000);
  CHECK(waste.Of(node) == Approx(0));
  PackNode hungry = node;
  Take(hungry, Task(1, 500, 8000), {0});
  // Left: 0.5 + 1.0 to fill, asking 2 + 4 cores, with 4 free.
  CHECK(waste.Of(hungry) == Approx(250));  // half of 1500 * (1 - 4 / 6)
  PackNode modest = node;
  Take(modest, Task(1, 500, 2000), {0});
  CHECK(waste.Of(modest) == Approx(0));
}

TEST_CASE("free GPUs no share may take count by what a whole-GPU task asks of the node") {
  PackNode node = Node({}, 6000);
  node.unshared_free_gpus = 1;
  // A whole-GPU task asks 12 cores; 6 are free: half of its GPU is unfed.
  const NodeWaste with_whole(MixOf({{Task(1, 1000, 12000), 3}, {Task(1, 500, 4000), 3}}));
  CHECK(with_whole.Of(node) == Approx(250));
  // Without whole-GPU tasks nothing of the mix will ever run there.
  const NodeWaste shares_only(MixOf({{Task(1, 500, 4000), 3}}));
  CHECK(shares_only.Of(node) == Approx(0));
}

TEST_CASE("placements that grow the waste alike compare equal, however each node's total rounds") {
  // Both nodes grow by 0.375 thousandths; rounded on each side, the first
  // would grow by 1 (624.25 -> 624.625) and the second by 0 (625 -> 625.375).
  const NodeWaste waste(MixOf({{Task(1, 500, 2000), 10}}));
  const ShareRequest task = Task(1, 500, 2003);
  int64_t growth[2];
  int64_t cpu_free[2] = {3006, 3000};
  for (int i = 0; i < 2; ++i) {
    const PackNode before = Node({1000, 1000}, cpu_free[i]);
    PackNode after = before;
    Take(after, task, {0});
    growth[i] = NodeWaste::Growth(waste.Of(before), waste.Of(after));
  }
  CHECK(growth[0] == 0);
  CHECK(growth[1] == 0);
}
