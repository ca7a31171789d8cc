// Queues from gpuschedd.toml, end to end: a tier-1 job preempts a running
// tier-0 gang whose real processes get SIGTERM (and checkpoint), the gang is
// requeued and runs again as its next attempt, and a job naming an unknown
// queue is refused; a queue that demotes its long jobs does the same for a
// fresh job of its own.
#include <catch2/catch.hpp>
#include <string>

#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::TempDir;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

std::string WriteQueueConfig(const TempDir& dir) {
  return dir.Write("gpuschedd.toml", "[[queue]]\nname = \"batch\"\n\n[[queue]]\nname = \"urgent\"\ntier = 1\n");
}

}  // namespace

TEST_CASE("a higher tier preempts a running gang whole; it checkpoints, is requeued and runs again", "[integration]") {
  TempDir config_dir;
  TestCluster cluster({{"node-a", 4}, {"node-b", 4}}, {"--config", WriteQueueConfig(config_dir)});

  auto unknown = cluster.Cli({"submit", "--queue", "gold", "--gpus", "1", "--", "/bin/true"});
  CHECK(unknown.exit_code != 0);
  CHECK_THAT(unknown.err, Catch::Contains("unknown queue \"gold\" (known: batch, urgent)"));

  // A training gang on every GPU that checkpoints on SIGTERM.
  const uint64_t gang = cluster.Submit(
      {"--queue", "batch", "--nodes", "2", "--gpus-per-node", "4", "--launch", "per-node", "--", "sh", "-c",
       "echo attempt $GPUSCHED_RESTART_COUNT; trap 'echo checkpoint saved; exit 143' TERM; sleep 300 & wait"});
  cluster.WaitForState(gang, v1::JOB_STATE_RUNNING);

  const uint64_t urgent = cluster.Submit({"--queue", "urgent", "--gpus", "4", "--", "/bin/true"});
  v1::Job done = cluster.WaitForEnd(urgent, 30);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);

  // Requeued, then started again once the urgent job left its GPUs.
  v1::Job again = cluster.WaitForState(gang, v1::JOB_STATE_RUNNING, 30);
  CHECK(again.attempt() == 1);
  v1::Job with_events = cluster.GetJob(gang);
  bool preempted_event = false;
  for (const v1::JobEvent& e : with_events.events()) {
    if (e.state() == v1::JOB_STATE_PREEMPTED) {
      preempted_event = true;
      CHECK_THAT(e.reason(), Catch::Contains("preempted by job " + std::to_string(urgent)));
    }
  }
  CHECK(preempted_event);

  // Each node's rank log holds both attempts (the output is appended); which
  // node is rank 0 may differ between them, so both logs are read.
  const std::string logs =
      cluster.Cli({"logs", std::to_string(gang), "--rank", "0"}).out +
      cluster.Cli({"logs", std::to_string(gang), "--rank", "4"}).out;  // per-node: node 1 is rank 4
  CHECK_THAT(logs, Catch::Contains("attempt 0") && Catch::Contains("checkpoint saved") && Catch::Contains("attempt 1"));
  CHECK_THAT(cluster.Cli({"status", std::to_string(gang)}).out, Catch::Contains("2 (requeued 1 time"));
  cluster.Cli({"cancel", std::to_string(gang)});
  CHECK(cluster.WaitForEnd(gang).state() == v1::JOB_STATE_CANCELLED);

  // Both in the history, from the daemon's SQLite store.
  auto history = cluster.Cli({"history"});
  REQUIRE(history.exit_code == 0);
  CHECK_THAT(history.out, Catch::Contains(std::to_string(urgent) + " ") && Catch::Contains("COMPLETED") &&
                              Catch::Contains(std::to_string(gang) + " ") && Catch::Contains("CANCELLED") &&
                              Catch::Contains("2 jobs, "));
}

TEST_CASE("a queue's demote_after: a long job yields to a fresh one, checkpoints and resumes", "[integration]") {
  TempDir config_dir;
  const std::string config =
      config_dir.Write("gpuschedd.toml", "[[queue]]\nname = \"train\"\ndemote_after = \"0:00:01\"\n");
  TestCluster cluster({{"node-a", 4}}, {"--config", config});
  const uint64_t long_job = cluster.Submit(
      {"--gpus", "4", "--", "sh", "-c",
       "echo attempt $GPUSCHED_RESTART_COUNT; trap 'echo checkpoint saved; exit 143' TERM; sleep 300 & wait"});
  cluster.WaitForState(long_job, v1::JOB_STATE_RUNNING);
  // Past its four seconds of service (a second per GPU), a fresh job of the
  // queue stops it.
  absl::SleepFor(absl::Seconds(5));
  const uint64_t fresh = cluster.Submit({"--gpus", "4", "--", "/bin/true"});
  CHECK(cluster.WaitForEnd(fresh, 30).state() == v1::JOB_STATE_COMPLETED);

  v1::Job again = cluster.WaitForState(long_job, v1::JOB_STATE_RUNNING, 30);
  CHECK(again.attempt() == 1);
  CHECK(again.earlier_run_s() >= 5);
  bool demoted_event = false;
  const v1::Job with_events = cluster.GetJob(long_job);
  for (const v1::JobEvent& e : with_events.events()) {
    if (e.state() != v1::JOB_STATE_PREEMPTED) continue;
    demoted_event = true;
    CHECK_THAT(e.reason(), Catch::Contains("preempted by job " + std::to_string(fresh)) &&
                               Catch::Contains("least attained service first") &&
                               Catch::Contains("(1s per GPU) after which its queue demotes it"));
  }
  CHECK(demoted_event);
  CHECK_THAT(cluster.Cli({"logs", std::to_string(long_job)}).out,
             Catch::Contains("attempt 0") && Catch::Contains("checkpoint saved") && Catch::Contains("attempt 1"));
  CHECK_THAT(cluster.Cli({"status", std::to_string(long_job)}).out,
             Catch::Contains("requeued 1 time, ran ") && Catch::Contains("s before)"));
  cluster.Cli({"cancel", std::to_string(long_job)});
  CHECK(cluster.WaitForEnd(long_job).state() == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("dependencies and hold/release through the CLI", "[integration]") {
  TestCluster cluster({{"node-a", 4}});
  const uint64_t first = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c", "exit 3"});
  const uint64_t on_success =
      cluster.Submit({"--dependency", "afterok:" + std::to_string(first), "--gpus", "1", "--", "/bin/true"});
  const uint64_t on_failure = cluster.Submit(
      {"--dependency", "afternotok:" + std::to_string(first), "--hold", "--gpus", "1", "--", "/bin/true"});
  CHECK(cluster.WaitForEnd(first).state() == v1::JOB_STATE_FAILED);
  v1::Job cancelled = cluster.WaitForEnd(on_success);
  CHECK(cancelled.state() == v1::JOB_STATE_CANCELLED);
  CHECK_THAT(cancelled.reason(), Catch::StartsWith("dependency never satisfied"));

  // Its dependency is met, but it is held.
  CHECK_THAT(cluster.Cli({"status", std::to_string(on_failure)}).out,
             Catch::Contains("Held:") && Catch::Contains("afternotok:" + std::to_string(first)));
  CHECK(cluster.GetJob(on_failure).state() == v1::JOB_STATE_PENDING);
  auto release = cluster.Cli({"release", "--json", std::to_string(on_failure)});
  CHECK(release.exit_code == 0);
  v1::Job released;
  REQUIRE(google::protobuf::util::JsonStringToMessage(release.out, &released).ok());
  CHECK(released.id() == on_failure);
  CHECK_FALSE(released.held());
  CHECK(cluster.WaitForEnd(on_failure).state() == v1::JOB_STATE_COMPLETED);

  auto ended = cluster.Cli({"hold", std::to_string(first)});
  CHECK(ended.exit_code == 1);
  CHECK_THAT(ended.err, Catch::Contains("not pending"));
  auto bad = cluster.Cli({"submit", "--dependency", "afterwards:1", "--", "/bin/true"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--dependency"));
}
