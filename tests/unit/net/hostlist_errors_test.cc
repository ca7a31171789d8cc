#include <catch2/catch.hpp>
#include <string>

#include "common/net/hostlist.h"

using gpusched::ExpandHostlist;

namespace {

// The error for `expr`, which must be an InvalidArgument.
std::string ErrorOf(const std::string& expr) {
  auto names = ExpandHostlist(expr);
  INFO(expr);
  REQUIRE_FALSE(names.ok());
  CHECK(names.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(names.status().message());
}

}  // namespace

using Catch::Matchers::Contains;

TEST_CASE("unbalanced and nested brackets name their position") {
  CHECK_THAT(ErrorOf("gpu[1-4"), Contains("'[' without a matching ']' at position 4"));
  CHECK_THAT(ErrorOf("gpu1-4]"), Contains("']' without a matching '[' at position 7"));
  CHECK_THAT(ErrorOf("a,gpu[1-[2]]"), Contains("'[' inside another bracket at position 9"));
  CHECK_THAT(ErrorOf("gpu[1-4]]"), Contains("at position 9"));
  CHECK_THAT(ErrorOf("gpu[1-4"), Contains("invalid hostlist \"gpu[1-4\""));
}

TEST_CASE("empty ranges and empty names are errors") {
  CHECK_THAT(ErrorOf("gpu[]"), Contains("empty brackets at position 4"));
  CHECK_THAT(ErrorOf("gpu[1,]"), Contains("empty range at position 7"));
  CHECK_THAT(ErrorOf("gpu[,1]"), Contains("empty range at position 5"));
  CHECK_THAT(ErrorOf("a,,b"), Contains("empty name next to the ',' at position 3"));
  CHECK_THAT(ErrorOf("a,b,"), Contains("empty name next to the ',' at position 4"));
  CHECK_THAT(ErrorOf(",a"), Contains("at position 1"));
}

TEST_CASE("reversed ranges are errors") {
  CHECK_THAT(ErrorOf("n[5-3]"), Contains("range \"5-3\" is reversed at position 3"));
  CHECK_THAT(ErrorOf("n[1,10-9]"), Contains("range \"10-9\" is reversed at position 5"));
}

TEST_CASE("bracket elements must be numbers or ranges of numbers") {
  for (const char* expr :
       {"n[a-3]", "n[1-b]", "n[1-]", "n[-1]", "n[1-2-3]", "n[x]", "n[1 - 3]", "n[+1]", "n[1234567890123456789]"}) {
    INFO(expr);
    CHECK_THAT(ErrorOf(expr), Contains("is not a number or a range of numbers"));
  }
  CHECK_THAT(ErrorOf("n[1,a]"), Contains("\"a\" is not a number or a range of numbers like 1-8 at position 5"));
}

TEST_CASE("whitespace inside a name is an error") {
  CHECK_THAT(ErrorOf("gpu 01"), Contains("whitespace inside a name at position 4"));
  CHECK_THAT(ErrorOf("n[1-2] x"), Contains("at position 7"));
}

TEST_CASE("expansions past the cap fail before allocating") {
  CHECK_THAT(ErrorOf("n[1-1000001]"), Contains("expands past the limit of 1000000 names with the item at position 1"));
  CHECK_THAT(ErrorOf("n[0-999999999999999999]"), Contains("at position 1"));
  CHECK_THAT(ErrorOf("r[1-1000]n[1-1001]"), Contains("past the limit of 1000000"));
  // The limit counts across items; the item that crosses it is named.
  CHECK_THAT(ErrorOf("a[1-999999],b[1-2]"), Contains("at position 13"));
  CHECK_THAT(ErrorOf("a[1-1000000],b"), Contains("at position 14"));
  CHECK(ExpandHostlist("a[1-999999],b").ok());
}

TEST_CASE("long or odd expressions are quoted safely") {
  std::string expr = std::string(200, 'x') + "[";
  std::string message = ErrorOf(expr);
  CHECK_THAT(message, Contains("...\""));
  CHECK(message.size() < 200);
  CHECK_THAT(ErrorOf("n\x01[5-3]"), Contains("\\x01"));
}
