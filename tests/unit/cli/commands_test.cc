// Each command run through the real command line against a fake daemon:
// what it asks, what it prints, and the exit code scripts see.
#include <catch2/catch.hpp>

#include "absl/strings/str_split.h"
#include "cli/errors.h"
#include "cli/job_table.h"
#include "cli/status_command.h"
#include "cli/submit_command.h"
#include "cli/wait_for_job.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "jobs_fixture.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;
using google::protobuf::util::MessageDifferencer;

namespace {

v1::Job WithState(v1::Job job, v1::JobState state) {
  job.set_state(state);
  return job;
}

}  // namespace

TEST_CASE("status without a job lists the unfinished jobs, every page, in id order") {
  FakeHost host;
  FakeSchedulerClient client;
  client.list_pages.resize(2);
  *client.list_pages[0].add_jobs() = PendingJob();
  client.list_pages[0].set_next_page_token("p1");
  *client.list_pages[1].add_jobs() = RunningJob();

  Invocation run = RunGpusched({"status"}, client, host);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.lists.size() == 2);
  CHECK(client.lists[1].page_token() == "p1");
  const auto& states = client.lists[0].states();
  CHECK(std::vector<int>(states.begin(), states.end()) ==
        std::vector<int>{v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING});
  google::protobuf::RepeatedPtrField<v1::Job> expected;
  *expected.Add() = RunningJob();
  *expected.Add() = PendingJob();
  CHECK(run.out == RenderJobTable(expected, TestNow()));
}

TEST_CASE("status filters become the ListJobs query") {
  struct Case {
    std::vector<std::string> args;
    std::vector<int> states;
    const char* user;
    const char* queue;
  };
  auto c = GENERATE(values<Case>({
      {{"status", "--all"}, {}, "", ""},
      {{"status", "-a", "--user", "bob"}, {}, "bob", ""},
      {{"status", "--state", "failed", "--state", "TIMEOUT"}, {v1::JOB_STATE_FAILED, v1::JOB_STATE_TIMEOUT}, "", ""},
      {{"status", "--queue", "research", "-u", "alice"},
       {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING},
       "alice",
       "research"},
  }));
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched(c.args, client, host);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.lists.size() == 1);
  CHECK(std::vector<int>(client.lists[0].states().begin(), client.lists[0].states().end()) == c.states);
  CHECK(client.lists[0].user() == c.user);
  CHECK(client.lists[0].queue() == c.queue);
}

TEST_CASE("status usage errors exit 2 before asking the daemon") {
  auto args = GENERATE(std::vector<std::string>{"status", "--state", "sleeping"},
                       std::vector<std::string>{"status", "--all", "--state", "running"},
                       std::vector<std::string>{"status", "abc"}, std::vector<std::string>{"status", "0"},
                       std::vector<std::string>{"status", "-5"}, std::vector<std::string>{"status", "7", "--all"},
                       std::vector<std::string>{"status", "7", "8"});
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched(args, client, host);
  INFO(run.err);
  CHECK(run.exit_code == 2);
  CHECK(client.lists.empty());
  CHECK(client.gets.empty());
}

TEST_CASE("status --state names the valid states when given a wrong one") {
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"status", "--state", "sleeping"}, client, host);
  CHECK(run.err ==
        "gpusched: invalid --state \"sleeping\": expected one of PENDING, STARTING, RUNNING, COMPLETED, "
        "FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED\n");
}

TEST_CASE("status --json prints the list in the ListJobsResponse shape, and one job as a Job") {
  FakeHost host;
  FakeSchedulerClient client;
  client.list_pages.resize(1);
  *client.list_pages[0].add_jobs() = FailedJob();
  *client.list_pages[0].add_jobs() = RunningJob();
  Invocation run = RunGpusched({"status", "--all", "--json"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::ListJobsResponse list;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &list).ok());
  REQUIRE(list.jobs_size() == 2);
  CHECK(list.jobs(0).id() == 7);
  CHECK(MessageDifferencer::Equals(list.jobs(1), FailedJob()));

  client.jobs[12] = FailedJob();
  run = RunGpusched({"status", "12", "--json"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::Job job;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &job).ok());
  CHECK(MessageDifferencer::Equals(job, FailedJob()));
}

TEST_CASE("status JOB says whether a GPU share is enforced: through MPS, or only accounted when time-sliced") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Job job = RunningJob();
  job.mutable_spec()->mutable_resources()->set_gpu_share_milli(300);
  job.mutable_spec()->mutable_resources()->set_gpu_sharing(v1::GPU_SHARE_MODE_MPS);
  for (v1::NodeAllocation& part : *job.mutable_allocation()->mutable_nodes()) {
    part.set_gpu_share_milli(300);
    part.set_gpu_mem_limit_mb(10240);
    part.set_gpu_share_mode(v1::GPU_SHARE_MODE_MPS);
    part.set_mps_user("alice");
  }
  client.jobs[7] = job;
  Invocation run = RunGpusched({"status", "7"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("30% of each GPU and of its memory, shared by mps"));
  CHECK_THAT(
      run.out,
      Catch::Contains("30% and 10G of each GPU, through MPS as alice: enforced (compute threads and pinned memory)"));
  for (v1::NodeAllocation& part : *job.mutable_allocation()->mutable_nodes()) {
    part.set_gpu_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
    part.clear_mps_user();
  }
  client.jobs[7] = job;
  run = RunGpusched({"status", "7"}, client, host);
  CHECK_THAT(run.out,
             Catch::Contains("30% and 10G of each GPU, time-sliced: accounted by the scheduler, not enforced"));
}

TEST_CASE("status JOB shows the detail, and the daemon's message when it refuses") {
  FakeHost host;
  FakeSchedulerClient client;
  client.jobs[7] = RunningJob();
  Invocation run = RunGpusched({"status", "7"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("Job 7 (train-llm)\n"));

  run = RunGpusched({"status", "42"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK(run.err == "gpusched: job 42 not found\n");
}

TEST_CASE("an unreachable daemon exits 3 with one line, for every command") {
  auto args = GENERATE(std::vector<std::string>{"status"}, std::vector<std::string>{"status", "7"},
                       std::vector<std::string>{"submit", "--", "x"}, std::vector<std::string>{"cancel", "7", "8"},
                       std::vector<std::string>{"logs", "7"}, std::vector<std::string>{"nodes"});
  FakeHost host;
  FakeSchedulerClient client;
  client.fail_all = UnreachableError("127.0.0.1:6870");
  Invocation run = RunGpusched(args, client, host);
  CHECK(run.exit_code == 3);
  CHECK(run.err == "gpusched: cannot reach gpuschedd at 127.0.0.1:6870 (is it running? set --addr or GPUSCHED_ADDR)\n");
  CHECK(client.cancels.size() <= 1);  // cancel stops at the first unreachable answer
}

TEST_CASE("cancel reports each job and fails if any one failed") {
  FakeHost host;
  FakeSchedulerClient client;
  client.cancel_errors[8] = absl::FailedPreconditionError("job 8 already finished (COMPLETED)");
  client.cancel_errors[9] = absl::NotFoundError("no such job");
  Invocation run = RunGpusched({"cancel", "7", "8", "9", "10"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Cancelled job 7\nCancelled job 10\n");
  CHECK(run.err == "gpusched: job 8 already finished (COMPLETED)\ngpusched: job 9: no such job\n");
  REQUIRE(client.cancels.size() == 4);
  CHECK(client.cancels[0].reason() == "by alice");

  client.cancels.clear();
  run = RunGpusched({"cancel", "7"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Cancelled job 7\n");

  client.cancels.clear();
  run = RunGpusched({"cancel", "7", "x8"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK(client.cancels.empty());  // every id is checked before the first cancel
}

TEST_CASE("cancel, hold and release --json print each job the daemon answered, one JSON line each") {
  FakeHost host;
  FakeSchedulerClient client;
  client.cancel_errors[8] = absl::FailedPreconditionError("job 8 already finished (COMPLETED)");
  Invocation run = RunGpusched({"cancel", "--json", "7", "8", "9"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job 8 already finished (COMPLETED)\n");
  std::vector<std::string> lines = absl::StrSplit(run.out, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 2);
  std::vector<uint64_t> ids;
  for (const std::string& line : lines) {
    v1::Job job;
    REQUIRE(google::protobuf::util::JsonStringToMessage(line, &job).ok());
    ids.push_back(job.id());
  }
  CHECK(ids == std::vector<uint64_t>{7, 9});

  run = RunGpusched({"hold", "--json", "7"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::Job held;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &held).ok());
  CHECK(held.id() == 7);
  CHECK(held.held());
  run = RunGpusched({"release", "--json", "7"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::Job released;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &released).ok());
  CHECK_FALSE(released.held());
}

TEST_CASE("submit --json prints the SubmitJobResponse") {
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"submit", "--json", "--gpus", "1", "--", "x"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::SubmitJobResponse response;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &response).ok());
  CHECK(response.job().id() == 42);
  CHECK(response.job().spec().resources().gpus() == 1);
}

TEST_CASE("a refused submit prints the daemon's message and exits 1") {
  FakeHost host;
  FakeSchedulerClient client;
  client.fail_all = absl::InvalidArgumentError("resources.gpus: 1000 GPUs requested, the cluster has 64");
  Invocation run = RunGpusched({"submit", "--gpus", "1000", "--", "x"}, client, host);
  CHECK(run.exit_code == 1);  // the daemon's INVALID_ARGUMENT is not a usage error
  CHECK(run.err == "gpusched: resources.gpus: 1000 GPUs requested, the cluster has 64\n");
}

TEST_CASE("a session's output is its terminal: run and alloc refuse --output and --error, sending nothing") {
  for (const char* command : {"run", "alloc"}) {
    for (const char* flag : {"--output", "--error"}) {
      FakeHost host;
      FakeSchedulerClient client;
      Invocation run = RunGpusched({command, flag, "x.log", "--gpus", "1", "--", "x"}, client, host);
      INFO(command << " " << flag);
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.err, Catch::Contains("a session's output is this terminal"));
      CHECK(client.submits.empty());
    }
  }
}

TEST_CASE("submit --wait blocks until the job ends and exits 0 only for COMPLETED") {
  struct Case {
    v1::JobState final_state;
    int exit_code;
    const char* last_line;
  };
  auto c = GENERATE(values<Case>({
      {v1::JOB_STATE_COMPLETED, 0, "Job 42 COMPLETED\n"},
      {v1::JOB_STATE_FAILED, 1, "Job 42 FAILED (exit code 3): rank 0 exited with code 3\n"},
      {v1::JOB_STATE_TIMEOUT, 1, "Job 42 TIMEOUT: time limit 00:01:00 reached\n"},
  }));
  FakeHost host;
  FakeSchedulerClient client;  // no WatchJobs: polls GetJob
  v1::Job job;
  job.set_id(42);
  client.job_script.push_back(WithState(job, v1::JOB_STATE_PENDING));
  client.job_script.push_back(WithState(job, v1::JOB_STATE_RUNNING));
  v1::Job end = WithState(job, c.final_state);
  if (c.final_state == v1::JOB_STATE_FAILED) {
    end.set_exit_code(3);
    end.set_reason("rank 0 exited with code 3");
  } else if (c.final_state == v1::JOB_STATE_TIMEOUT) {
    end.set_reason("time limit 00:01:00 reached");
  }
  client.job_script.push_back(end);

  Invocation run = RunGpusched({"submit", "--wait", "--", "x"}, client, host);
  CHECK(run.exit_code == c.exit_code);
  CHECK(run.out == std::string("Submitted job 42\n") + c.last_line);
  CHECK(client.gets.size() == 3);
  CHECK(client.watches == 1);  // tried once, then polled
  CHECK(host.slept >= absl::Seconds(2));
}

TEST_CASE("a broken watch falls back to polling; a failing GetJob ends the wait with its error") {
  FakeHost host;
  FakeSchedulerClient client;
  client.watch_status = absl::ResourceExhaustedError("watcher fell too far behind; watch again");
  v1::Job job;
  job.set_id(42);
  client.job_script = {WithState(job, v1::JOB_STATE_RUNNING), WithState(job, v1::JOB_STATE_CANCELLED)};
  Invocation run = RunGpusched({"submit", "--wait", "--", "x"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Submitted job 42\nJob 42 CANCELLED\n");
  CHECK(client.watches == 1);

  FakeSchedulerClient gone;
  gone.fail_all = absl::NotFoundError("job 42 not found");
  LocalContext ctx = host.Context();
  auto waited = WaitForJob(gone, 42, ctx);
  CHECK(waited.status().message() == "job 42 not found");
}

TEST_CASE("a daemon that goes away during --wait is retried for a while, then reported unreachable") {
  FakeHost host;
  FakeSchedulerClient client;
  client.fail_all = UnreachableError("127.0.0.1:6870");
  LocalContext ctx = host.Context();
  auto waited = WaitForJob(client, 42, ctx);
  CHECK(IsUnreachableError(waited.status()));
  CHECK(host.slept >= absl::Minutes(5));
  CHECK(host.slept < absl::Minutes(6));
}

TEST_CASE("submit --wait follows WatchJobs and confirms the end with GetJob") {
  FakeHost host;
  FakeSchedulerClient client;
  client.watch_status = absl::OkStatus();
  v1::Job job;
  job.set_id(42);
  client.job_script.push_back(WithState(job, v1::JOB_STATE_RUNNING));
  client.job_script.push_back(WithState(job, v1::JOB_STATE_COMPLETED));
  v1::JobEvent other;
  other.set_job_id(41);
  other.set_state(v1::JOB_STATE_COMPLETED);
  v1::JobEvent done;
  done.set_job_id(42);
  done.set_state(v1::JOB_STATE_COMPLETED);
  client.watch_events = {other, done};

  Invocation run = RunGpusched({"submit", "--wait", "--json", "--", "x"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(client.watches == 1);
  CHECK(client.gets.size() == 2);
  CHECK(host.slept == absl::ZeroDuration());  // the watch ended the wait, no polling
  // One JSON document per line: the submit answer, then the final job.
  const size_t newline = run.out.find('\n');
  REQUIRE(newline != std::string::npos);
  v1::SubmitJobResponse submitted;
  v1::Job final_job;
  CHECK(google::protobuf::util::JsonStringToMessage(run.out.substr(0, newline), &submitted).ok());
  CHECK(google::protobuf::util::JsonStringToMessage(run.out.substr(newline + 1), &final_job).ok());
  CHECK(final_job.state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("submit --wait reads the job again once the watch is in place: an end just before it is not missed") {
  FakeHost host;
  FakeSchedulerClient client;
  client.watch_status = absl::OkStatus();
  v1::Job job;
  job.set_id(42);
  // Running when first read; ended before the watch was in place, so no
  // event for it will come: only the daemon's "watching" marker.
  client.job_script = {WithState(job, v1::JOB_STATE_RUNNING), WithState(job, v1::JOB_STATE_COMPLETED)};
  client.watch_events = {v1::JobEvent()};
  Invocation run = RunGpusched({"submit", "--wait", "--", "x"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Submitted job 42\nJob 42 COMPLETED\n");
  CHECK(client.watches == 1);
  CHECK(host.slept == absl::ZeroDuration());  // no wait for a round to end
}

TEST_CASE("nodes prints the table, or the ListNodesResponse as JSON") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node* node = client.nodes.add_nodes();
  node->mutable_info()->set_name("dgx-01");
  node->set_state(v1::NODE_STATE_UP);
  Invocation run = RunGpusched({"nodes"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("NAME    STATE  GPUS"));
  CHECK_THAT(run.out, Catch::Contains("\ndgx-01  UP     0/0"));

  run = RunGpusched({"nodes", "--json"}, client, host);
  CHECK(run.exit_code == 0);
  v1::ListNodesResponse parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &parsed).ok());
  CHECK(MessageDifferencer::Equals(parsed, client.nodes));
}

TEST_CASE("nodes follows the daemon's pages; nodes show asks for its node alone") {
  FakeHost host;
  FakeSchedulerClient client;
  client.node_page_size = 2;
  for (const std::string name : {"gpu001", "gpu002", "gpu003", "gpu004", "gpu005"}) {
    v1::Node* node = client.nodes.add_nodes();
    node->mutable_info()->set_name(name);
    node->set_state(v1::NODE_STATE_UP);
  }
  Invocation run = RunGpusched({"nodes", "--json"}, client, host);
  CHECK(run.exit_code == 0);
  v1::ListNodesResponse parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &parsed).ok());
  CHECK(MessageDifferencer::Equals(parsed, client.nodes));
  REQUIRE(client.node_lists.size() == 3);
  CHECK(client.node_lists[2].page_token() == "gpu004");

  client.node_lists.clear();
  run = RunGpusched({"nodes", "show", "gpu005"}, client, host);
  CHECK(run.exit_code == 0);
  REQUIRE(client.node_lists.size() == 1);
  CHECK(client.node_lists[0].node() == "gpu005");
}

TEST_CASE("nodes drain needs a reason, shows the node drained, and resume undoes it") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node* node = client.nodes.add_nodes();
  node->mutable_info()->set_name("dgx-01");
  node->set_state(v1::NODE_STATE_UP);

  Invocation run = RunGpusched({"nodes", "drain", "dgx-01"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("--reason"));
  CHECK(client.drains.empty());

  run = RunGpusched({"nodes", "drain", "dgx-01", "--reason", "NVLink errors on GPU3"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("node dgx-01 drained: NVLink errors on GPU3"));
  REQUIRE(client.drains.size() == 1);
  CHECK(client.drains[0].reason() == "NVLink errors on GPU3");
  run = RunGpusched({"nodes"}, client, host);
  CHECK_THAT(run.out, Catch::Contains("dgx-01  UP+DRAINED"));
  CHECK_THAT(run.out, Catch::Contains("drained: NVLink errors on GPU3"));
  run = RunGpusched({"nodes", "show", "dgx-01"}, client, host);
  CHECK_THAT(run.out, Catch::Contains("UP+DRAINED (drained: NVLink errors on GPU3)"));

  run = RunGpusched({"nodes", "resume", "dgx-01"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "node dgx-01 resumed: new jobs may go there\n");
  run = RunGpusched({"nodes"}, client, host);
  CHECK_THAT(run.out, Catch::Contains("\ndgx-01  UP "));

  run = RunGpusched({"nodes", "resume", "nope"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("no node nope"));
}

TEST_CASE("help and version exit 0 on stdout; unknown commands exit 2") {
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"--version"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "gpusched 0.1.0\n");
  run = RunGpusched({"submit", "--help"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("--mem-per-gpu"));
  run = RunGpusched({}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::StartsWith("gpusched: a command is required"));
  run = RunGpusched({"frobnicate"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK(run.err == "gpusched: unknown command \"frobnicate\" (see gpusched --help)\n");
}

TEST_CASE("history lists finished jobs with their wait, run time and GPU-hours, filtered by how long ago they ended") {
  FakeHost host;
  FakeSchedulerClient client;
  client.list_pages.resize(1);
  v1::Job old_job = FailedJob();  // 1 GPU, waited 1 h, ran 27 h, ended 2 h ago
  v1::Job recent = FailedJob();
  recent.set_id(13);
  recent.set_state(v1::JOB_STATE_COMPLETED);
  recent.mutable_spec()->mutable_resources()->set_gpus(8);
  *recent.mutable_submit_time() = ToProtoTime(TestNow() - absl::Minutes(50));
  *recent.mutable_start_time() = ToProtoTime(TestNow() - absl::Minutes(40));
  *recent.mutable_end_time() = ToProtoTime(TestNow() - absl::Minutes(10));
  *client.list_pages[0].add_jobs() = recent;
  *client.list_pages[0].add_jobs() = old_job;

  Invocation all = RunGpusched({"history"}, client, host);
  INFO(all.err);
  REQUIRE(all.exit_code == 0);
  REQUIRE(client.lists.size() == 1);
  const auto& states = client.lists[0].states();
  CHECK(std::vector<int>(states.begin(), states.end()) ==
        std::vector<int>{v1::JOB_STATE_COMPLETED, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED, v1::JOB_STATE_TIMEOUT,
                         v1::JOB_STATE_NODE_FAIL, v1::JOB_STATE_PREEMPTED});
  // Oldest end first; 27 + 4 GPU-hours; mean wait (1 h + 10 min) / 2.
  CHECK(all.out.find("12 ") < all.out.find("13 "));
  CHECK_THAT(all.out, Catch::Contains("27.00") && Catch::Contains("4.00") &&
                          Catch::Contains("2 jobs, 31.00 GPU-hours, mean wait 35:00"));

  Invocation recent_only = RunGpusched({"history", "--since", "60"}, client, host);
  REQUIRE(recent_only.exit_code == 0);
  CHECK_THAT(recent_only.out, Catch::Contains("1 job, 4.00 GPU-hours"));

  Invocation json = RunGpusched({"history", "--json", "--limit", "1"}, client, host);
  REQUIRE(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"id\":13"));
  CHECK_THAT(json.out, Catch::Contains("\"gpu_hours\":4") && Catch::Contains("\"wait_s\":600"));
  CHECK_THAT(json.out, !Catch::Contains("\"id\":12"));

  Invocation bad = RunGpusched({"history", "--state", "running"}, client, host);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("invalid --state \"running\""));
}

TEST_CASE("history charges a job with a share of a GPU that fraction of its GPU-hours; status shows the share") {
  FakeHost host;
  FakeSchedulerClient client;
  client.list_pages.resize(1);
  v1::Job shared = FailedJob();  // 1 GPU, ran 27 h
  shared.mutable_spec()->mutable_resources()->set_gpu_share_milli(250);
  *client.list_pages[0].add_jobs() = shared;
  Invocation run = RunGpusched({"history"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("1x25%") && Catch::Contains("1 job, 6.75 GPU-hours"));
  Invocation json = RunGpusched({"history", "--json"}, client, host);
  CHECK_THAT(json.out, Catch::Contains("\"gpu_share_percent\":25") && Catch::Contains("\"gpu_hours\":6.75"));
}
