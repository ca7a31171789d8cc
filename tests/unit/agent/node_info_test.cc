#include "agent/node_info.h"

#include <catch2/catch.hpp>

using gpusched::agent::AgentOptions;
using gpusched::agent::DescribeNode;
namespace v1 = gpusched::v1;

TEST_CASE("the registered node: configured values win over discovered ones, the host fills the rest") {
  AgentOptions options;
  options.node_name = "node-a";
  options.advertise_address = "10.0.0.7";
  options.labels = {{"rack", "r1"}, {"leaf", "l2"}};

  v1::NodeInfo discovered;
  discovered.set_name("ignored");
  discovered.set_cpus(224);
  (*discovered.mutable_labels())["rack"] = "from-source";
  (*discovered.mutable_labels())["nvlink_domain"] = "d0";
  discovered.add_gpus()->set_uuid("GPU-x");

  v1::NodeInfo node = DescribeNode(options, discovered);
  CHECK(node.name() == "node-a");
  CHECK(node.address() == "10.0.0.7");
  CHECK(node.cpus() == 224);        // the source knew, nobody overrode
  CHECK(node.memory_mb() > 0);      // nobody knew: the host's own
  CHECK(node.gpus_size() == 1);
  CHECK(node.labels().at("rack") == "r1");
  CHECK(node.labels().at("leaf") == "l2");
  CHECK(node.labels().at("nvlink_domain") == "d0");
  CHECK(node.agent_version() == "0.1.0");

  options.cpus = 8;
  options.memory_mb = 1024;
  node = DescribeNode(options, discovered);
  CHECK(node.cpus() == 8);
  CHECK(node.memory_mb() == 1024);
}
