#include "common/time_limit.h"

#include <catch2/catch.hpp>

using gpusched::FormatTimeLimit;
using gpusched::ParseTimeLimit;

TEST_CASE("time limits parse in Slurm's notation") {
  struct Case {
    const char* text;
    int64_t seconds;
  };
  auto c = GENERATE(values<Case>({
      {"90", 90 * 60},
      {"0", 0},
      {"unlimited", 0},
      {"5:30", 5 * 60 + 30},
      {"1:30:00", 5400},
      {"2-00:00:00", 2 * 86400},
      {"1-12", 36 * 3600},
      {"1-02:03", 26 * 3600 + 180},
      {" 10 ", 600},
  }));
  INFO(c.text);
  auto parsed = ParseTimeLimit(c.text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == c.seconds);
}

TEST_CASE("malformed time limits are rejected with the input quoted") {
  auto text = GENERATE("", "abc", "-5", "1:2:3:4", "1:99", "1:00:60", "1-", "x-10", "1-25:00", "99999999999",
                       "400-00:00:00", "1.5");
  auto parsed = ParseTimeLimit(text);
  INFO(text);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(parsed.status().message().find("invalid time limit") != std::string::npos);
}

TEST_CASE("time limits format back the way Slurm shows them") {
  CHECK(FormatTimeLimit(0) == "none");
  CHECK(FormatTimeLimit(5400) == "01:30:00");
  CHECK(FormatTimeLimit(2 * 86400 + 61) == "2-00:01:01");
}
