// Job arrays from the command line: submit --array, tasks named ARRAY_INDEX,
// waiting tasks grouped in the status list.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cli/job_table.h"
#include "jobs_fixture.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

// Array 17 as the daemon keeps it: indices 0, 1, 2, 4, 5, 6 as jobs 17-22.
v1::Job Task(int position, v1::JobState state, const std::string& reason = "") {
  static constexpr int kIndices[] = {0, 1, 2, 4, 5, 6};
  v1::Job job;
  job.set_id(17 + position);
  job.mutable_spec()->set_user("alice");
  job.mutable_spec()->set_name("sweep");
  job.mutable_spec()->mutable_resources()->set_gpus(1);
  job.set_state(state);
  job.set_reason(reason);
  *job.mutable_submit_time() = ToProtoTime(TestNow() - absl::Seconds(30));
  v1::ArrayTask* task = job.mutable_array();
  task->set_array_id(17);
  task->set_index(kIndices[position]);
  task->set_count(6);
  task->set_max_running(2);
  return job;
}

void AddArray(FakeSchedulerClient& client) {
  for (int i = 0; i < 6; ++i) client.jobs[17 + i] = Task(i, v1::JOB_STATE_PENDING, "throttled");
}

std::vector<std::string> Ids(const std::string& table) {
  std::vector<std::string> ids;
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) ids.push_back(line.substr(0, line.find(' ')));
  return ids;
}

}  // namespace

TEST_CASE("status shows a task as ARRAY_INDEX and waiting tasks with the same reason as one row") {
  google::protobuf::RepeatedPtrField<v1::Job> jobs;
  *jobs.Add() = Task(0, v1::JOB_STATE_RUNNING);
  *jobs.Add() = Task(1, v1::JOB_STATE_RUNNING);
  const std::string limit = "waiting for array 17's limit: at most 2 of its tasks at once";
  for (int i = 2; i < 5; ++i) *jobs.Add() = Task(i, v1::JOB_STATE_PENDING, limit);
  *jobs.Add() = Task(5, v1::JOB_STATE_PENDING, "held: waits until released (gpusched release)");
  *jobs.Add() = PendingJob();  // id 8 but listed last: grouping only joins neighbours
  const std::string table = RenderJobTable(jobs, TestNow());
  CHECK(Ids(table) == std::vector<std::string>{"17_0", "17_1", "17_[2,4,5%2]", "17_6", "8"});
  CHECK(absl::StrContains(table, limit));
}

TEST_CASE("submit --array sends the indices to the daemon and names the array and its jobs") {
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"submit", "--array", "0-99%8", "--gpus", "1", "--", "train.py"}, client, host);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.submits.size() == 1);
  CHECK(client.submits[0].array() == "0-99%8");
  CHECK(run.out == "Submitted job array 42: 100 tasks, jobs 42-141, at most 8 at once\n");

  run = RunGpusched({"submit", "--array", "", "--", "x"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK(run.err == "gpusched: invalid --array \"\": must not be empty\n");
}

TEST_CASE("submit --array --wait waits for every task and exits 0 only if all completed") {
  FakeHost host;
  FakeSchedulerClient client;
  for (uint64_t id = 42; id < 45; ++id) {
    v1::Job done;
    done.set_id(id);
    done.set_state(id == 43 ? v1::JOB_STATE_FAILED : v1::JOB_STATE_COMPLETED);
    done.set_exit_code(id == 43 ? 3 : 0);
    done.mutable_array()->set_array_id(42);
    done.mutable_array()->set_index(static_cast<int>(id - 42));
    done.mutable_array()->set_count(3);
    client.jobs[id] = done;
  }
  Invocation run = RunGpusched({"submit", "--array", "0-2", "--wait", "--", "x"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(absl::StrContains(run.out, "Job 42_0 COMPLETED\nJob 42_1 FAILED (exit code 3)\nJob 42_2 COMPLETED\n"));
}

TEST_CASE("cancel ARRAY cancels the whole array; cancel ARRAY_INDEX just that task") {
  FakeHost host;
  FakeSchedulerClient client;
  AddArray(client);
  Invocation run = RunGpusched({"cancel", "17", "17_5", "17_0"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Cancelled job 17\nCancelled job 17_5\nCancelled job 17_0\n");
  REQUIRE(client.cancels.size() == 3);
  CHECK(client.cancels[0].job_id() == 17);
  CHECK(client.cancels[0].whole_array());
  CHECK(client.cancels[1].job_id() == 21);  // index 5 is the fifth task
  CHECK_FALSE(client.cancels[1].whole_array());
  CHECK(client.cancels[2].job_id() == 17);
  CHECK_FALSE(client.cancels[2].whole_array());
}

TEST_CASE("a task is found by its index even where indices skip; a missing one is a clear error") {
  FakeHost host;
  FakeSchedulerClient client;
  AddArray(client);
  *client.jobs[8].mutable_spec() = PendingJob().spec();
  client.jobs[8].set_id(8);
  for (const auto& [ref, id] :
       std::vector<std::pair<std::string, uint64_t>>{{"17_0", 17}, {"17_2", 19}, {"17_4", 20}, {"17_6", 22}}) {
    Invocation run = RunGpusched({"status", ref}, client, host);
    REQUIRE(run.exit_code == 0);
    CHECK(absl::StartsWith(run.out, "Job " + std::to_string(id) + " (sweep)\n"));
    CHECK(absl::StrContains(run.out, "Array:       " + ref + ": index "));
  }
  Invocation run = RunGpusched({"status", "17_3"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job array 17 has no task with index 3\n");
  run = RunGpusched({"status", "17_9"}, client, host);
  CHECK(run.err == "gpusched: job array 17 has no task with index 9\n");
  run = RunGpusched({"status", "8_1"}, client, host);
  CHECK(run.err == "gpusched: job 8 is not a job array\n");
  run = RunGpusched({"status", "17_x"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "gpusched: invalid job id \"17_x\": expected a positive number, or ARRAY_INDEX for a task of a job array\n");
}

TEST_CASE("a missing array task acts on none of the jobs given; hold and release of an array's id take it whole") {
  FakeHost host;
  FakeSchedulerClient client;
  AddArray(client);
  Invocation run = RunGpusched({"cancel", "17_5", "17_3"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job array 17 has no task with index 3\n");
  CHECK(client.cancels.empty());

  run = RunGpusched({"hold", "17", "17_2"}, client, host);
  CHECK(run.exit_code == 0);
  REQUIRE(client.holds.size() == 2);
  CHECK(client.holds[0].whole_array());
  CHECK(client.holds[1].job_id() == 19);
  CHECK_FALSE(client.holds[1].whole_array());
  run = RunGpusched({"release", "17"}, client, host);
  CHECK(run.exit_code == 0);
  REQUIRE(client.releases.size() == 1);
  CHECK(client.releases[0].whole_array());
}
