#include "common/topology/cpu_list.h"

#include <catch2/catch.hpp>

using namespace gpusched::topology;

TEST_CASE("CPU lists parse into sorted ids and format back") {
  auto cpus = ParseCpuList("0-23,48-71");
  REQUIRE(cpus.ok());
  CHECK(cpus->size() == 48);
  CHECK(cpus->front() == 0);
  CHECK(cpus->back() == 71);
  CHECK(FormatCpuList(*cpus) == "0-23,48-71");

  auto one = ParseCpuList("7");
  REQUIRE(one.ok());
  CHECK(*one == std::vector<int>{7});
  CHECK(FormatCpuList({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(ParseCpuList("")->empty());
  CHECK(*ParseCpuList("5,1-2,2") == std::vector<int>{1, 2, 5});
}

TEST_CASE("bad CPU lists are InvalidArgument") {
  for (const char* s : {"a", "1-", "-1", "3-1", "1,,2", "0-4000000000", "1-2-3", "N/A", "0 - 3"}) {
    INFO(s);
    auto r = ParseCpuList(s);
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  }
}
