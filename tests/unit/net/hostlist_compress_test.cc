#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/net/hostlist.h"

using gpusched::CompressHostlist;
using gpusched::ExpandHostlist;
using Names = std::vector<std::string>;

TEST_CASE("consecutive numbers collapse into ranges, padding kept") {
  CHECK(CompressHostlist({"gpu001", "gpu002", "gpu003", "gpu007"}) == "gpu[001-003,007]");
  CHECK(CompressHostlist({"n8", "n9", "n10", "n12"}) == "n[8-10,12]");
  CHECK(CompressHostlist({"n098", "n099", "n100"}) == "n[098-100]");
  CHECK(CompressHostlist({"n1"}) == "n1");
  CHECK(CompressHostlist({"n007"}) == "n007");
  CHECK(CompressHostlist({}) == "");
}

TEST_CASE("names are grouped by the text around their last number") {
  CHECK(CompressHostlist({"gpu2", "login", "cpu1", "gpu1", "cpu2"}) == "gpu[1-2],login,cpu[1-2]");
  CHECK(CompressHostlist({"rack1-gpu01", "rack1-gpu02", "rack2-gpu01"}) == "rack1-gpu[01-02],rack2-gpu01");
  CHECK(CompressHostlist({"n1.ib", "n2.ib", "n1"}) == "n[1-2].ib,n1");
  // Differently padded numbers stay apart: "n08" and "n8" are other hosts.
  CHECK(CompressHostlist({"n8", "n08", "n9", "n09"}) == "n[8-9],n[08-09]");
}

TEST_CASE("compression sorts within a group and drops duplicates") {
  CHECK(CompressHostlist({"n3", "n1", "n2", "n1"}) == "n[1-3]");
  CHECK(CompressHostlist({"login", "login"}) == "login");
}

TEST_CASE("compress is deterministic whatever the order within a group") {
  CHECK(CompressHostlist({"n5", "n3", "n4", "x"}) == CompressHostlist({"n3", "n4", "n5", "x"}));
}

TEST_CASE("expand and compress round-trip") {
  for (const char* expr : {"gpu[001-064]", "n[1-3,7,10-12]", "gpu[001-003,007],login", "n[8-10]", "n[098-101]", "login",
                           "rack1-gpu[01-04],rack2-gpu[01-04]", "n[0-1]", "gb[001-018],gb[019-036].ib", "a,b,c"}) {
    INFO(expr);
    auto names = ExpandHostlist(expr);
    REQUIRE(names.ok());
    CHECK(CompressHostlist(*names) == expr);
    auto again = ExpandHostlist(CompressHostlist(*names));
    REQUIRE(again.ok());
    CHECK(*again == *names);
  }
}

TEST_CASE("any list of host names survives compress then expand") {
  // Shuffled, duplicated, multi-number and oddly padded names: the expansion
  // gives back the same set, grouped and sorted.
  Names names = {"gpu010",   "gpu9", "login2", "gpu011", "gpu009", "rack2-n1",
                 "rack1-n3", "gpu9", "gpu100", "head",   "gpu0",   "n99999999999999999999"};
  auto back = ExpandHostlist(CompressHostlist(names));
  REQUIRE(back.ok());
  Names sorted_in = names;
  std::sort(sorted_in.begin(), sorted_in.end());
  sorted_in.erase(std::unique(sorted_in.begin(), sorted_in.end()), sorted_in.end());
  Names sorted_out = *back;
  std::sort(sorted_out.begin(), sorted_out.end());
  CHECK(sorted_out == sorted_in);
  CHECK(back->size() == sorted_in.size());  // no duplicates either
}
