#include "common/net/hostlist.h"

#include <catch2/catch.hpp>

using gpusched::ExpandHostlist;
using Names = std::vector<std::string>;

namespace {

Names Expand(const char* expr) {
  auto names = ExpandHostlist(expr);
  INFO(expr << ": " << names.status().ToString());
  REQUIRE(names.ok());
  return *names;
}

}  // namespace

TEST_CASE("plain names and single ranges expand in order") {
  CHECK(Expand("login") == Names{"login"});
  CHECK(Expand("a,b,c") == Names{"a", "b", "c"});
  CHECK(Expand("n[1-3]") == Names{"n1", "n2", "n3"});
  CHECK(Expand("n[3]") == Names{"n3"});
  CHECK(Expand("n[1-3,7,10-12]") == Names{"n1", "n2", "n3", "n7", "n10", "n11", "n12"});
}

TEST_CASE("zero padding follows the width of the lower bound") {
  auto gpus = Expand("gpu[001-064]");
  REQUIRE(gpus.size() == 64);
  CHECK(gpus.front() == "gpu001");
  CHECK(gpus[9] == "gpu010");
  CHECK(gpus.back() == "gpu064");
  CHECK(Expand("n[8-10]") == Names{"n8", "n9", "n10"});
  CHECK(Expand("n[08-10]") == Names{"n08", "n09", "n10"});
  CHECK(Expand("n[098-101]") == Names{"n098", "n099", "n100", "n101"});
  CHECK(Expand("n[007]") == Names{"n007"});
  CHECK(Expand("n[0-1]") == Names{"n0", "n1"});
}

TEST_CASE("several brackets give the product, leftmost slowest") {
  CHECK(Expand("rack[1-2]-gpu[01-03]") ==
        Names{"rack1-gpu01", "rack1-gpu02", "rack1-gpu03", "rack2-gpu01", "rack2-gpu02", "rack2-gpu03"});
  CHECK(Expand("[1-2]x[5,7]") == Names{"1x5", "1x7", "2x5", "2x7"});
  CHECK(Expand("n[1-2].ib") == Names{"n1.ib", "n2.ib"});
}

TEST_CASE("whitespace around items and bracket elements is ignored") {
  CHECK(Expand("  login , gpu[1-2] ,\tgpu9 ") == Names{"login", "gpu1", "gpu2", "gpu9"});
  CHECK(Expand("n[1, 3 ,5-6]") == Names{"n1", "n3", "n5", "n6"});
}

TEST_CASE("mixed items, duplicates kept, empty expression is empty") {
  CHECK(Expand("login,gpu[1-2],login") == Names{"login", "gpu1", "gpu2", "login"});
  CHECK(Expand("").empty());
  CHECK(Expand("   ").empty());
}

TEST_CASE("the cap allows exactly kMaxHostlistNames") {
  auto names = ExpandHostlist("n[1-1000000]");
  REQUIRE(names.ok());
  CHECK(names->size() == gpusched::kMaxHostlistNames);
  CHECK(names->back() == "n1000000");
  auto product = ExpandHostlist("r[1-1000]n[1-1000]");
  REQUIRE(product.ok());
  CHECK(product->size() == 1000000);
}
