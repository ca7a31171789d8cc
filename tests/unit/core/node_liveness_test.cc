// NodeLiveness: what a node's silence makes of it.
#include "daemon/core/node_liveness.h"

#include <catch2/catch.hpp>

namespace gpusched::core {
namespace {

void AddNode(ClusterState& cluster, const std::string& name, v1::NodeState state) {
  v1::NodeInfo info;
  info.set_name(name);
  info.set_cpus(8);
  info.set_memory_mb(1024);
  cluster.UpsertNode(info);
  cluster.SetState(name, state, "");
}

std::vector<std::string> Names(const std::vector<NodeLiveness::Silent>& silent) {
  std::vector<std::string> names;
  for (const auto& s : silent) names.push_back(s.node);
  return names;
}

const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);

TEST_CASE("an up node silent past the first bound stops responding, past the second it is down", "[node_liveness]") {
  ClusterState cluster;
  AddNode(cluster, "n1", v1::NODE_STATE_UP);
  NodeLiveness liveness(absl::Seconds(30), absl::Minutes(2));
  liveness.Heard("n1", kT0);

  NodeLiveness::Verdicts at29 = liveness.Judge(cluster, kT0 + absl::Seconds(29));
  CHECK(at29.not_responding.empty());
  CHECK(at29.down.empty());

  NodeLiveness::Verdicts at30 = liveness.Judge(cluster, kT0 + absl::Seconds(30));
  REQUIRE(Names(at30.not_responding) == std::vector<std::string>{"n1"});
  CHECK(at30.not_responding[0].silent == absl::Seconds(30));
  CHECK(at30.down.empty());

  // Once NOT_RESPONDING it is not said again; at the second bound it is down.
  cluster.SetState("n1", v1::NODE_STATE_NOT_RESPONDING, "no heartbeat");
  CHECK(liveness.Judge(cluster, kT0 + absl::Seconds(60)).not_responding.empty());
  NodeLiveness::Verdicts at120 = liveness.Judge(cluster, kT0 + absl::Minutes(2));
  CHECK(Names(at120.down) == std::vector<std::string>{"n1"});
  CHECK(at120.not_responding.empty());
}

TEST_CASE("hearing a node again starts its silence over", "[node_liveness]") {
  ClusterState cluster;
  AddNode(cluster, "n1", v1::NODE_STATE_UP);
  NodeLiveness liveness(absl::Seconds(30), absl::Minutes(2));
  liveness.Heard("n1", kT0);
  liveness.Heard("n1", kT0 + absl::Seconds(100));
  CHECK(liveness.LastSeen("n1") == kT0 + absl::Seconds(100));
  NodeLiveness::Verdicts v = liveness.Judge(cluster, kT0 + absl::Seconds(125));
  CHECK(v.not_responding.empty());
  CHECK(v.down.empty());
}

TEST_CASE("down nodes, nodes in a power state and nodes never heard are not judged", "[node_liveness]") {
  ClusterState cluster;
  AddNode(cluster, "down", v1::NODE_STATE_DOWN);
  AddNode(cluster, "off", v1::NODE_STATE_POWERED_DOWN);
  AddNode(cluster, "booting", v1::NODE_STATE_POWERING_UP);
  AddNode(cluster, "never", v1::NODE_STATE_UP);
  AddNode(cluster, "forgotten", v1::NODE_STATE_UP);
  AddNode(cluster, "silent", v1::NODE_STATE_UP);
  NodeLiveness liveness(absl::Seconds(30), absl::Minutes(2));
  for (const char* name : {"down", "off", "booting", "forgotten", "silent"}) liveness.Heard(name, kT0);
  liveness.Forget("forgotten");
  CHECK_FALSE(liveness.LastSeen("forgotten").has_value());
  CHECK_FALSE(liveness.LastSeen("never").has_value());

  NodeLiveness::Verdicts v = liveness.Judge(cluster, kT0 + absl::Hours(1));
  CHECK(Names(v.down) == std::vector<std::string>{"silent"});
  CHECK(v.not_responding.empty());
}

TEST_CASE("verdicts come in name order", "[node_liveness]") {
  ClusterState cluster;
  NodeLiveness liveness(absl::Seconds(30), absl::Minutes(2));
  for (const char* name : {"c", "a", "b"}) {
    AddNode(cluster, name, v1::NODE_STATE_UP);
    liveness.Heard(name, kT0);
  }
  CHECK(Names(liveness.Judge(cluster, kT0 + absl::Seconds(40)).not_responding) ==
        std::vector<std::string>{"a", "b", "c"});
}

}  // namespace
}  // namespace gpusched::core
