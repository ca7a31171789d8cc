#include "common/net/key_value_line.h"

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using gpusched::KeyValue;
using gpusched::SplitKeyValueLine;

TEST_CASE("pairs split on whitespace, comments and blanks give nothing") {
  auto pairs = SplitKeyValueLine("  SwitchName=s1\tNodes=n[1-4]  LinkSpeed=400 # up");
  REQUIRE(pairs.ok());
  REQUIRE(pairs->size() == 3);
  CHECK((*pairs)[0].key == "SwitchName");
  CHECK((*pairs)[0].value == "s1");
  CHECK((*pairs)[0].column == 3);
  CHECK((*pairs)[1].value == "n[1-4]");
  CHECK((*pairs)[2].key == "LinkSpeed");
  CHECK(SplitKeyValueLine("")->empty());
  CHECK(SplitKeyValueLine("   \t\r")->empty());
  CHECK(SplitKeyValueLine("# SwitchName=s1")->empty());
  auto tight = SplitKeyValueLine("Nodes=n1#comment");
  REQUIRE(tight.ok());
  CHECK((*tight)[0].value == "n1");
}

TEST_CASE("quoted values may hold spaces and '#'; empty values are kept") {
  auto pairs = SplitKeyValueLine("Nodes=\"a, b#1\" Switches=");
  REQUIRE(pairs.ok());
  REQUIRE(pairs->size() == 2);
  CHECK((*pairs)[0].value == "a, b#1");
  CHECK((*pairs)[1].value.empty());
}

TEST_CASE("malformed lines name the column") {
  CHECK_THAT(std::string(SplitKeyValueLine("SwitchName=s1 oops").status().message()),
             Contains("column 15: expected Key=Value, found \"oops\""));
  CHECK_THAT(std::string(SplitKeyValueLine("=x").status().message()), Contains("column 1"));
  CHECK_THAT(std::string(SplitKeyValueLine("Nodes=\"n1").status().message()), Contains("never closed"));
  CHECK_THAT(std::string(SplitKeyValueLine("Nodes=\"n1\"x").status().message()), Contains("column 11"));
}
