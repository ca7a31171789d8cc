#include "common/job_array.h"

#include <catch2/catch.hpp>

using gpusched::ParseJobArraySpec;

namespace {

std::vector<int32_t> Indices(const std::string& text) {
  auto spec = ParseJobArraySpec(text, 1000);
  REQUIRE(spec.ok());
  return spec->indices;
}

std::string Error(const std::string& text, size_t max_tasks = 1000) {
  auto spec = ParseJobArraySpec(text, max_tasks);
  REQUIRE_FALSE(spec.ok());
  return std::string(spec.status().message());
}

}  // namespace

TEST_CASE("job arrays take Slurm's --array syntax: ranges, lists, steps and a %N limit") {
  CHECK(Indices("0-3") == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(Indices("7") == std::vector<int32_t>{7});
  CHECK(Indices("5,1,3-4") == std::vector<int32_t>{1, 3, 4, 5});
  CHECK(Indices("0-30:10") == std::vector<int32_t>{0, 10, 20, 30});
  CHECK(Indices("1-8:3") == std::vector<int32_t>{1, 4, 7});
  auto throttled = ParseJobArraySpec("0-99%8", 1000);
  REQUIRE(throttled.ok());
  CHECK(throttled->indices.size() == 100);
  CHECK(throttled->max_running == 8);
  CHECK(ParseJobArraySpec("0-99", 1000)->max_running == 0);
}

TEST_CASE("a bad --array says what is wrong") {
  CHECK(Error("") == "array \"\": no indices (write e.g. 0-99 or 1,3,5)");
  CHECK(Error("%4") == "array \"%4\": no indices (write e.g. 0-99 or 1,3,5)");
  CHECK(Error("1,,2") == "array \"1,,2\": an empty item between commas");
  CHECK(Error("-3") == "array \"-3\": \"\" is not a non-negative number");
  CHECK(Error("a-b") == "array \"a-b\": \"a\" is not a non-negative number");
  CHECK(Error("3-1") == "array \"3-1\": range \"3-1\" ends before it starts");
  CHECK(Error("0-9%x") == "array \"0-9%x\": the limit after % must be a number >= 1, got \"x\"");
  CHECK(Error("0-9:0") == "array \"0-9:0\": the step after : must be a number >= 1, got \"0\"");
  CHECK(Error("4:2") == "array \"4:2\": a step needs a range, as in 4-14:2");
  CHECK(Error("1-3,2") == "array \"1-3,2\": index 2 is given twice");
  CHECK(Error("0-2147483647") == "array \"0-2147483647\": more than 1000 tasks");
  CHECK(Error("0-4,10-14", 8) == "array \"0-4,10-14\": more than 8 tasks");
  CHECK(Error("99999999999") == "array \"99999999999\": \"99999999999\" is not a non-negative number");
}
