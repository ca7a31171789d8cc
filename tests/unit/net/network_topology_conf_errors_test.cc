#include <catch2/catch.hpp>
#include <string>

#include "common/net/network_topology_conf.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gpusched::ParseNetworkTopologyConf;

namespace {

std::string ErrorOf(const std::string& text) {
  auto conf = ParseNetworkTopologyConf(text);
  INFO(text);
  REQUIRE_FALSE(conf.ok());
  CHECK(conf.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(conf.status().message());
}

}  // namespace

TEST_CASE("unknown and misplaced keys") {
  CHECK_THAT(ErrorOf("# c\nSwitchName=s1 Nodes=n1 Speed=3\n"),
             StartsWith("network topology: line 2: unknown key Speed on a SwitchName line "
                        "(expected SwitchName, Switches, Nodes or LinkSpeed)"));
  CHECK_THAT(ErrorOf("BlockName=b1 Nodes=n1 Switches=s1"),
             Contains("line 1: unknown key Switches on a BlockName line"));
  CHECK_THAT(ErrorOf("BlockSizes=4 Nodes=n1"), Contains("line 1: unknown key Nodes on a BlockSizes line"));
  CHECK_THAT(ErrorOf("SwitchName=s1 Nodes=n1 nodes=n2"), Contains("line 1: key nodes is given twice"));
}

TEST_CASE("a line must define a switch or a block") {
  CHECK_THAT(ErrorOf("SwitchName=s1 Nodes=n1\n\nNodes=n[2-3]\n"),
             Contains("line 3: expected SwitchName= or BlockName= on the line, found Nodes= first"));
  CHECK_THAT(ErrorOf("SwitchName=s1 BlockName=b1 Nodes=n1"),
             Contains("line 1: a line defines a switch (SwitchName=) or a block (BlockName=), not both"));
  CHECK_THAT(ErrorOf("SwitchName=s1 Nodes=n1 oops"), Contains("line 1: column 24: expected Key=Value, found \"oops\""));
}

TEST_CASE("a switch lists nodes or switches, exactly one of them") {
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=s1 Nodes=n2 Switches=l1\n"),
             Contains("line 2: switch \"s1\" has both Nodes= and Switches="));
  CHECK_THAT(ErrorOf("SwitchName=s1 LinkSpeed=100"),
             Contains("line 1: switch \"s1\" has neither Nodes= nor Switches="));
  CHECK_THAT(ErrorOf("SwitchName=s1 Nodes="), Contains("line 1: Nodes= is empty"));
  CHECK_THAT(ErrorOf("SwitchName=s1 Switches=\" \""), Contains("line 1: Switches= is empty"));
  CHECK_THAT(ErrorOf("BlockName=b1"), Contains("line 1: block \"b1\" has no Nodes="));
}

TEST_CASE("names must be single and unique") {
  CHECK_THAT(ErrorOf("SwitchName= Nodes=n1"), Contains("line 1: SwitchName= is empty"));
  CHECK_THAT(ErrorOf("SwitchName=leaf[1-2] Nodes=n1"),
             Contains("line 1: SwitchName= takes one name, found \"leaf[1-2]\""));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=l2 Nodes=n2\nswitchname=l1 Nodes=n3\n"),
             Contains("line 3: switch \"l1\" is already defined on line 1"));
  CHECK_THAT(ErrorOf("BlockName=b1 Nodes=n1\nBlockName=b1 Nodes=n2\n"),
             Contains("line 2: block \"b1\" is already defined on line 1"));
}

TEST_CASE("a node belongs to one leaf and one block") {
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n[1-8]\nSwitchName=l2 Nodes=n[8-16]\n"),
             Contains("line 2: node \"n8\" is already under switch \"l1\" (line 1)"));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n[1-4],n2\n"), Contains("line 1: node \"n2\" is listed twice in Nodes="));
  CHECK_THAT(ErrorOf("BlockName=b1 Nodes=n[1-18]\n# gap\nBlockName=b2 Nodes=n[18-36]\n"),
             Contains("line 3: node \"n18\" is already in block \"b1\" (line 1)"));
}

TEST_CASE("switch links must name defined switches, one parent each") {
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=s1 Switches=l[1-2]\n"),
             Contains("line 2: Switches= names \"l2\", which no SwitchName line defines"));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=s1 Switches=l1\nSwitchName=s2 Switches=l1\n"),
             Contains("line 3: switch \"l1\" is already under switch \"s1\" (line 2)"));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=s1 Switches=l1,l1\n"),
             Contains("line 2: switch \"l1\" is listed twice in Switches="));
}

TEST_CASE("cycles are reported on their first switch's line") {
  CHECK_THAT(ErrorOf("SwitchName=s1 Switches=s1\n"), Contains("line 1: switch \"s1\" lists itself in Switches="));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=a Switches=b,l1\nSwitchName=b Switches=a\n"),
             Contains("line 2: switches form a cycle, each under the next: a -> b -> a"));
  CHECK_THAT(ErrorOf("SwitchName=c Switches=a\n"
                     "SwitchName=top Switches=x\n"
                     "SwitchName=x Nodes=n1\n"
                     "SwitchName=a Switches=b\n"
                     "SwitchName=b Switches=c\n"),
             Contains("line 1: switches form a cycle, each under the next: c -> b -> a -> c"));
}

TEST_CASE("hostlist errors carry the line number") {
  CHECK_THAT(ErrorOf("\n\nSwitchName=l1 Nodes=n[1-\n"),
             Contains("line 3: Nodes=: invalid hostlist \"n[1-\": '[' without a matching ']' at position 2"));
  CHECK_THAT(ErrorOf("SwitchName=l1 Nodes=n1\nSwitchName=s Switches=l[3-1]\n"),
             Contains("line 2: Switches=: invalid hostlist \"l[3-1]\": range \"3-1\" is reversed"));
  CHECK_THAT(ErrorOf("BlockName=b Nodes=n[1-9999999]\n"), Contains("line 1: Nodes=: invalid hostlist"));
}

TEST_CASE("BlockSizes must be positive numbers, given once") {
  CHECK_THAT(ErrorOf("BlockSizes=18,x\n"), Contains("line 1: BlockSizes=: \"x\" is not a positive whole number"));
  CHECK_THAT(ErrorOf("BlockSizes=0\n"), Contains("line 1: BlockSizes=: \"0\""));
  CHECK_THAT(ErrorOf("BlockSizes=18\nBlockSizes=36\n"), Contains("line 2: BlockSizes= is already given on line 1"));
}
