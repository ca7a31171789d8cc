#include "daemon/sim/runtime_model.h"

#include <catch2/catch.hpp>

#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/sim_cluster.h"
#include "tests/unit/sim/test_specs.h"

using namespace gpusched;
using sim::RuntimeModel;

TEST_CASE("runtime model: duration x (1 + c x (ideal / placed - 1))") {
  RuntimeModel model;
  CHECK(model.comm_share == 0.1);
  CHECK(model.Factor(8, 400, 100) == Approx(1 + 0.1 * 3));
  CHECK(model.Factor(8, 400, 400) == 1.0);
  CHECK(model.Factor(8, 100, 400) == 1.0);  // better than ideal is no faster
  CHECK(model.Factor(1, 400, 0) == 1.0);    // a single GPU has no ring
  CHECK(model.Factor(4, 0, 50) == 1.0);     // no ideal known
  model.comm_share = 1.0;
  CHECK(model.Factor(2, 200, 50) == Approx(4.0));  // all communication: time scales with 1/bandwidth
  model.slowdown = false;
  CHECK(model.Factor(2, 200, 50) == 1.0);
}

TEST_CASE("ideal bandwidth: the topology policy on the idle cluster, by request shape") {
  auto spec = sim::ParseClusterSpec(sim::testing::TinySpec(2));
  REQUIRE(spec.ok());
  auto cluster = sim::BuildCluster(*spec, "");
  REQUIRE(cluster.ok());
  sim::IdealBandwidth ideal(cluster->nodes);
  core::GangRequest two;
  two.total_gpus = 2;
  core::GangRequest eight;
  eight.total_gpus = 8;
  core::GangRequest nine;
  nine.total_gpus = 9;
  const double in_node = ideal.For(two);
  const double across = ideal.For(eight);
  CHECK(in_node > 0);
  CHECK(across > 0);
  CHECK(across < in_node);  // 8 GPUs need both nodes: the network is the bottleneck
  CHECK(ideal.For(two) == in_node);
  CHECK(ideal.For(nine) == 0);  // does not fit at all
}
