// GPU sharing through the real daemon, agents and CLI: two 30% jobs on one
// time-sliced GPU at once with their limits in their environment, a 50% job
// waiting with a reason, a whole-GPU job kept off the shared GPU.
#include <catch2/catch.hpp>
#include <string>

#include "tests/integration/test_cluster.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::CommandResult;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

TEST_CASE("two 30% jobs share a time-sliced GPU; a 50% job waits; a whole GPU goes elsewhere", "[integration]") {
  TestCluster cluster({{"shared-a", 1, {"--gpu-share-mode", "timeslice"}}, {"exclusive-b", 1}});
  const std::vector<std::string> share_job = {
      "--gpu-share", "30%", "--", "/bin/sh", "-c",
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
