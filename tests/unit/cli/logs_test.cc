// `gpusched logs`: which node's file holds a rank, and following it to the end.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli/logs_command.h"
#include "cli/rank_log.h"
#include "jobs_fixture.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

struct LogDirs {
  std::filesystem::path root;
  LogDirs() {
    root = std::filesystem::temp_directory_path() / ("gpusched-cli-logs-" + std::to_string(getpid()));
    std::filesystem::create_directories(root / "node-a");
    std::filesystem::create_directories(root / "node-b");
  }
  ~LogDirs() { std::filesystem::remove_all(root); }
  std::string dir(const char* node) const { return (root / node).string(); }
  void Append(const char* node, int rank, const std::string& text) const {
    std::ofstream(root / node / ("rank-" + std::to_string(rank) + ".log"), std::ios::app) << text;
  }
};

// 2 nodes x 4 GPUs: ranks 0-3 on node-a, 4-7 on node-b.
v1::Job TwoNodeJob(const LogDirs& dirs, v1::JobState state = v1::JOB_STATE_RUNNING) {
  v1::Job job;
  job.set_id(7);
  job.set_state(state);
  AddNode(job, "node-b", 1, {4, 5, 6, 7}, dirs.dir("node-b").c_str());
  AddNode(job, "node-a", 0, {0, 1, 2, 3}, dirs.dir("node-a").c_str());
  return job;
}

}  // namespace

TEST_CASE("global ranks map to nodes in node-rank order") {
  LogDirs dirs;
  v1::Job job = TwoNodeJob(dirs);
  struct Case {
    int rank;
    const char* node;
  };
  auto c = GENERATE(values<Case>({{0, "node-a"}, {3, "node-a"}, {4, "node-b"}, {7, "node-b"}}));
  auto log = ExpectedRankLog(job, c.rank);
  REQUIRE(log.ok());
  CHECK(log->node == c.node);
  CHECK(log->path == dirs.dir(c.node) + "/rank-" + std::to_string(c.rank) + ".log");

  auto missing = ExpectedRankLog(job, 8);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "job 7 has ranks 0-7; there is no rank 8");

  // torchrun-style: one process per node, logged under the node's first rank.
  job.mutable_spec()->set_launch_mode(v1::LAUNCH_MODE_PER_NODE);
  CHECK(ExpectedRankLog(job, 1)->path == dirs.dir("node-a") + "/rank-0.log");
  CHECK(ExpectedRankLog(job, 6)->path == dirs.dir("node-b") + "/rank-4.log");
  CHECK_FALSE(ExpectedRankLog(job, 8).ok());

  // A node without GPUs runs one worker.
  v1::Job cpu_job;
  cpu_job.set_id(9);
  cpu_job.set_state(v1::JOB_STATE_RUNNING);
  AddNode(cpu_job, "node-a", 0, {}, dirs.dir("node-a").c_str());
  CHECK(ExpectedRankLog(cpu_job, 0)->path == dirs.dir("node-a") + "/rank-0.log");
  CHECK(ExpectedRankLog(cpu_job, 1).status().message() == "job 9 has ranks 0-0; there is no rank 1");

  // A node that has not said where its logs are yet.
  v1::Job starting = TwoNodeJob(dirs, v1::JOB_STATE_STARTING);
  starting.mutable_allocation()->mutable_nodes(0)->clear_log_dir();
  CHECK_THAT(std::string(ExpectedRankLog(starting, 4).status().message()),
             Catch::StartsWith("node node-b has not reported a log directory for job 7 yet"));
}

TEST_CASE("logs prints a rank's file and says which node and path when it is missing") {
  LogDirs dirs;
  dirs.Append("node-a", 0, "hello from rank 0\n");
  dirs.Append("node-b", 5, "hello from rank 5\n");
  FakeHost host;
  FakeSchedulerClient client;
  client.jobs[7] = TwoNodeJob(dirs);

  Invocation run = RunGpusched({"logs", "7"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "hello from rank 0\n");

  run = RunGpusched({"logs", "7", "--rank", "5"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "hello from rank 5\n");

  run = RunGpusched({"logs", "7", "-r", "6"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::StartsWith("gpusched: no log for rank 6 of job 7: " + dirs.dir("node-b") +
                                        "/rank-6.log (on node node-b) does not exist here"));

  run = RunGpusched({"logs", "7", "--rank", "-1"}, client, host);
  CHECK(run.exit_code == 2);
}

TEST_CASE("logs of a job that has not started says so and exits 1") {
  FakeHost host;
  FakeSchedulerClient client;
  client.jobs[8] = PendingJob();
  Invocation run = RunGpusched({"logs", "8"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job 8 has not started yet (PENDING: waiting for 16 GPUs under one leaf switch)\n");
}

TEST_CASE("logs --follow prints new output until the job is over and the file drained") {
  LogDirs dirs;
  dirs.Append("node-a", 0, "step 1\n");
  FakeHost host;
  FakeSchedulerClient client;
  client.job_script = {TwoNodeJob(dirs), TwoNodeJob(dirs), TwoNodeJob(dirs, v1::JOB_STATE_COMPLETED)};
  // The job writes between the daemon's answers, as a real one would.
  int polls = 0;
  LocalContext ctx = host.Context();
  auto base_sleep = ctx.sleep;
  std::ostringstream out, err;
  CommandContext cmd{client, ctx, out, err};
  ctx.sleep = [&](absl::Duration d) {
    base_sleep(d);
    ++polls;
    dirs.Append("node-a", 0, "step " + std::to_string(polls + 1) + "\n");
  };
  LogsOptions options;
  options.job = "7";
  options.follow = true;
  auto result = RunLogs(options, cmd);
  REQUIRE(result.ok());
  CHECK(*result == 0);
  // Written before the daemon said COMPLETED, so printed by the final drain.
  CHECK(out.str() == "step 1\nstep 2\nstep 3\n");
  CHECK(polls == 2);
  CHECK(host.slept == absl::Seconds(1));
}
