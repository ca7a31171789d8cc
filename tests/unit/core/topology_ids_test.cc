// TopologyIds: one interned topology per kind of node, and never another
// node's id from the cache.
#include "daemon/core/policy/topology_ids.h"

#include <catch2/catch.hpp>

#include "tests/unit/core/policy_test_cluster.h"

namespace gpusched::core::policy {
namespace {

using policy_testing::AddNode;
using policy_testing::kDgxA100;
using policy_testing::kG6e;
using policy_testing::kHgxH200;
using policy_testing::NodeInfoFor;

TEST_CASE("nodes of one kind share one interned topology; each kind is interned once", "[topology_ids]") {
  ClusterState cluster;
  AddNode(cluster, "a1", kDgxA100);
  AddNode(cluster, "a2", kDgxA100);
  AddNode(cluster, "h1", kHgxH200);
  placement::GpuChooser chooser;
  TopologyIds ids(chooser);

  const auto a1 = ids.Of(*cluster.Find("a1"));
  const auto a2 = ids.Of(*cluster.Find("a2"));
  const auto h1 = ids.Of(*cluster.Find("h1"));
  CHECK(a1 == a2);
  CHECK_FALSE(a1 == h1);
  CHECK(chooser.num_topologies() == 2);
  // Asked again, nothing is interned again.
  CHECK(ids.Of(*cluster.Find("a2")) == a2);
  CHECK(chooser.num_topologies() == 2);
  // The id names the node's own graph.
  REQUIRE(chooser.graph(h1) != nullptr);
  CHECK(chooser.graph(h1)->size() == cluster.Find("h1")->topology.num_gpus());
}

TEST_CASE("a node that registers with other GPUs gets the id of its new topology", "[topology_ids]") {
  ClusterState cluster;
  AddNode(cluster, "n1", kDgxA100);
  placement::GpuChooser chooser;
  TopologyIds ids(chooser);
  const auto before = ids.Of(*cluster.Find("n1"));

  cluster.UpsertNode(NodeInfoFor("n1", kG6e));  // same name, same place in the scan
  const auto after = ids.Of(*cluster.Find("n1"));
  CHECK_FALSE(after == before);
  REQUIRE(chooser.graph(after) != nullptr);
  CHECK(chooser.graph(after)->size() == 4);
}

TEST_CASE("a node of another cluster at the same place in the scan is not taken for the cached one", "[topology_ids]") {
  ClusterState first, second;
  AddNode(first, "n1", kDgxA100);
  AddNode(second, "n1", kG6e);
  REQUIRE(first.Find("n1")->scan_index == second.Find("n1")->scan_index);
  placement::GpuChooser chooser;
  TopologyIds ids(chooser);

  const auto in_first = ids.Of(*first.Find("n1"));
  const auto in_second = ids.Of(*second.Find("n1"));
  CHECK_FALSE(in_first == in_second);
  CHECK(chooser.graph(in_second)->size() == 4);
  // And back: the first cluster's node is its own again.
  CHECK(ids.Of(*first.Find("n1")) == in_first);
}

TEST_CASE("InternAll makes every kind of node of the cluster known, once per topology epoch", "[topology_ids]") {
  ClusterState cluster;
  AddNode(cluster, "a1", kDgxA100);
  AddNode(cluster, "g1", kG6e);
  AddNode(cluster, "g2", kG6e);
  placement::GpuChooser chooser;
  TopologyIds ids(chooser);
  ids.InternAll(cluster);
  CHECK(chooser.num_topologies() == 2);

  AddNode(cluster, "h1", kHgxH200);  // a new epoch
  ids.InternAll(cluster);
  CHECK(chooser.num_topologies() == 3);
}

}  // namespace
}  // namespace gpusched::core::policy
