// Job arrays, as short stories on a manual clock.
#include <catch2/catch.hpp>
#include <set>

#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

uint64_t SubmitArray(CoreHarness& h, const std::string& array, v1::JobSpec spec = GpuJob(1)) {
  auto outcome = h.core.SubmitArray(std::move(spec), array, "", h.fx);
  REQUIRE(outcome.ok());
  return outcome->job_id;
}

v1::JobSpec HeldGpuJob() {
  v1::JobSpec spec = GpuJob(1);
  spec.set_hold(true);
  return spec;
}

std::vector<uint64_t> InState(const CoreHarness& h, uint64_t first, int count, v1::JobState state) {
  std::vector<uint64_t> out;
  for (uint64_t id = first; id < first + count; ++id) {
    if (h.StateOf(id) == state) out.push_back(id);
  }
  return out;
}

// Starts and ends a placed task, as its agent would report it.
void RunToEnd(CoreHarness& h, uint64_t id) {
  const std::string node = h.Persisted(id).allocation().nodes(0).node();
  h.Report(node, id, JobUpdate::KIND_STARTED);
  h.Report(node, id, JobUpdate::KIND_EXITED, 0);
}

// The array index each LaunchJob sent since the last Drain carried.
std::multiset<int> LaunchedIndices(const CoreHarness& h) {
  std::multiset<int> out;
  for (const auto& c : h.fx.agent_commands) {
    if (c.message.has_launch() && c.message.launch().has_array()) out.insert(c.message.launch().array().index());
  }
  return out;
}

}  // namespace

TEST_CASE("an array of 20 tasks throttled to 8 runs at most 8 at once, in index order, until all are done") {
  CoreHarness h;
  for (const char* node : {"a", "b", "c", "d"}) h.AddNode(node, 4);
  const uint64_t array = SubmitArray(h, "0-19%8");
  const uint64_t other = h.Submit(GpuJob(1));
  h.Pass();
  std::vector<uint64_t> started = InState(h, array, 20, v1::JOB_STATE_STARTING);
  CHECK(started ==
        std::vector<uint64_t>{array, array + 1, array + 2, array + 3, array + 4, array + 5, array + 6, array + 7});
  CHECK(LaunchedIndices(h) == std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7});
  const v1::Job waiting = h.Shown(array + 8);
  CHECK(waiting.reason() == "waiting for array " + std::to_string(array) + "'s limit: at most 8 of its tasks at once");
  CHECK(waiting.array().index() == 8);
  CHECK(waiting.array().count() == 20);
  // The throttle holds back the array only: 8 GPUs are still free for others.
  CHECK(h.StateOf(other) == v1::JOB_STATE_STARTING);

  size_t most_placed = 0;
  for (int round = 0; round < 20 && !InState(h, array, 20, v1::JOB_STATE_STARTING).empty(); ++round) {
    h.Drain();
    std::vector<uint64_t> placed = InState(h, array, 20, v1::JOB_STATE_STARTING);
    most_placed = std::max(most_placed, placed.size());
    // Three end per round, so that the pass refills exactly those slots.
    for (size_t i = 0; i < std::min<size_t>(3, placed.size()); ++i) RunToEnd(h, placed[i]);
    h.Pass();
  }
  CHECK(most_placed == 8);
  CHECK(InState(h, array, 20, v1::JOB_STATE_COMPLETED).size() == 20);
}

TEST_CASE("a bad array is refused whole, with what is wrong, and submits no task") {
  CoreHarness h;
  h.AddNode("a", 4);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"0-5x", "array \"0-5x\": \"5x\" is not a non-negative number"},
           {"5-1", "array \"5-1\": range \"5-1\" ends before it starts"},
           {"0-9%0", "array \"0-9%0\": the limit after % must be a number >= 1, got \"0\""},
           {"0-20000", "array \"0-20000\": more than 10000 tasks"},
       }) {
    auto outcome = h.core.SubmitArray(GpuJob(1), text, "", h.fx);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(outcome.status().message() == message);
  }
  // A spec the cluster can never run is refused before any task exists.
  CHECK_FALSE(h.core.SubmitArray(GpuJob(8), "0-3", "", h.fx).ok());
  CHECK(h.fx.jobs.empty());
  CHECK(h.Submit(GpuJob(1)) == 1);
}

TEST_CASE("a retried array submit with the same request id returns the array, not a second one") {
  CoreHarness h;
  h.AddNode("a", 4);
  auto first = h.core.SubmitArray(GpuJob(1), "1,3,5", "req-1", h.fx);
  auto again = h.core.SubmitArray(GpuJob(1), "1,3,5", "req-1", h.fx);
  REQUIRE(first.ok());
  REQUIRE(again.ok());
  CHECK(again->duplicate);
  CHECK(again->job_id == first->job_id);
  // One job, the first task, and the array's record for the others.
  CHECK(h.fx.jobs.size() == 1);
  CHECK(h.fx.arrays.at(first->job_id).materialized == 1);
  // Only the first task carries the id: the store keeps request ids unique.
  CHECK(h.Persisted(first->job_id).client_request_id() == "req-1");
  CHECK(h.Shown(first->job_id + 1).client_request_id().empty());
  h.Pass();
  CHECK(h.Persisted(first->job_id + 1).client_request_id().empty());
  CHECK(h.Persisted(first->job_id + 2).array().index() == 5);
}

TEST_CASE("cancelling an array by its id ends every unfinished task and nothing else") {
  CoreHarness h;
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-5%2");
  const uint64_t other = h.Submit(GpuJob(1));
  h.Pass();
  RunToEnd(h, array);  // task 0 completes first
  h.Pass();
  REQUIRE(h.core.CancelArray(array, "sweep abandoned", h.fx).ok());
  CHECK(h.StateOf(array) == v1::JOB_STATE_COMPLETED);
  CHECK(h.Persisted(array + 1).stopping_as() == v1::JOB_STATE_CANCELLED);  // running: being stopped
  for (uint64_t id = array + 3; id < array + 6; ++id) CHECK(h.StateOf(id) == v1::JOB_STATE_CANCELLED);
  CHECK(h.StateOf(other) == v1::JOB_STATE_STARTING);
  // Not an array, or nothing left of it.
  CHECK(h.core.CancelArray(other, "", h.fx).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("after a daemon restart an array's running tasks still count against its limit") {
  CoreHarness before;
  before.AddNode("a", 4);
  const uint64_t array = SubmitArray(before, "0-3%2");
  before.Pass();
  // Two tasks are jobs (placed), two are still the array's record.
  std::vector<v1::Job> unfinished;
  for (uint64_t id = array; id < array + 2; ++id) {
    unfinished.push_back(before.Persisted(id));
    unfinished.back().set_reason("");  // so that the pass after the restart must give its own
  }
  REQUIRE(before.fx.arrays.at(array).materialized == 2);

  CoreHarness after;
  after.core.Restore(unfinished, before.core.Nodes(), array + 1, {});
  REQUIRE(after.core.RestoreArrays({before.fx.arrays.at(array)}).ok());
  after.AddNode("a", 4);
  after.Pass();
  CHECK(after.StateOf(array + 2) == v1::JOB_STATE_PENDING);
  CHECK(after.StateOf(array + 3) == v1::JOB_STATE_PENDING);
  CHECK(after.Persisted(array + 2).reason() ==
        "waiting for array " + std::to_string(array) + "'s limit: at most 2 of its tasks at once");
}

TEST_CASE("a large throttled array does not hide the jobs behind it from a pass of limited depth") {
  const bool multifactor = GENERATE(false, true);
  INFO((multifactor ? "multifactor ranking" : "queue order"));
  core::CoreOptions options = CoreHarness::Options();
  options.queue_depth = 10;
  if (!multifactor) options.queues.weights = {0, 0, 0, 0};
  CoreHarness h(options);
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-99%2");
  const uint64_t later = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(InState(h, array, 100, v1::JOB_STATE_STARTING).size() == 2);
  CHECK(h.StateOf(later) == v1::JOB_STATE_STARTING);
  // Every throttled task says why, not just the ones within the depth.
  CHECK(h.Shown(array + 99).reason() ==
        "waiting for array " + std::to_string(array) + "'s limit: at most 2 of its tasks at once");
}

TEST_CASE("holding and releasing an array by its id acts on every pending task") {
  CoreHarness h;
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-3");
  REQUIRE(h.core.HoldArray(array, h.fx).ok());
  h.Pass();
  CHECK(InState(h, array, 4, v1::JOB_STATE_PENDING).size() == 4);
  for (uint64_t id = array; id < array + 4; ++id) CHECK(h.Shown(id).held());
  REQUIRE(h.core.ReleaseArray(array, h.fx).ok());
  h.Pass();
  CHECK(InState(h, array, 4, v1::JOB_STATE_STARTING).size() == 4);
  // Nothing pending is left to hold: the first task's own answer.
  auto again = h.core.HoldArray(array, h.fx);
  CHECK(again.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("an array whose tasks would store too much is refused, naming the sizes") {
  core::CoreOptions options = CoreHarness::Options();
  options.limits.max_array_bytes = 1 << 20;
  CoreHarness h(options);
  h.AddNode("a", 4);
  v1::JobSpec spec = GpuJob(1);
  spec.clear_argv();
  spec.set_script(std::string(200 * 1024, '#'));
  auto outcome = h.core.SubmitArray(spec, "0-9", "", h.fx);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().message() ==
        "array \"0-9\": 10 tasks of a 200 KiB spec would store 2.0 MiB, more than the 1 MiB an array may; keep the "
        "script in a file the tasks share");
  CHECK(h.core.SubmitArray(spec, "0-3", "", h.fx).ok());
}

TEST_CASE("a dependency on an array's id waits for every task, and a failed task cancels it") {
  CoreHarness h;
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-2");
  v1::JobSpec after_all = GpuJob(1);
  v1::Dependency* d = after_all.add_dependencies();
  d->set_kind(v1::DEPENDENCY_KIND_AFTER_OK);
  d->set_job_id(array);
  const uint64_t report = h.Submit(after_all);
  CHECK(h.Persisted(report).spec().dependencies_size() == 3);
  h.Pass();
  RunToEnd(h, array);
  RunToEnd(h, array + 1);
  h.Pass();
  CHECK(h.StateOf(report) == v1::JOB_STATE_PENDING);  // task 2 still runs
  const std::string node = h.Persisted(array + 2).allocation().nodes(0).node();
  h.Report(node, array + 2, JobUpdate::KIND_STARTED);
  h.Report(node, array + 2, JobUpdate::KIND_EXITED, 1);
  h.Pass();
  CHECK(h.StateOf(report) == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("a held array of 10,000 tasks is one job and one record until released, then flows a window at a time") {
  core::CoreOptions options = CoreHarness::Options();
  options.queue_depth = 50;
  CoreHarness h(options);
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-9999", HeldGpuJob());
  CHECK(h.fx.jobs.size() == 1);
  CHECK(h.fx.events.size() == 1);
  REQUIRE(h.fx.arrays.size() == 1);
  CHECK(h.fx.arrays.at(array).materialized == 1);
  CHECK(h.fx.arrays.at(array).indices == "0-9999");
  // Ids are set aside for every task: the next job comes after them.
  const uint64_t other = h.Submit(GpuJob(1));
  CHECK(other == array + 10000);
  h.Pass();
  CHECK(h.fx.arrays.at(array).materialized == 1);  // held: nothing more is made
  const v1::Job last = h.Shown(array + 9999);
  CHECK(last.state() == v1::JOB_STATE_PENDING);
  CHECK(last.held());
  CHECK(last.array().index() == 9999);
  CHECK(last.reason() == "held: waits until released (gpusched release)");
  CHECK(last.wait_cause() == v1::WAIT_CAUSE_HELD);

  REQUIRE(h.core.ReleaseArray(array, h.fx).ok());
  h.Pass();
  // The pass made as many tasks as it looks at, and started what fits.
  CHECK(h.fx.arrays.at(array).materialized == 50);
  CHECK(InState(h, array, 50, v1::JOB_STATE_STARTING).size() == 3);  // and `other` on the fourth GPU
  CHECK(h.Shown(array + 50).reason() == "queued: not yet considered by the scheduler");
  for (int round = 0; round < 4000 && !h.fx.arrays.at(array).done(); ++round) {
    std::vector<uint64_t> placed;
    for (const auto& [id, job] : h.fx.jobs) {
      if (job.state() == v1::JOB_STATE_STARTING && id < array + 10000) placed.push_back(id);
    }
    for (uint64_t id : placed) RunToEnd(h, id);
    h.Pass();
  }
  for (int round = 0; round < 100; ++round) {
    for (uint64_t id : InState(h, array + 9900, 100, v1::JOB_STATE_STARTING)) RunToEnd(h, id);
    h.Pass();
  }
  CHECK(InState(h, array, 10000, v1::JOB_STATE_COMPLETED).size() == 10000);
  CHECK(h.fx.arrays.at(array).done());  // the record is deleted with its last task made
  CHECK(h.core.FindActive(array + 9999) == nullptr);
}

TEST_CASE("a command on one task its array's record stands for makes the tasks up to it, and acts on it") {
  CoreHarness h;
  h.AddNode("a", 1);
  const v1::JobSpec spec = HeldGpuJob();
  const uint64_t array = SubmitArray(h, "10-19", spec);
  // The task is known as pending, to dependencies and to the owner check.
  REQUIRE(h.core.FindActive(array + 7) != nullptr);
  CHECK(h.core.FindActive(array + 7)->spec().user() == spec.user());
  CHECK_FALSE(h.core.FindActive(array + 10) != nullptr);
  auto released = h.core.Release(array + 7, h.fx);
  REQUIRE(released.ok());
  CHECK(released->id() == array + 7);
  CHECK(released->array().index() == 17);
  CHECK_FALSE(released->held());
  CHECK(h.fx.arrays.at(array).materialized == 8);
  CHECK(h.Persisted(array + 6).held());
  auto cancelled = h.core.Cancel(array + 9, "", h.fx);
  REQUIRE(cancelled.ok());
  CHECK(h.StateOf(array + 9) == v1::JOB_STATE_CANCELLED);
  CHECK(h.fx.arrays.at(array).done());
  h.Pass();
  CHECK(h.StateOf(array + 7) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(array + 8) == v1::JOB_STATE_PENDING);
}

TEST_CASE("cancelling an array its record still stands for ends each task with a row of its own") {
  CoreHarness h;
  h.AddNode("a", 4);
  const uint64_t array = SubmitArray(h, "0-49", HeldGpuJob());
  v1::JobSpec after_all = GpuJob(1);
  v1::Dependency* d = after_all.add_dependencies();
  d->set_kind(v1::DEPENDENCY_KIND_AFTER_ANY);
  d->set_job_id(array);
  const uint64_t report = h.Submit(after_all);
  h.Pass();
  CHECK(h.StateOf(report) == v1::JOB_STATE_PENDING);  // its tasks are pending, though not jobs yet
  REQUIRE(h.core.CancelArray(array, "", h.fx).ok());
  CHECK(InState(h, array, 50, v1::JOB_STATE_CANCELLED).size() == 50);
  CHECK(h.fx.arrays.at(array).done());
  h.Pass();
  CHECK(h.StateOf(report) == v1::JOB_STATE_STARTING);
}

TEST_CASE("a restart carries on an array from its record: held, the ids set aside, a retried submit") {
  CoreHarness before;
  before.AddNode("a", 4);
  const v1::JobSpec spec = HeldGpuJob();
  auto outcome = before.core.SubmitArray(spec, "0-999:3", "req-7", before.fx);
  REQUIRE(outcome.ok());
  const uint64_t array = outcome->job_id;

  CoreHarness after;
  after.core.Restore({before.Persisted(array)}, before.core.Nodes(), array, {{spec.user(), "req-7", array}});
  REQUIRE(after.core.RestoreArrays({before.fx.arrays.at(array)}).ok());
  after.AddNode("a", 4);
  CHECK(after.Submit(GpuJob(1)) == array + 334);
  auto again = after.core.SubmitArray(spec, "0-999:3", "req-7", after.fx);
  REQUIRE(again.ok());
  CHECK(again->duplicate);
  CHECK(again->job_id == array);
  REQUIRE(after.core.ReleaseArray(array, after.fx).ok());
  after.Pass();
  CHECK(after.Persisted(array + 333).array().index() == 999);

  // A record that does not read back stops the start, naming the array.
  JobArrayRecord corrupt = before.fx.arrays.at(array);
  corrupt.indices = "0-5";
  CoreHarness third;
  absl::Status restored = third.core.RestoreArrays({corrupt});
  CHECK(restored.code() == absl::StatusCode::kDataLoss);
  CHECK(restored.message() ==
        "job array " + std::to_string(array) + "'s record is corrupt: indices \"0-5\" do not give its 334 tasks");
}
