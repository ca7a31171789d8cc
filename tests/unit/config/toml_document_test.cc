// The TOML reader: values and their lines, file order, syntax errors by line.
#include "common/config/toml_document.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/io/config_file/settings_file.h"

using namespace gpusched::config;
using Catch::Matchers::StartsWith;

namespace {

TomlValue Parse(const std::string& text) {
  auto doc = ParseToml(text, "test.toml");
  INFO(text);
  INFO(doc.status().ToString());
  REQUIRE(doc.ok());
  return *std::move(doc);
}

std::string ErrorOf(const std::string& text, const std::string& source = "test.toml") {
  auto doc = ParseToml(text, source);
  INFO(text);
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(doc.status().message());
}

}  // namespace

TEST_CASE("toml: every value type, with the line it is on") {
  TomlValue doc = Parse(
      "s = \"text\"\n"
      "i = -42\n"
      "f = 2.5\n"
      "b = true\n"
      "d = 2024-05-01\n"
      "a = [1, \"two\"]\n"
      "\n"
      "[t]\n"
      "k = 'literal'\n");
  REQUIRE(doc.type == TomlType::kTable);
  REQUIRE(doc.members.size() == 7);
  CHECK(doc.Find("s")->type == TomlType::kString);
  CHECK(doc.Find("s")->text == "text");
  CHECK(doc.Find("s")->line == 1);
  CHECK(doc.Find("i")->integer == -42);
  CHECK(doc.Find("i")->line == 2);
  CHECK(doc.Find("f")->number == 2.5);
  CHECK(doc.Find("b")->boolean);
  CHECK(doc.Find("d")->type == TomlType::kDate);
  CHECK(doc.Find("d")->text == "2024-05-01");
  const TomlValue* a = doc.Find("a");
  REQUIRE(a->type == TomlType::kArray);
  REQUIRE(a->items.size() == 2);
  CHECK(a->items[1].text == "two");
  CHECK_FALSE(a->is_array_of_tables());
  const TomlValue* t = doc.Find("t");
  REQUIRE(t->type == TomlType::kTable);
  CHECK(t->line == 8);
  CHECK(t->Find("k")->text == "literal");
  CHECK(t->Find("k")->line == 9);
  CHECK(doc.Find("missing") == nullptr);
}

TEST_CASE("toml: keys come back in file order, not sorted") {
  TomlValue doc = Parse("zeta = 1\nalpha = 2\nmid = 3\n");
  REQUIRE(doc.members.size() == 3);
  CHECK(doc.members[0].key == "zeta");
  CHECK(doc.members[0].line == 1);
  CHECK(doc.members[1].key == "alpha");
  CHECK(doc.members[2].key == "mid");
  CHECK(doc.members[2].line == 3);
}

TEST_CASE("toml: [[arrays]] of tables keep each element's header line") {
  TomlValue doc = Parse("[[node]]\nname = \"a\"\n\n[[node]]\nname = \"b\"\n");
  const TomlValue* nodes = doc.Find("node");
  REQUIRE(nodes != nullptr);
  REQUIRE(nodes->is_array_of_tables());
  REQUIRE(nodes->items.size() == 2);
  CHECK(nodes->items[0].line == 1);
  CHECK(nodes->items[1].line == 4);
  CHECK(nodes->items[1].Find("name")->text == "b");
}

TEST_CASE("toml: syntax errors name the source and the line") {
  CHECK_THAT(ErrorOf("a = 1\nb =\n"), StartsWith("test.toml:2: "));
  CHECK_THAT(ErrorOf("a = 1\na = 2\n"), StartsWith("test.toml:2: ") && Catch::Contains("'a'"));
  CHECK_THAT(ErrorOf("\n\nx = \"open\n"), StartsWith("test.toml:3: "));
  CHECK_THAT(ErrorOf("n = 99999999999999999999\n"), StartsWith("test.toml:1: "));
  CHECK_THAT(ErrorOf("[[t]]\n[t]\n"), StartsWith("test.toml:2: "));
  // Without a source name the caller puts the name in front: "line N: ...".
  CHECK_THAT(ErrorOf("a = 1\nb = = 2\n", ""), StartsWith("line 2: "));
}

TEST_CASE("toml: files are read, and a missing one is NotFound naming the path") {
  const std::string dir = std::filesystem::temp_directory_path() / ("gpusched-toml-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/x.toml";
  std::ofstream(path) << "k = 1\n# fine\nv = [\n";
  auto bad = ReadTomlFile(path);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), StartsWith(path + ":"));
  std::ofstream(path) << "k = 1\n";
  auto good = ReadTomlFile(path);
  REQUIRE(good.ok());
  CHECK(good->Find("k")->integer == 1);
  auto missing = ReadTomlFile(dir + "/none.toml");
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains(dir + "/none.toml"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("toml: a path to something endless is refused, not read into memory") {
  // An operator's slip: `--config /dev/zero`, or a key naming a log file.
  auto endless = gpusched::config::ReadConfigText("/dev/zero");
  REQUIRE_FALSE(endless.ok());
  CHECK(std::string(endless.status().message()) == "/dev/zero is larger than 16 MiB: not a settings file");
}
