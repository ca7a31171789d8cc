#include "daemon/sim/cluster_spec.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/sim/sim_cluster.h"
#include "tests/unit/sim/read_file.h"
#include "tests/unit/sim/test_specs.h"

using namespace gpusched::sim;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gpusched::sim::testing::ReadFile;
using testing::L40sType;
using testing::TinySpec;

namespace {

std::string ErrorOf(const std::string& text) {
  auto spec = ParseClusterSpec(text);
  INFO(text);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

// L40sType() is 7 lines: the first table after it starts on line 8.
const std::string kNodes = "[[nodes]]\nnames = \"n[1-2]\"\ntype = \"l40s\"\n";

}  // namespace

TEST_CASE("cluster spec: node types, nodes and the network") {
  auto spec = ParseClusterSpec(TinySpec(3));
  REQUIRE(spec.ok());
  CHECK(spec->name == "tiny");
  REQUIRE(spec->node_types.size() == 1);
  CHECK(spec->node_types[0].gpu_memory_mb == 46068);
  REQUIRE(spec->node_groups.size() == 1);
  CHECK(spec->node_groups[0].names == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(spec->network.Locate("n2")->leaf == "leaf1");

  auto cluster = BuildCluster(*spec, "");
  REQUIRE(cluster.ok());
  REQUIRE(cluster->nodes.size() == 3);
  CHECK(cluster->total_gpus == 12);
  const auto& n1 = cluster->nodes[0];
  CHECK(n1.name() == "n1");
  CHECK(n1.gpus_size() == 4);
  CHECK(n1.gpus(0).model() == "NVIDIA L40S");
  CHECK(n1.topology().network().leaf() == "leaf1");
  CHECK(n1.cpus() == 48);
  CHECK(cluster->summary ==
        "3 nodes, 12 GPUs: 3 x l40s (aws-g6e.12xlarge-4xL40S.txt); 1 leaf switches, "
        "0 spine switches, 0 NVLink domains");
}

TEST_CASE("cluster spec: the shipped examples load") {
  struct Case {
    const char* file;
    size_t nodes;
    int64_t gpus;
  };
  for (const Case& c : {Case{"dgx-h100-64.toml", 64, 512}, Case{"dgx-h100-160.toml", 160, 1280},
                        Case{"mixed-nvlink-pcie.toml", 44, 320}}) {
    INFO(c.file);
    auto spec = ParseClusterSpec(ReadFile(std::string(GPUSCHED_SIM_CLUSTERS) + "/" + c.file));
    REQUIRE(spec.ok());
    auto cluster = BuildCluster(*spec, GPUSCHED_SIM_CLUSTERS);
    REQUIRE(cluster.ok());
    CHECK(cluster->nodes.size() == c.nodes);
    CHECK(cluster->total_gpus == c.gpus);
    for (const auto& node : cluster->nodes) {
      INFO(node.name());
      CHECK_FALSE(node.topology().network().leaf().empty());
      CHECK(node.topology().network().spine() == "spine01");
    }
  }
}

TEST_CASE("cluster spec: errors name the line and the key") {
  CHECK_THAT(ErrorOf("colour = \"red\"\n"), StartsWith("line 1: unknown key colour in the top level (expected name)"));
  CHECK_THAT(ErrorOf(L40sType() + "speed = 3\n"),
             StartsWith("line 8: unknown key speed in [[node_type]] (expected name, topology, gpu_model"));
  CHECK_THAT(ErrorOf("\n[[node_type]]\nname = \"x\"\n"), StartsWith("line 2: [[node_type]] needs topology = \"...\""));
  CHECK_THAT(ErrorOf("[[node_type]]\nname = \"x\"\ntopology = \"t\"\ngpu_model = \"m\"\ngpu_memory_mb = \"80G\"\n"),
             StartsWith("line 5: gpu_memory_mb must be an integer, got a string"));
  CHECK_THAT(ErrorOf("[[node_type]]\nname = \"x\"\ntopology = \"t\"\ngpu_model = \"m\"\ngpu_memory_mb = 0\n"),
             StartsWith("line 5: gpu_memory_mb must be between 1 and"));
  CHECK_THAT(ErrorOf(L40sType() + L40sType()), StartsWith("line 8: node_type l40s is defined twice (first on line 1)"));
  CHECK_THAT(ErrorOf(L40sType() + "[[nodes]]\nnames = \"n1\"\ntype = \"h100\"\n"),
             StartsWith("line 10: unknown node_type \"h100\""));
  CHECK_THAT(ErrorOf(L40sType() + kNodes + "[[nodes]]\nnames = \"n2\"\ntype = \"l40s\"\n"),
             StartsWith("line 12: node n2 is defined twice"));
  CHECK_THAT(ErrorOf(L40sType() + "[[nodes]]\nnames = \"n[3-1]\"\ntype = \"l40s\"\n"), StartsWith("line 9: names: "));
  CHECK_THAT(ErrorOf(L40sType() + kNodes + "[switch]\n"), StartsWith("line 11: [switch] should be [[switch]]"));
  // TOML itself forbids this one; the message is toml++'s.
  CHECK_THAT(ErrorOf(L40sType() + kNodes + "[nodes]\n"),
             StartsWith("line 11: ") && Contains("cannot redefine existing array 'nodes' as table"));
  CHECK_THAT(ErrorOf(L40sType() + kNodes + "[[rack]]\n"),
             StartsWith("line 11: unknown table [[rack]] (expected node_type, nodes, switch or nvlink_domain)"));
  CHECK_THAT(ErrorOf(L40sType()), StartsWith("line 1: the cluster has no nodes"));
  CHECK_THAT(ErrorOf(L40sType() + kNodes + "[[switch]]\nname = \"leaf 1\"\nnodes = \"n1\"\n"),
             StartsWith("line 12: name \"leaf 1\" must not contain spaces"));
}

TEST_CASE("cluster spec: network errors point at the table that caused them") {
  const std::string base = L40sType() + kNodes;  // lines 1-10
  // The second leaf (line 14) lists n1 again; the first one is on line 11.
  CHECK_THAT(ErrorOf(base + "[[switch]]\nname = \"leaf1\"\nnodes = \"n[1-2]\"\n" +
                     "[[switch]]\nname = \"leaf2\"\nnodes = \"n1\"\n"),
             StartsWith("line 14: node \"n1\" is already under switch \"leaf1\" (line 11)"));
  CHECK_THAT(ErrorOf(base + "[[switch]]\nname = \"spine\"\nswitches = \"leafX\"\n"), Contains("line 11: "));
  CHECK_THAT(ErrorOf(base + "[[switch]]\nname = \"leaf1\"\nnodes = \"n[1-3]\"\n"),
             StartsWith("line 11: switch leaf1 lists node n3, which no [[nodes]] table defines"));
  CHECK_THAT(ErrorOf(base + "[[nvlink_domain]]\nname = \"nvl1\"\nnodes = \"n9\"\n"),
             StartsWith("line 11: nvlink_domain nvl1 lists node n9"));
  CHECK_THAT(ErrorOf(base + "[[switch]]\nname = \"leaf1\"\nnodes = \"n1\"\ncolour = 1\n"),
             StartsWith("line 14: unknown key colour in [[switch]] (expected name, nodes, switches)"));
}

TEST_CASE("cluster spec: an unknown topology names both places looked in") {
  std::string text = TinySpec(1);
  const std::string from = "aws-g6e.12xlarge-4xL40S.txt";
  text.replace(text.find(from), from.size(), "no-such-machine.txt");
  auto spec = ParseClusterSpec(text);
  REQUIRE(spec.ok());
  auto cluster = BuildCluster(*spec, "/nonexistent");
  REQUIRE_FALSE(cluster.ok());
  CHECK(cluster.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(cluster.status().message()),
             StartsWith("line 2: topology \"no-such-machine.txt\" is neither an embedded fixture ("));
  CHECK_THAT(std::string(cluster.status().message()), Contains("nor a readable file /nonexistent/no-such-machine.txt"));
}
