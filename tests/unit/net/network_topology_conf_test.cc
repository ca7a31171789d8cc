#include "common/net/network_topology_conf.h"

#include <catch2/catch.hpp>
#include <string>

using gpusched::NetworkTopologyConf;
using gpusched::ParseNetworkTopologyConf;
using gpusched::topology::NetworkLocation;
using Names = std::vector<std::string>;

namespace Catch {
template <>
struct StringMaker<NetworkLocation> {
  static std::string convert(const NetworkLocation& l) {
    return "{rack=" + l.rack + " leaf=" + l.leaf + " spine=" + l.spine + " nvlink_domain=" + l.nvlink_domain + "}";
  }
};
}  // namespace Catch

namespace {

NetworkTopologyConf Parse(const std::string& text) {
  auto conf = ParseNetworkTopologyConf(text);
  INFO(conf.status().ToString());
  REQUIRE(conf.ok());
  return *std::move(conf);
}

NetworkLocation Location(std::string rack, std::string leaf, std::string spine, std::string nvlink_domain) {
  return NetworkLocation{std::move(rack), std::move(leaf), std::move(spine), std::move(nvlink_domain)};
}

// Two pods of 128 nodes: each spine over four leaf switches of 32 nodes.
constexpr const char* kTwoPods = R"(# H100 cluster, InfiniBand NDR, rail-optimised per pod
SwitchName=leaf01 Nodes=gpu[001-032] LinkSpeed=400
SwitchName=leaf02 Nodes=gpu[033-064] LinkSpeed=400
SwitchName=leaf03 Nodes=gpu[065-096] LinkSpeed=400
SwitchName=leaf04 Nodes=gpu[097-128] LinkSpeed=400
SwitchName=leaf05 Nodes=gpu[129-160] LinkSpeed=400
SwitchName=leaf06 Nodes=gpu[161-192] LinkSpeed=400
SwitchName=leaf07 Nodes=gpu[193-224] LinkSpeed=400
SwitchName=leaf08 Nodes=gpu[225-256] LinkSpeed=400

SwitchName=spine01 Switches=leaf[01-04]
SwitchName=spine02 Switches=leaf[05-08]
)";

}  // namespace

TEST_CASE("two spines over eight leaves place all 256 nodes") {
  NetworkTopologyConf conf = Parse(kTwoPods);
  CHECK(conf.Locate("gpu001") == Location("", "leaf01", "spine01", ""));
  CHECK(conf.Locate("gpu032") == Location("", "leaf01", "spine01", ""));
  CHECK(conf.Locate("gpu033") == Location("", "leaf02", "spine01", ""));
  CHECK(conf.Locate("gpu128") == Location("", "leaf04", "spine01", ""));
  CHECK(conf.Locate("gpu129") == Location("", "leaf05", "spine02", ""));
  CHECK(conf.Locate("gpu256") == Location("", "leaf08", "spine02", ""));
  CHECK_FALSE(conf.Locate("gpu257").has_value());
  CHECK_FALSE(conf.Locate("gpu1").has_value());  // padding matters
  CHECK_FALSE(conf.Locate("spine01").has_value());

  REQUIRE(conf.switches().size() == 10);
  size_t nodes = 0;
  for (const auto& sw : conf.switches()) nodes += sw.nodes.size();
  CHECK(nodes == 256);
  CHECK(conf.switches()[0].name == "leaf01");
  CHECK(conf.switches()[0].line == 2);
  CHECK(conf.switches()[8].line == 11);
  CHECK(conf.blocks().empty());

  const auto* spine = conf.FindSwitch("spine02");
  REQUIRE(spine != nullptr);
  CHECK(spine->children == Names{"leaf05", "leaf06", "leaf07", "leaf08"});
  CHECK(spine->parent.empty());
  CHECK(spine->nodes.empty());
  CHECK(conf.FindSwitch("leaf07")->parent == "spine02");
  CHECK(conf.FindSwitch("leaf9") == nullptr);
  CHECK(conf.SwitchPath("gpu100") == Names{"leaf04", "spine01"});
  CHECK(conf.SwitchPath("nobody").empty());
}

TEST_CASE("with more than two levels the spine is the top of the tree") {
  NetworkTopologyConf conf = Parse(std::string(kTwoPods) + "SwitchName=core Switches=spine[01-02]\n");
  CHECK(conf.Locate("gpu001") == Location("", "leaf01", "core", ""));
  CHECK(conf.Locate("gpu200") == Location("", "leaf07", "core", ""));
  CHECK(conf.SwitchPath("gpu200") == Names{"leaf07", "spine02", "core"});
  CHECK(conf.FindSwitch("spine01")->parent == "core");
}

TEST_CASE("a leaf with nothing above it has no spine") {
  NetworkTopologyConf conf = Parse("SwitchName=tor1 Nodes=n[1-4]\n");
  CHECK(conf.Locate("n3") == Location("", "tor1", "", ""));
  CHECK(conf.SwitchPath("n3") == Names{"tor1"});
}

TEST_CASE("GB200 NVL72 blocks give each tray its NVLink domain") {
  NetworkTopologyConf conf = Parse(R"(
# GB200 NVL72: 18 compute trays (4 GPUs each) per rack share one NVLink domain.
BlockName=nvl72-r01 Nodes=gb200-r01-c[01-18]
BlockName=nvl72-r02 Nodes=gb200-r02-c[01-18]
BlockName=nvl72-r03 Nodes=gb200-r03-c[01-18]
BlockName=nvl72-r04 Nodes=gb200-r04-c[01-18]
BlockSizes=18,72
)");
  REQUIRE(conf.blocks().size() == 4);
  CHECK(conf.blocks()[1].name == "nvl72-r02");
  CHECK(conf.blocks()[1].line == 4);
  CHECK(conf.blocks()[1].nodes.size() == 18);
  CHECK(conf.block_sizes() == std::vector<int>{18, 72});
  CHECK(conf.Locate("gb200-r01-c01") == Location("", "", "", "nvl72-r01"));
  CHECK(conf.Locate("gb200-r04-c18") == Location("", "", "", "nvl72-r04"));
  CHECK_FALSE(conf.Locate("gb200-r05-c01").has_value());
  CHECK(conf.FindBlock("nvl72-r03") != nullptr);
  CHECK(conf.FindBlock("nvl72-r05") == nullptr);
  CHECK(conf.switches().empty());
  CHECK(conf.SwitchPath("gb200-r01-c01").empty());
}

TEST_CASE("one file may describe both the tree and the NVLink blocks") {
  NetworkTopologyConf conf = Parse(R"(
SwitchName=leaf-a Nodes=gb[001-036]
SwitchName=leaf-b Nodes=gb[037-072]
SwitchName=spine  Switches=leaf-a,leaf-b
BlockName=nvl1 Nodes=gb[001-018]
BlockName=nvl2 Nodes=gb[019-036]
BlockName=nvl3 Nodes=gb[037-054]
)");
  CHECK(conf.Locate("gb020") == Location("", "leaf-a", "spine", "nvl2"));
  CHECK(conf.Locate("gb050") == Location("", "leaf-b", "spine", "nvl3"));
  CHECK(conf.Locate("gb070") == Location("", "leaf-b", "spine", ""));
}

TEST_CASE("a tree file in Slurm's documented syntax parses") {
  // Written in the shape of a Slurm site's topology.conf: InfiniBand leaves
  // with irregular node lists, a core switch above them, link speeds.
  NetworkTopologyConf conf = Parse(R"(##################################################################
# Slurm's network topology configuration file for use with the
# topology/tree plugin
##################################################################
SwitchName=ib-leaf0 Nodes=tux[0-15]                  LinkSpeed=200
SwitchName=ib-leaf1 Nodes=tux[16-31],spare1          LinkSpeed=200
SwitchName=ib-leaf2 Nodes=tux[32-41,44-47],login[1-2]
SwitchName=ib-core  Switches=ib-leaf[0-2]            LinkSpeed=800
)");
  CHECK(conf.Locate("tux0") == Location("", "ib-leaf0", "ib-core", ""));
  CHECK(conf.Locate("spare1") == Location("", "ib-leaf1", "ib-core", ""));
  CHECK(conf.Locate("login2") == Location("", "ib-leaf2", "ib-core", ""));
  CHECK_FALSE(conf.Locate("tux42").has_value());
  CHECK(conf.FindSwitch("ib-leaf2")->nodes.size() == 16);
}

TEST_CASE("keys are case-insensitive; comments, blanks and CRLF are fine") {
  NetworkTopologyConf conf = Parse(
      "   # leading comment\r\n"
      "\r\n"
      "switchname=top SWITCHES=l[1-2]   # forward references are allowed\r\n"
      "\tSwitchname=l1\tnodes=n[1-2]  linkspeed=100\r\n"
      "SWITCHNAME=l2 NoDeS=\"n3, n4\"\r\n"
      "blockname=b1 NODES=n[1-4]\r\n"
      "blocksizes=4\r\n"
      "# trailing comment without newline");
  CHECK(conf.Locate("n4") == Location("", "l2", "top", "b1"));
  CHECK(conf.FindSwitch("top")->line == 3);
  CHECK(conf.block_sizes() == std::vector<int>{4});
  // Names keep their case; lookups are exact.
  CHECK(conf.FindSwitch("TOP") == nullptr);
}

TEST_CASE("empty input is an empty network") {
  for (const char* text : {"", "\n\n", "# nothing yet\n"}) {
    NetworkTopologyConf conf = Parse(text);
    CHECK(conf.switches().empty());
    CHECK(conf.blocks().empty());
    CHECK_FALSE(conf.Locate("n1").has_value());
  }
  CHECK_FALSE(NetworkTopologyConf().Locate("n1").has_value());
}
