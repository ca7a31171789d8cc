#include <string>

#include <catch2/catch.hpp>

#include "daemon/sim/toml_subset.h"

using gpusched::sim::ParseTomlSubset;
using gpusched::sim::TomlArray;
using Catch::Matchers::StartsWith;

namespace {

std::string ErrorOf(const std::string& text) {
  auto doc = ParseTomlSubset(text);
  INFO(text);
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(doc.status().message());
}

}  // namespace

TEST_CASE("toml subset: values, tables and arrays of tables") {
  auto doc = ParseTomlSubset(
      "# a comment\n"
      "name = \"x # not a comment\"  # a comment\n"
      "lit = 'C:\\path'\n"
      "n = -1_000\n"
      "f = 0.25\n"
      "e = 1e3\n"
      "yes = true\n"
      "list = [1, \"two\", 3.5, false]\n"
      "\n"
      "[[node_type]]\n"
      "name = \"a\"\n"
      "[[node_type]]\n"
      "name = \"b\\t\\\"q\\\"\"\n"
      "[plain]\n"
      "k = 1\r\n");
  REQUIRE(doc.ok());
  const auto& root = doc->root;
  CHECK(std::get<std::string>(root.Find("name")->value) == "x # not a comment");
  CHECK(std::get<std::string>(root.Find("lit")->value) == "C:\\path");
  CHECK(std::get<int64_t>(root.Find("n")->value) == -1000);
  CHECK(std::get<double>(root.Find("f")->value) == 0.25);
  CHECK(std::get<double>(root.Find("e")->value) == 1000.0);
  CHECK(std::get<bool>(root.Find("yes")->value));
  const auto& list = std::get<TomlArray>(root.Find("list")->value);
  REQUIRE(list.size() == 4);
  CHECK(std::get<std::string>(list[1].value) == "two");
  CHECK(root.Find("n")->line == 4);
  REQUIRE(doc->tables.size() == 3);
  CHECK(doc->tables[0].name == "node_type");
  CHECK(doc->tables[0].array_element);
  CHECK(doc->tables[0].line == 10);
  CHECK(std::get<std::string>(doc->tables[1].Find("name")->value) == "b\t\"q\"");
  CHECK_FALSE(doc->tables[2].array_element);
  CHECK(std::get<int64_t>(doc->tables[2].Find("k")->value) == 1);
}

TEST_CASE("toml subset: errors name the line") {
  CHECK_THAT(ErrorOf("a = 1\nb = \"open\n"), StartsWith("line 2: unterminated string"));
  CHECK_THAT(ErrorOf("a = 1\na = 2\n"), StartsWith("line 2: key a is given twice (first on line 1)"));
  CHECK_THAT(ErrorOf("\n\nx = {a = 1}\n"), StartsWith("line 3: inline tables are not supported"));
  CHECK_THAT(ErrorOf("a.b = 1\n"), StartsWith("line 1: dotted keys are not supported"));
  CHECK_THAT(ErrorOf("\"a\" = 1\n"), StartsWith("line 1: quoted keys are not supported"));
  CHECK_THAT(ErrorOf("a = hello\n"), StartsWith("line 1: expected a string, number, boolean or array, got \"hello\""));
  CHECK_THAT(ErrorOf("a = 0x10\n"), StartsWith("line 1: only decimal numbers are supported"));
  CHECK_THAT(ErrorOf("a = 1979-05-27T07:32:00\n"), StartsWith("line 1: dates and times are not supported"));
  CHECK_THAT(ErrorOf("a = 1__0\n"), StartsWith("line 1: misplaced '_'"));
  CHECK_THAT(ErrorOf("a = [1, 2\n"), StartsWith("line 1: unterminated array"));
  CHECK_THAT(ErrorOf("a = \"\"\"x\n"), StartsWith("line 1: multi-line strings are not supported"));
  CHECK_THAT(ErrorOf("a = \"\\x\"\n"), StartsWith("line 1: escape \\x is not supported"));
  CHECK_THAT(ErrorOf("a = 1 2\n"), StartsWith("line 1: unexpected \"2\" after the value of a"));
  CHECK_THAT(ErrorOf("a 1\n"), StartsWith("line 1: expected '=' after key a"));
  CHECK_THAT(ErrorOf("[t]\n[t]\n"), StartsWith("line 2: table [t] is defined twice"));
  CHECK_THAT(ErrorOf("[[t]]\n[t]\n"), StartsWith("line 2: t is used both as [t] and [[t]]"));
  CHECK_THAT(ErrorOf("[[t]\n"), StartsWith("line 1: expected ']]' after table name t"));
  CHECK_THAT(ErrorOf("a =\n"), StartsWith("line 1: expected a value"));
}
