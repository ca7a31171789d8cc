#include <catch2/catch.hpp>

#include "daemon/metrics/daemon_metrics.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::metrics {
namespace {

using testing::Value;

v1::Node NodeRow(const std::string& name, v1::NodeState state, int gpus, int free) {
  v1::Node node;
  node.mutable_info()->set_name(name);
  for (int i = 0; i < gpus; ++i) node.mutable_info()->add_gpus()->set_index(i);
  node.set_state(state);
  node.set_gpus_free(free);
  return node;
}

core::Effects Changed(std::initializer_list<v1::Node> nodes) {
  core::Effects fx;
  for (const v1::Node& node : nodes) fx.nodes[node.info().name()] = node;
  return fx;
}

double Gpus(const DaemonMetrics& m, const char* state) {
  return Value(*m.registry(), "gpusched_gpus", {{"state", state}});
}
double Nodes(const DaemonMetrics& m, const char* state) {
  return Value(*m.registry(), "gpusched_nodes", {{"state", state}});
}
double NodeState(const DaemonMetrics& m, const char* node, const char* state) {
  return Value(*m.registry(), "gpusched_node_state", {{"node", node}, {"state", state}});
}

TEST_CASE("GPU and node counts follow the node rows") {
  DaemonMetrics m;
  CHECK(Gpus(m, "free") == 0);
  CHECK(Nodes(m, "up") == 0);

  m.Apply(Changed({NodeRow("a", v1::NODE_STATE_UP, 8, 8), NodeRow("b", v1::NODE_STATE_UP, 4, 4)}));
  CHECK(Nodes(m, "up") == 2);
  CHECK(Gpus(m, "free") == 12);
  CHECK(NodeState(m, "a", "up") == 1);
  CHECK(NodeState(m, "a", "down") == 0);

  m.Apply(Changed({NodeRow("a", v1::NODE_STATE_UP, 8, 6)}));  // a 2-GPU job started
  CHECK(Gpus(m, "allocated") == 2);
  CHECK(Gpus(m, "free") == 10);

  SECTION("a silent node's free GPUs are down; its allocated ones stay allocated") {
    m.Apply(Changed({NodeRow("a", v1::NODE_STATE_NOT_RESPONDING, 8, 6)}));
    CHECK(Nodes(m, "up") == 1);
    CHECK(Nodes(m, "not_responding") == 1);
    CHECK(NodeState(m, "a", "up") == 0);
    CHECK(NodeState(m, "a", "not_responding") == 1);
    CHECK(Gpus(m, "allocated") == 2);
    CHECK(Gpus(m, "free") == 4);
    CHECK(Gpus(m, "down") == 6);

    m.Apply(Changed({NodeRow("a", v1::NODE_STATE_DOWN, 8, 8)}));  // its gang was stopped
    CHECK(Nodes(m, "not_responding") == 0);
    CHECK(Nodes(m, "down") == 1);
    CHECK(Gpus(m, "allocated") == 0);
    CHECK(Gpus(m, "down") == 8);

    m.Apply(Changed({NodeRow("a", v1::NODE_STATE_UP, 8, 8)}));  // back
    CHECK(Nodes(m, "up") == 2);
    CHECK(Nodes(m, "down") == 0);
    CHECK(Gpus(m, "down") == 0);
    CHECK(Gpus(m, "free") == 12);
  }
}

TEST_CASE("a drained node's unallocated GPUs are drained, not free, until it is resumed") {
  DaemonMetrics m;
  m.Apply(Changed({NodeRow("a", v1::NODE_STATE_UP, 8, 6)}));
  v1::Node drained = NodeRow("a", v1::NODE_STATE_UP, 8, 6);
  drained.set_drain_reason("bad NVLink");
  m.Apply(Changed({drained}));
  CHECK(Gpus(m, "allocated") == 2);
  CHECK(Gpus(m, "free") == 0);
  CHECK(Gpus(m, "drained") == 6);
  CHECK(Nodes(m, "up") == 1);  // drained is not a liveness state
  drained.set_state(v1::NODE_STATE_NOT_RESPONDING);
  m.Apply(Changed({drained}));
  CHECK(Gpus(m, "drained") == 0);
  CHECK(Gpus(m, "down") == 6);
  m.Apply(Changed({NodeRow("a", v1::NODE_STATE_UP, 8, 6)}));  // resumed and back
  CHECK(Gpus(m, "drained") == 0);
  CHECK(Gpus(m, "free") == 6);
}

TEST_CASE("restored nodes are counted as the core restored them") {
  DaemonMetrics m;
  m.RestoreNodes({NodeRow("a", v1::NODE_STATE_NOT_RESPONDING, 8, 5)});
  CHECK(Nodes(m, "not_responding") == 1);
  CHECK(Gpus(m, "allocated") == 3);
  CHECK(Gpus(m, "down") == 5);
}

}  // namespace
}  // namespace gpusched::metrics
