// ModelPressure: how much of each GPU model the tasks limited to some models
// expect to need.
#include "daemon/core/sharing/model_pressure.h"

#include <catch2/catch.hpp>

#include "tests/unit/sharing/sharing_test_util.h"

using namespace gpusched::core::sharing;
using namespace gpusched::core::sharing::testing;

namespace {

ShareRequest LimitedTo(ShareRequest task, uint64_t models) {
  task.allowed_models = models;
  return task;
}

}  // namespace

TEST_CASE("no task limited to a model: no model is pressed") {
  const std::vector<PackNode> nodes = {Node({1000, 1000}, 32000, 0), Node({1000}, 32000, 1)};
  const std::vector<double> pressure = ModelPressure(nodes, MixOf({{Task(1, 1000), 5}, {Task(1, 300), 5}}));
  CHECK(pressure[0] == 0);
  CHECK(pressure[1] == 0);
}

TEST_CASE("a model is pressed by the share of its capacity the tasks limited to it expect to need") {
  // 8 GPUs of model 0, 2 of model 1. One task in ten, all whole GPUs, may run
  // only on model 1: a tenth of the cluster's request, half of model 1.
  const std::vector<PackNode> nodes = {Node(std::vector<int>(8, 1000), 32000, 0), Node({1000, 1000}, 32000, 1)};
  const TaskMix mix = MixOf({{Task(1, 1000), 9}, {LimitedTo(Task(1, 1000), 0b10), 1}});
  const std::vector<double> pressure = ModelPressure(nodes, mix);
  CHECK(pressure[0] == 0);
  CHECK(pressure[1] == Approx(0.5));
}

TEST_CASE("a task limited to several models presses each by its capacity; one allowed every model present, none") {
  // Models 0, 1, 2 with 2, 1 and 1 GPUs. Half the request may run on 1 or 2
  // only (a quarter of it on each, a whole GPU of request per GPU of those
  // models at the mix's scale); the other half on 0, 1 or 2 (every model
  // present, though not model 3, which no node has).
  const std::vector<PackNode> nodes = {Node({1000, 1000}, 32000, 0), Node({1000}, 32000, 1), Node({1000}, 32000, 2)};
  const TaskMix mix = MixOf({{LimitedTo(Task(1, 1000), 0b0110), 1}, {LimitedTo(Task(1, 1000), 0b0111), 1}});
  const std::vector<double> pressure = ModelPressure(nodes, mix);
  CHECK(pressure[0] == 0);
  CHECK(pressure[1] == Approx(1.0));
  CHECK(pressure[2] == Approx(1.0));
}
