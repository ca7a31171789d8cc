// What one node can host and the distinct ways it can host it.
#include "daemon/core/sharing/pack_node.h"

#include <catch2/catch.hpp>

#include "tests/unit/sharing/sharing_test_util.h"

using namespace gpusched::core::sharing;
using namespace gpusched::core::sharing::testing;

TEST_CASE("a share fits a GPU with that much free; a whole GPU only a GPU nobody shares") {
  const PackNode node = Node({1000, 600, 300});
  CHECK(Fits(node, Task(1, 600)));
  CHECK(Fits(node, Task(1, 601)));  // on GPU 0 only
  CHECK_FALSE(Fits(Node({600, 300}), Task(1, 601)));
  CHECK(Fits(node, Task(1, 1000)));
  CHECK_FALSE(Fits(node, Task(2, 1000)));
  CHECK(Fits(node, Task(2, 600)));
  CHECK_FALSE(Fits(node, Task(3, 600)));
  CHECK(Fits(node, Task(0, 0)));
}

TEST_CASE("CPU, memory and the GPU model each keep a task off a node") {
  const PackNode node = Node({1000}, 4000, 2);
  CHECK_FALSE(Fits(node, Task(1, 500, 4001)));
  ShareRequest big_memory = Task(1, 500);
  big_memory.memory_mib = 65537;
  CHECK_FALSE(Fits(node, big_memory));
  ShareRequest other_model = Task(1, 500);
  other_model.allowed_models = 0b011;
  CHECK_FALSE(Fits(node, other_model));
  other_model.allowed_models = 0b100;
  CHECK(Fits(node, other_model));
  // A CPU-only task needs no GPU of any model.
  ShareRequest cpu_only = Task(0, 0);
  cpu_only.allowed_models = 0;
  CHECK(Fits(node, cpu_only));
}

TEST_CASE("GPUs with the same free share are one choice; each distinct level is offered once") {
  const PackNode node = Node({1000, 500, 1000, 500, 200});
  const auto choices = DistinctGpuChoices(node, Task(1, 300));
  REQUIRE(choices.size() == 2);
  CHECK(choices[0] == std::vector<int>{0});
  CHECK(choices[1] == std::vector<int>{1});
}

TEST_CASE("whole GPUs are the lowest fully free ones; a share on several GPUs takes the tightest") {
  const PackNode node = Node({400, 1000, 700, 1000, 1000, 500});
  const auto whole = DistinctGpuChoices(node, Task(2, 1000));
  REQUIRE(whole.size() == 1);
  CHECK(whole[0] == std::vector<int>{1, 3});
  const auto shares = DistinctGpuChoices(node, Task(2, 450));
  REQUIRE(shares.size() == 1);
  CHECK(shares[0] == std::vector<int>{2, 5});
  CHECK(DistinctGpuChoices(node, Task(4, 1000)).empty());
}

TEST_CASE("taking a placement charges CPU, memory and each listed GPU") {
  PackNode node = Node({1000, 1000});
  Take(node, Task(2, 250, 3000), {0, 1});
  CHECK(node.cpu_free_milli == 29000);
  CHECK(node.memory_free_mib == 65536 - 1024);
  CHECK(node.gpu_free_milli == std::vector<int>{750, 750});
  CHECK(node.FreeGpuMilli() == 1500);
  CHECK(node.GpuCapacityMilli() == 2000);
}
