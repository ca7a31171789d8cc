// MIG through the real daemon, agent and CLI, on a node whose GPUs come from
// the fake libnvidia-ml's a100-mig machine: GPU 0 split into two 3g.40gb,
// GPU 1 into seven 1g.10gb, GPUs 2 and 3 whole.
#include <catch2/catch.hpp>
#include <string>

#include "tests/integration/test_cluster.h"

using gpusched::testing::CommandResult;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

TEST_CASE("MIG jobs run on their instances; whole-GPU jobs on the whole GPUs; a missing profile is refused",
          "[integration]") {
  TestCluster cluster({{"mig-a",
                        0,
                        {"--gpu-source", "nvml", "--nvml-library", GPUSCHED_FAKE_NVML, "--calibrate-on-start", "false"},
                        {"GPUSCHED_FAKE_NVML_MACHINE=a100-mig"}}});
  const std::vector<std::string> print = {"--", "/bin/sh", "-c",
                                          "echo CVD=$CUDA_VISIBLE_DEVICES SHARING=$GPUSCHED_GPU_SHARING "
                                          "PROFILE=$GPUSCHED_MIG_PROFILE RANK=$RANK; sleep 2"};
  auto with = [&](std::vector<std::string> options) {
    options.insert(options.end(), print.begin(), print.end());
    return options;
  };
  const uint64_t one = cluster.Submit(with({"--mig", "3g.40gb"}));
  const uint64_t two = cluster.Submit(with({"--mig", "1g.10gb", "--gpus", "2"}));
  const uint64_t whole = cluster.Submit(with({"--gpus", "2"}));
  for (uint64_t job : {one, two, whole}) REQUIRE(cluster.WaitForEnd(job).state() == v1::JOB_STATE_COMPLETED);

  CHECK_THAT(cluster.Cli({"logs", std::to_string(one)}).out,
             Catch::Contains("CVD=MIG-3g40gb00-0000-4000-8000-000000000000 SHARING=mig PROFILE=3g.40gb RANK=0"));
  // Two ranks, each on its own instance.
  CHECK_THAT(
      cluster.Cli({"logs", std::to_string(two)}).out,
      Catch::Contains("CVD=MIG-1g10gb00-0000-4000-8000-000000000000 SHARING=mig PROFILE=1g.10gb,1g.10gb RANK=0"));
  CHECK_THAT(
      cluster.Cli({"logs", std::to_string(two), "--rank", "1"}).out,
      Catch::Contains("CVD=MIG-1g10gb00-0000-4000-8000-000000000001 SHARING=mig PROFILE=1g.10gb,1g.10gb RANK=1"));
  const v1::Job whole_done = cluster.GetJob(whole);
  CHECK(whole_done.allocation().nodes(0).gpu_indices(0) == 2);
  CHECK(whole_done.allocation().nodes(0).gpu_indices(1) == 3);

  CommandResult status = cluster.Cli({"status", std::to_string(one)});
  CHECK_THAT(status.out, Catch::Contains("mig-a: 3g.40gb on GPU 0 (MIG-3g40gb00-0000-4000-8000-000000000000)"));
  CommandResult nodes = cluster.Cli({"nodes", "show", "mig-a"});
  CHECK_THAT(nodes.out, Catch::Contains("3g.40gb,3g.40gb"));

  CommandResult refused = cluster.Cli({"submit", "--mig", "2g.20gb", "--", "/bin/true"});
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.err, Catch::Contains("no node of this cluster has MIG instances of 2g.20gb (it has: 1g.10gb, "
                                          "3g.40gb)"));
}

TEST_CASE("a MIG job that is cancelled gives its instance back to the next", "[integration]") {
  TestCluster cluster({{"mig-a",
                        0,
                        {"--gpu-source", "nvml", "--nvml-library", GPUSCHED_FAKE_NVML, "--calibrate-on-start", "false"},
                        {"GPUSCHED_FAKE_NVML_MACHINE=a100-mig"}}});
  const uint64_t a = cluster.Submit({"--mig", "3g.40gb", "--", "sleep", "60"});
  const uint64_t b = cluster.Submit({"--mig", "3g.40gb", "--", "sleep", "60"});
  cluster.WaitForState(a, v1::JOB_STATE_RUNNING);
  cluster.WaitForState(b, v1::JOB_STATE_RUNNING);
  const uint64_t c = cluster.Submit({"--mig", "3g.40gb", "--", "/bin/true"});
  CHECK(cluster.GetJob(c).state() == v1::JOB_STATE_PENDING);
  REQUIRE(cluster.Cli({"cancel", std::to_string(a)}).exit_code == 0);
  const v1::Job done = cluster.WaitForEnd(c);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(done.allocation().nodes(0).mig_slices(0).mig_index() ==
        cluster.GetJob(a).allocation().nodes(0).mig_slices(0).mig_index());
  REQUIRE(cluster.Cli({"cancel", std::to_string(b)}).exit_code == 0);
}
