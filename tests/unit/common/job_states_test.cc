#include "common/job_states.h"

#include <catch2/catch.hpp>
#include <string>

using namespace gpusched;

TEST_CASE("terminal states are exactly the ones a job ends in") {
  CHECK(IsTerminal(v1::JOB_STATE_COMPLETED));
  CHECK(IsTerminal(v1::JOB_STATE_FAILED));
  CHECK(IsTerminal(v1::JOB_STATE_CANCELLED));
  CHECK(IsTerminal(v1::JOB_STATE_TIMEOUT));
  CHECK(IsTerminal(v1::JOB_STATE_NODE_FAIL));
  // A preempted or node-failed job that is requeued is PENDING again; the
  // state shows only in its events then.
  CHECK(IsTerminal(v1::JOB_STATE_PREEMPTED));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_PENDING));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_STARTING));
  CHECK_FALSE(IsTerminal(v1::JOB_STATE_RUNNING));
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

TEST_CASE("every job state has the proto's name, and reads back from it") {
  // StateName keeps its own table (the generated names cost the daemon the
  // descriptor pool); the proto stays the reference for it.
  for (int i = v1::JobState_MIN + 1; i <= v1::JobState_MAX; ++i) {
    auto state = static_cast<v1::JobState>(i);
    INFO("state " << i);
    CHECK("JOB_STATE_" + std::string(StateName(state)) == v1::JobState_Name(state));
    v1::JobState parsed = v1::JOB_STATE_UNSPECIFIED;
    REQUIRE(ParseStateName(StateName(state), &parsed));
    CHECK(parsed == state);
  }
  CHECK(StateName(static_cast<v1::JobState>(v1::JobState_MAX + 1)) == "UNKNOWN");
}

TEST_CASE("dependency kinds read and print as Slurm's --dependency words") {
  for (auto kind : {v1::DEPENDENCY_KIND_AFTER, v1::DEPENDENCY_KIND_AFTER_OK, v1::DEPENDENCY_KIND_AFTER_NOT_OK,
                    v1::DEPENDENCY_KIND_AFTER_ANY}) {
    v1::DependencyKind parsed = v1::DEPENDENCY_KIND_UNSPECIFIED;
    REQUIRE(ParseDependencyKind(DependencyKindName(kind), &parsed));
    CHECK(parsed == kind);
  }
  CHECK(DependencyKindName(v1::DEPENDENCY_KIND_AFTER_NOT_OK) == "afternotok");
  v1::DependencyKind parsed;
  CHECK_FALSE(ParseDependencyKind("afterwards", &parsed));
  CHECK_FALSE(ParseDependencyKind("AFTEROK", &parsed));
  CHECK(DependencyKindName(v1::DEPENDENCY_KIND_UNSPECIFIED) == "?");
}
