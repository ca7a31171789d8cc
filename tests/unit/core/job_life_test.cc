// Dependencies and hold/release, as short stories on a manual clock.
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

v1::JobSpec After(v1::DependencyKind kind, uint64_t job, v1::JobSpec spec = GpuJob(1)) {
  v1::Dependency* d = spec.add_dependencies();
  d->set_kind(kind);
  d->set_job_id(job);
  return spec;
}

void RunToEnd(CoreHarness& h, uint64_t id, int exit_code) {
  REQUIRE(h.StateOf(id) == v1::JOB_STATE_STARTING);
  const std::string node = h.Persisted(id).allocation().nodes(0).node();
  h.Report(node, id, JobUpdate::KIND_STARTED);
  h.Report(node, id, JobUpdate::KIND_EXITED, exit_code);
}

}  // namespace

TEST_CASE("a dependency chain: each job starts when the one before completes; a failure cancels the rest") {
  CoreHarness h;
  h.AddNode("a", 4);
  uint64_t prep = h.Submit(GpuJob(1));
  uint64_t train = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, prep));
  uint64_t eval = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, train));
  uint64_t report = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_ANY, train));
  uint64_t cleanup = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_NOT_OK, train));
  h.Pass();
  CHECK(h.StateOf(train) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(train).reason() ==
        "waiting for job " + std::to_string(prep) + " to complete (afterok:" + std::to_string(prep) + ")");

  RunToEnd(h, prep, 0);
  h.Pass();
  RunToEnd(h, train, 1);  // the training fails
  h.Pass();
  h.Pass();  // a cancelled dependant may make its own dependants unsatisfiable one pass later
  CHECK(h.StateOf(eval) == v1::JOB_STATE_CANCELLED);
  CHECK(h.Persisted(eval).reason() == "dependency never satisfied: job " + std::to_string(train) +
                                          " ended FAILED (afterok:" + std::to_string(train) + ")");
  CHECK(h.StateOf(report) == v1::JOB_STATE_STARTING);   // afterany: runs whatever happened
  CHECK(h.StateOf(cleanup) == v1::JOB_STATE_STARTING);  // afternotok: runs because it failed
}

TEST_CASE("a dependency on a job that does not exist, or on itself, is refused at submit") {
  CoreHarness h;
  h.AddNode("a", 4);
  auto unknown = h.core.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, 99), "", h.fx);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() == "spec.dependencies[0]: there is no job 99");
  auto self = h.core.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, 1), "", h.fx);
  REQUIRE_FALSE(self.ok());
  CHECK(self.status().message() == "spec.dependencies[0]: a job cannot wait for itself");
  auto kind = h.core.Submit(After(static_cast<v1::DependencyKind>(42), 1), "", h.fx);
  REQUIRE_FALSE(kind.ok());
  CHECK(kind.status().message() == "spec.dependencies[0].kind: unknown value 42");
}

TEST_CASE("dependencies on jobs that ended before a daemon restart are judged by how they ended") {
  CoreHarness h;
  h.core.Restore({}, {}, 10, {}, {{7, v1::JOB_STATE_COMPLETED}, {8, v1::JOB_STATE_TIMEOUT}});
  h.AddNode("a", 4);
  uint64_t ok = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, 7));
  uint64_t never = h.Submit(After(v1::DEPENDENCY_KIND_AFTER_OK, 8));
  h.Pass();
  CHECK(h.StateOf(ok) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(never) == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("a held job waits, without holding back the jobs behind it, until released") {
  CoreHarness h;
  h.AddNode("a", 4);
  v1::JobSpec held_spec = GpuJob(4);
  held_spec.set_hold(true);
  held_spec.set_priority(100);
  uint64_t held = h.Submit(held_spec);
  uint64_t other = h.Submit(GpuJob(2));
  h.Pass();
  CHECK(h.StateOf(held) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(held).held());
  CHECK(h.StateOf(other) == v1::JOB_STATE_STARTING);
  // Not ranked while held (as Slurm gives it priority 0): no score to show.
  CHECK_FALSE(h.core.PriorityOf(held).has_value());

  uint64_t later = h.Submit(GpuJob(1));
  REQUIRE(h.core.Hold(later, h.fx).ok());
  h.Pass();
  CHECK(h.StateOf(later) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(later).reason() == "held: waits until released (gpusched release)");
  // Only pending jobs can be held.
  auto running = h.core.Hold(other, h.fx);
  REQUIRE_FALSE(running.ok());
  CHECK(running.status().code() == absl::StatusCode::kFailedPrecondition);

  REQUIRE(h.core.Release(later, h.fx).ok());
  h.Pass();
  CHECK(h.StateOf(later) == v1::JOB_STATE_STARTING);
  CHECK_FALSE(h.Persisted(later).held());
  CHECK(h.core.Hold(12345, h.fx).status().code() == absl::StatusCode::kNotFound);
}
