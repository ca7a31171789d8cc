// Typed reads with errors that name the line, the key and what was expected.
#include "common/config/toml_table_reader.h"

#include <catch2/catch.hpp>
#include <string>

using namespace gpusched::config;

namespace {

TomlValue Parse(const std::string& text) {
  auto doc = ParseToml(text, "/etc/gpusched/x.toml");
  REQUIRE(doc.ok());
  return *std::move(doc);
}

std::string Message(const TomlTableReader& reader) {
  REQUIRE_FALSE(reader.ok());
  return std::string(reader.status().message());
}

}  // namespace

TEST_CASE("reader: values of the right type and range come back; absent keys are nullopt") {
  TomlValue doc = Parse("name = \"n\"\ncount = 7\non = false\nmode = \"b\"\n");
  TomlTableReader r(doc, "/etc/gpusched/x.toml", "");
  r.AllowOnly({"name", "count", "on", "mode", "unused"});
  CHECK(r.String("name") == "n");
  CHECK(r.Int("count", 0, 10) == 7);
  CHECK(r.Bool("on") == false);
  CHECK(r.OneOf("mode", {"a", "b"}) == "b");
  CHECK_FALSE(r.String("unused").has_value());
  CHECK(r.ok());
  CHECK(r.status().ok());
}

TEST_CASE("reader: unknown keys, wrong types and bad values name their line") {
  TomlValue doc = Parse("# settings\ncount = \"7\"\n");
  {
    TomlTableReader r(doc, "/etc/gpusched/x.toml", "");
    r.Int("count", 0, 10);
    CHECK(Message(r) == "/etc/gpusched/x.toml:2: count must be an integer, got a string");
  }
  doc = Parse("ok = 1\ncolour = 1\n");
  {
    TomlTableReader r(doc, "/etc/gpusched/x.toml", "[paint]");
    r.AllowOnly({"ok", "size"});
    CHECK(Message(r) == "/etc/gpusched/x.toml:2: unknown key colour in [paint] (expected ok, size)");
  }
  doc = Parse("\n\ncount = 11\nmode = \"c\"\n");
  {
    TomlTableReader r(doc, "/etc/gpusched/x.toml", "");
    CHECK_FALSE(r.Int("count", 0, 10).has_value());
    CHECK_FALSE(r.OneOf("mode", {"a", "b"}).has_value());
    // Reading goes on after a problem; the first one found is reported.
    CHECK(Message(r) == "/etc/gpusched/x.toml:3: count must be between 0 and 10, got 11");
  }
  {
    TomlTableReader r(doc, "", "");
    r.OneOf("mode", {"a", "b"});
    CHECK(Message(r) == "line 4: mode \"c\" is not one of a, b");
  }
}

TEST_CASE("reader: required keys are reported at the table's header") {
  TomlValue doc = Parse("x = 1\n\n[[part]]\nname = \"\"\n");
  const TomlValue& part = doc.Find("part")->items[0];
  TomlTableReader r(part, "spec.toml", "[[part]]");
  CHECK(r.RequiredString("name").empty());
  CHECK(r.ok());
  CHECK(r.RequiredInt("size", 1, 2) == 0);
  CHECK(Message(r) == "spec.toml:3: [[part]] needs size = <integer>");
}

TEST_CASE("reader: paths are taken from the config file's directory") {
  TomlValue doc = Parse("rel = \"topo.conf\"\nabs = \"/srv/topo.conf\"\nup = \"../x\"\nempty = \"\"\n");
  TomlTableReader r(doc, "/etc/gpusched/x.toml", "");
  CHECK(r.Path("rel") == "/etc/gpusched/topo.conf");
  CHECK(r.Path("abs") == "/srv/topo.conf");
  CHECK(r.Path("up") == "/etc/x");
  CHECK_FALSE(r.Path("empty").has_value());
  CHECK(Message(r) == "/etc/gpusched/x.toml:4: empty is empty");
}

TEST_CASE("reader: a table of strings, inline or as a section") {
  for (const std::string text :
       {"labels = { rack = \"r1\", leaf = \"l2\" }\n", "[labels]\nrack = \"r1\"\nleaf = \"l2\"\n"}) {
    INFO(text);
    TomlValue doc = Parse(text);
    TomlTableReader r(doc, "a.toml", "");
    auto labels = r.StringTable("labels");
    REQUIRE(labels.has_value());
    CHECK(*labels == std::vector<std::pair<std::string, std::string>>{{"rack", "r1"}, {"leaf", "l2"}});
  }
  TomlValue doc = Parse("[labels]\nrack = \"r1\"\nslots = 4\n");
  TomlTableReader r(doc, "a.toml", "");
  CHECK_FALSE(r.StringTable("labels").has_value());
  CHECK(Message(r) == "a.toml:3: labels.slots must be a string, got an integer");
}
