// GPU sharing through the real daemon, agents and CLI: two 30% jobs on one
// time-sliced GPU at once with their limits in their environment, a 50% job
// waiting with a reason, a whole-GPU job kept off the shared GPU; and an MPS
// node, whose agent runs (a stand-in for) NVIDIA's MPS control daemon.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::CommandResult;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

TEST_CASE("two 30% jobs share a time-sliced GPU; a 50% job waits; a whole GPU goes elsewhere", "[integration]") {
  TestCluster cluster({{"shared-a", 1, {"--gpu-share-mode", "timeslice"}}, {"exclusive-b", 1}});
  const std::vector<std::string> share_job = {
      "--gpu-share",
      "30%",
      "--",
      "/bin/sh",
      "-c",
      "echo SHARE=$GPUSCHED_GPU_SHARE_PERCENT MEM=$GPUSCHED_GPU_MEM_LIMIT_MB SLICING=$GPUSCHED_GPU_SHARING "
      "ENFORCED=$GPUSCHED_GPU_LIMITS_ENFORCED CVD=$CUDA_VISIBLE_DEVICES; sleep 6"};
  std::vector<std::string> with_limit = share_job;
  with_limit.insert(with_limit.begin(), {"--gpu-mem-limit", "10G"});
  const uint64_t a = cluster.Submit(share_job);
  const uint64_t b = cluster.Submit(with_limit);
  // Both run at once, on the one shared GPU.
  const v1::Job running_a = cluster.WaitForState(a, v1::JOB_STATE_RUNNING);
  const v1::Job running_b = cluster.WaitForState(b, v1::JOB_STATE_RUNNING);
  CHECK(cluster.GetJob(a).state() == v1::JOB_STATE_RUNNING);
  CHECK(running_a.allocation().nodes(0).node() == "shared-a");
  CHECK(running_b.allocation().nodes(0).node() == "shared-a");
  CHECK(running_b.allocation().nodes(0).gpu_mem_limit_mb() == 10240);

  const uint64_t half = cluster.Submit({"--gpu-share", "50", "--", "/bin/true"});
  const uint64_t whole = cluster.Submit({"--gpus", "1", "--", "/bin/true"});
  const v1::Job whole_done = cluster.WaitForEnd(whole);
  CHECK(whole_done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(whole_done.allocation().nodes(0).node() == "exclusive-b");
  const v1::Job waiting = cluster.GetJob(half);
  CHECK(waiting.state() == v1::JOB_STATE_PENDING);
  CHECK_THAT(waiting.reason(), Catch::Contains("waits for 1 GPU with 50% free"));

  CommandResult status = cluster.Cli({"status", std::to_string(b)});
  CHECK_THAT(status.out, Catch::Contains("30% of each GPU with 10G of its memory"));
  CHECK_THAT(status.out, Catch::Contains("30% and 10G of each GPU, time-sliced"));

  REQUIRE(cluster.WaitForEnd(a).state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(cluster.WaitForEnd(b).state() == v1::JOB_STATE_COMPLETED);
  CHECK(cluster.WaitForEnd(half).state() == v1::JOB_STATE_COMPLETED);
  CommandResult log = cluster.Cli({"logs", std::to_string(b)});
  CHECK_THAT(log.out, Catch::Contains("SHARE=30 MEM=10240 SLICING=timeslice ENFORCED=0 CVD=0"));
}

TEST_CASE("a share on a cluster where no node shares GPUs is refused at submit", "[integration]") {
  TestCluster cluster({{"exclusive-a", 2}});
  CommandResult refused = cluster.Cli({"submit", "--gpu-share", "30%", "--", "/bin/true"});
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.err, Catch::Contains("no node of this cluster shares its GPUs"));
  CommandResult bad = cluster.Cli({"submit", "--gpu-share", "120%", "--", "/bin/true"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("invalid --gpu-share \"120%\": expected a percentage above 0 and at most 100"));
}

TEST_CASE("on an MPS node the agent runs the MPS control daemon and jobs get enforced limits", "[integration]") {
  gpusched::testing::TempDir mps;
  {
    TestCluster cluster({{"mps-a",
                          2,
                          {"--gpu-share-modes", "1=mps", "--mps-control-program", GPUSCHED_FAKE_MPS_CONTROL,
                           "--mps-dir", mps.path().string()}}});
    const uint64_t job =
        cluster.Submit({"--gpu-share", "30%", "--gpu-mem-limit", "10G", "--gpu-sharing", "mps", "--", "/bin/sh", "-c",
                        "echo THREADS=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE PINNED=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "
                        "CVD=$CUDA_VISIBLE_DEVICES PIPE=$CUDA_MPS_PIPE_DIRECTORY SHARING=$GPUSCHED_GPU_SHARING "
                        "ENFORCED=$GPUSCHED_GPU_LIMITS_ENFORCED; sleep 3"});
    const v1::Job running = cluster.WaitForState(job, v1::JOB_STATE_RUNNING);
    CHECK(running.allocation().nodes(0).gpu_indices(0) == 1);
    CHECK(running.allocation().nodes(0).gpu_share_mode() == v1::GPU_SHARE_MODE_MPS);
    CommandResult status = cluster.Cli({"status", std::to_string(job)});
    CHECK_THAT(status.out, Catch::Contains("30% and 10G of each GPU, through MPS as "));
    CHECK_THAT(status.out, Catch::Contains(": enforced (compute threads and pinned memory)"));
    CommandResult nodes = cluster.Cli({"nodes", "show", "mps-a"});
    CHECK_THAT(nodes.out, Catch::Contains("mps"));
    REQUIRE(cluster.WaitForEnd(job).state() == v1::JOB_STATE_COMPLETED);
    CommandResult log = cluster.Cli({"logs", std::to_string(job)});
    CHECK_THAT(log.out, Catch::Contains("THREADS=30 PINNED=0=10240M CVD=GPU-fake-mps-a-1 PIPE=" + mps / "pipe" +
                                        " SHARING=mps ENFORCED=1"));
    // The stand-in was started for the MPS GPU only.
    std::ifstream started(mps / "log/stand-in.log");
    std::string first;
    std::getline(started, first);
    CHECK_THAT(first, Catch::Contains("devices=GPU-fake-mps-a-1"));
  }
  // The agent stopped it as it stopped.
  std::ifstream log(mps / "log/stand-in.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("command: quit"));
}
