// A job array through the real binaries: its tasks' environment, the
// throttle, the grouped status row, cancelling the array by its id.

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

namespace {

// "Submitted job array 17: 6 tasks, ..." -> 17.
uint64_t SubmitArray(const TestCluster& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), "submit");
  auto r = cluster.Cli(args);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string marker = "Submitted job array ";
  REQUIRE(absl::StartsWith(r.out, marker));
  return std::stoull(r.out.substr(marker.size()));
}

}  // namespace

TEST_CASE("an array's tasks see their index, run at most %N at once, and all complete", "[integration]") {
  TestCluster cluster;
  // Each task marks itself running for a moment and logs how many were
  // running then: with 8 free GPUs only the throttle keeps that <= 2.
  const std::string dir = cluster.dir() + "/running";
  const uint64_t array = SubmitArray(
      cluster, {"--array", "0-5%2", "--gpus", "1", "--", "/bin/sh", "-c",
                "mkdir -p " + dir + "; touch " + dir +
                    "/$GPUSCHED_JOB_ID; "
                    "echo task $GPUSCHED_ARRAY_TASK_ID of $GPUSCHED_ARRAY_TASK_COUNT in array $GPUSCHED_ARRAY_JOB_ID "
                    "slurm $SLURM_ARRAY_TASK_ID; sleep 0.5; echo running $(ls " +
                    dir + " | wc -l); rm " + dir + "/$GPUSCHED_JOB_ID"});
  for (uint64_t id = array; id < array + 6; ++id) {
    v1::Job job = cluster.WaitForEnd(id, 60);
    CHECK(job.state() == v1::JOB_STATE_COMPLETED);
    CHECK(job.array().array_id() == array);
  }
  for (int index = 0; index < 6; ++index) {
    auto logs = cluster.Cli({"logs", absl::StrCat(array, "_", index)});
    INFO(logs.out << logs.err);
    REQUIRE(logs.exit_code == 0);
    CHECK(absl::StrContains(logs.out, absl::StrCat("task ", index, " of 6 in array ", array, " slurm ", index)));
    const bool within_limit = absl::StrContains(logs.out, "running 1") || absl::StrContains(logs.out, "running 2");
    CHECK(within_limit);
  }
}

TEST_CASE("waiting tasks share a status row; cancelling the array's id ends them all", "[integration]") {
  TestCluster cluster;
  const uint64_t array = SubmitArray(cluster, {"--array", "0-3,7", "--hold", "--gpus", "1", "--", "true"});
  auto status = cluster.Cli({"status"});
  INFO(status.out << status.err);
  CHECK(absl::StrContains(status.out, absl::StrCat("\n", array, "_[0-3,7]  ")));

  auto detail = cluster.Cli({"status", absl::StrCat(array, "_7")});
  CHECK(absl::StrContains(detail.out, absl::StrCat("Job ", array + 4, "\n")));
  CHECK(absl::StrContains(detail.out, absl::StrCat("index 7 of job array ", array, " (5 tasks)")));

  auto cancel = cluster.Cli({"cancel", absl::StrCat(array)});
  CHECK(cancel.exit_code == 0);
  for (uint64_t id = array; id < array + 5; ++id) CHECK(cluster.WaitForEnd(id).state() == v1::JOB_STATE_CANCELLED);

  auto bad = cluster.Cli({"submit", "--array", "0-3%0", "--gpus", "1", "--", "true"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "gpusched: array \"0-3%0\": the limit after % must be a number >= 1, got \"0\"\n");
}

TEST_CASE("a held array is one record: shown task by task, kept over a restart, run to the end once released",
          "[integration]") {
  TestCluster cluster;
  // More tasks than a pass looks at (queue_depth 500): they are made jobs a window at a time.
  const uint64_t array = SubmitArray(cluster, {"--array", "1-600", "--hold", "--gpus", "1", "--", "true"});
  auto status = cluster.Cli({"status"});
  INFO(status.out << status.err);
  CHECK(absl::StrContains(status.out, absl::StrCat("\n", array, "_[1-600]  ")));
  auto last = cluster.Cli({"status", absl::StrCat(array, "_600")});
  INFO(last.out << last.err);
  CHECK(absl::StrContains(last.out, absl::StrCat("Job ", array + 599, "\nState:       PENDING\n")));
  CHECK(absl::StrContains(last.out, "held: waits until released"));

  cluster.StopDaemon();
  cluster.StartDaemon();
  cluster.WaitForNodesUp(2);
  CHECK(cluster.GetJob(array + 599).held());
  // Ids after the array's stay free for its tasks.
  const uint64_t next = cluster.Submit({"--hold", "--gpus", "1", "--", "true"});
  CHECK(next == array + 600);

  auto release = cluster.Cli({"release", absl::StrCat(array)});
  INFO(release.out << release.err);
  REQUIRE(release.exit_code == 0);
  for (uint64_t id = array; id < array + 600; ++id) {
    const v1::Job job = cluster.WaitForEnd(id, 120);
    CHECK(job.state() == v1::JOB_STATE_COMPLETED);
    CHECK(job.array().index() == static_cast<int32_t>(id - array + 1));
  }
}
