// FGD's fragment measure, on nodes small enough to check by hand.
#include "daemon/core/sharing/fragmentation.h"

#include <catch2/catch.hpp>

#include "tests/unit/sharing/sharing_test_util.h"

using namespace gpusched::core::sharing;
using namespace gpusched::core::sharing::testing;

TEST_CASE("a task's fragment is the free share of the GPUs too small for it") {
  const PackNode node = Node({1000, 500, 200});
  CHECK(Fragment(node, Task(1, 300)) == 200);
  CHECK(Fragment(node, Task(1, 500)) == 200);
  CHECK(Fragment(node, Task(1, 501)) == 700);
  CHECK(Fragment(node, Task(1, 1000)) == 700);
}

TEST_CASE("all of a node's free share is fragment for a task that cannot run there at all") {
  const PackNode node = Node({1000, 500, 200}, 2000);
  CHECK(Fragment(node, Task(2, 1000)) == 1700);       // one fully free GPU only
  CHECK(Fragment(node, Task(1, 100, 2001)) == 1700);  // not enough CPU
  CHECK(Fragment(node, Task(0, 0)) == 1700);          // asks for no GPU
  ShareRequest other_model = Task(1, 100);
  other_model.allowed_models = 0b10;
  CHECK(Fragment(node, other_model) == 1700);
  CHECK(Fragment(Node({0, 0}), Task(1, 100)) == 0);
}

TEST_CASE("the mix weighs each distinct task by how often it occurs") {
  const std::vector<ShareRequest> requests = {Task(1, 300), Task(1, 1000), Task(1, 300), Task(1, 300)};
  const TaskMix mix = TaskMix::Of(requests);
  REQUIRE(mix.tasks.size() == 2);
  CHECK(mix.counts == std::vector<int64_t>{3, 1});
  CHECK(mix.total == 4);
  const PackNode node = Node({1000, 500, 200});
  // 3 x 200 (the 300s) + 1 x 700 (the whole GPU).
  CHECK(FragmentSum(node, mix) == 1300);
  CHECK(ExpectedFragment(node, mix) == Approx(325));
}
