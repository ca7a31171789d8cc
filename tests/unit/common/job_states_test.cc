#include "common/job_states.h"

#include <catch2/catch.hpp>

using namespace gpusched;

TEST_CASE("terminal states are exactly the ones nothing follows") {
  CHECK(IsTerminal(v1::JOB_STATE_COMPLETED));
  CHECK(IsTerminal(v1::JOB_STATE_FAILED));
  CHECK(IsTerminal(v1::JOB_STATE_CANCELLED));
  CHECK(IsTerminal(v1::JOB_STATE_TIMEOUT));
  CHECK(IsTerminal(v1::JOB_STATE_NODE_FAIL));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_PENDING));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_STARTING));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_RUNNING));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_PREEMPTED));
}

TEST_CASE("state names read and print without the enum prefix") {
  CHECK(StateName(v1::JOB_STATE_RUNNING) == "RUNNING");
  v1::JobState s;
  REQUIRE(ParseStateName("running", &s));
  CHECK(s == v1::JOB_STATE_RUNNING);
  REQUIRE(ParseStateName("JOB_STATE_TIMEOUT", &s));
  CHECK(s == v1::JOB_STATE_TIMEOUT);
  CHECK_FALSE(ParseStateName("sleeping", &s));
  CHECK_FALSE(ParseStateName("unspecified", &s));
}
