// Jobs that share GPUs (resources.gpu_share_milli) through the scheduling
// core: what shares a GPU, what never does, what waits and why, and what a
// job's end gives back.
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using namespace gpusched::core::testing;
using v1::DaemonMessage;
using v1::JobUpdate;

namespace {

// A node whose GPUs jobs may share by time-slicing (agent gpu_share_mode).
void AddSharedNode(CoreHarness& h, const std::string& name, int gpus) {
  h.AddNode(name, gpus, v1::GPU_SHARE_MODE_TIMESLICE);
}

v1::JobSpec ShareJob(int milli, int gpus = 1, int64_t mem_limit_mb = 0) {
  v1::JobSpec spec = GpuJob(gpus);
  spec.mutable_resources()->set_gpu_share_milli(milli);
  spec.mutable_resources()->set_gpu_mem_limit_mb(mem_limit_mb);
  return spec;
}

const v1::NodeAllocation& PartOf(CoreHarness& h, uint64_t job) { return h.Persisted(job).allocation().nodes(0); }

int FreeShareOf(CoreHarness& h, const std::string& node, int gpu) {
  return h.core.cluster().Find(node)->FreeShareMilli(gpu);
}

}  // namespace

TEST_CASE("two 30% jobs run on one GPU at once; a whole-GPU job takes another GPU") {
  CoreHarness h;
  AddSharedNode(h, "s", 2);
  const uint64_t a = h.Submit(ShareJob(300));
  const uint64_t b = h.Submit(ShareJob(300));
  const uint64_t whole = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(h.StateOf(a) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(b) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(whole) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, a).gpu_indices(0) == PartOf(h, b).gpu_indices(0));
  CHECK(PartOf(h, whole).gpu_indices(0) != PartOf(h, a).gpu_indices(0));
  CHECK(PartOf(h, a).gpu_share_milli() == 300);
  // Without a limit, the job holds the same share of the GPU's memory.
  CHECK(PartOf(h, a).gpu_mem_limit_mb() == 81559 * 300 / 1000);
  CHECK(FreeShareOf(h, "s", PartOf(h, a).gpu_indices(0)) == 400);
  // The agent is told the share and the memory with the launch.
  const auto launches = h.Sent("s", DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 3);
  CHECK(launches[0].launch().gpu_share_milli() == 300);
  CHECK(launches[0].launch().gpu_mem_limit_mb() == 24467);
  CHECK(launches[2].launch().gpu_share_milli() == 0);
  CHECK(h.Persisted(a).reason() == "placed on s GPUs 0 (30% and 24467 MB of each, timeslice)");
}

TEST_CASE("a whole-GPU job never lands on a GPU that jobs share, even one with most of it free") {
  CoreHarness h;
  AddSharedNode(h, "s", 1);
  const uint64_t small = h.Submit(ShareJob(100));
  h.Pass();
  REQUIRE(h.StateOf(small) == v1::JOB_STATE_STARTING);
  const uint64_t whole = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(h.StateOf(whole) == v1::JOB_STATE_PENDING);
}

TEST_CASE("a share that does not fit waits, saying what for, and starts once a share is given back") {
  CoreHarness h;
  AddSharedNode(h, "s", 1);
  const uint64_t a = h.Submit(ShareJob(300));
  const uint64_t b = h.Submit(ShareJob(300));
  h.Pass();
  h.StartOnAllNodes(a);
  h.StartOnAllNodes(b);
  const uint64_t half = h.Submit(ShareJob(500));
  h.Pass();
  CHECK(h.StateOf(half) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(half).reason(),
             Catch::Contains("waits for 1 GPU with 50% free and the memory with it on one node") &&
                 Catch::Contains("the most any such node has now is 0"));
  // Cancel gives back exactly the share it held.
  REQUIRE(h.core.Cancel(a, "", h.fx).ok());
  h.Report("s", a, JobUpdate::KIND_EXITED, 128 + 15);
  CHECK(FreeShareOf(h, "s", 0) == 700);
  h.Pass();
  CHECK(h.StateOf(half) == v1::JOB_STATE_STARTING);
  CHECK(FreeShareOf(h, "s", 0) == 200);
  h.Report("s", b, JobUpdate::KIND_EXITED, 0);
  h.Report("s", half, JobUpdate::KIND_EXITED, 0);
  // Nobody shares it any more: a whole-GPU job may have it again.
  CHECK(FreeShareOf(h, "s", 0) == 1000);
  CHECK(h.core.cluster().Find("s")->FreeGpus() == 1);
}

TEST_CASE("memory limits are kept per GPU: two 50 GB jobs do not share an 80 GB GPU") {
  CoreHarness h;
  AddSharedNode(h, "s", 2);
  const uint64_t a = h.Submit(ShareJob(200, 1, 50000));
  const uint64_t b = h.Submit(ShareJob(200, 1, 50000));
  h.Pass();
  REQUIRE(h.StateOf(a) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(b) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, a).gpu_indices(0) != PartOf(h, b).gpu_indices(0));
  CHECK(PartOf(h, a).gpu_mem_limit_mb() == 50000);
}

TEST_CASE("a share on several GPUs takes distinct GPUs of one node, the most shared first") {
  CoreHarness h;
  AddSharedNode(h, "s", 4);
  const uint64_t first = h.Submit(ShareJob(500));
  h.Pass();
  const int shared = PartOf(h, first).gpu_indices(0);
  const uint64_t pair = h.Submit(ShareJob(400, 2));
  h.Pass();
  REQUIRE(h.StateOf(pair) == v1::JOB_STATE_STARTING);
  const auto& part = PartOf(h, pair);
  REQUIRE(part.gpu_indices_size() == 2);
  CHECK(part.gpu_indices(0) != part.gpu_indices(1));
  CHECK((part.gpu_indices(0) == shared || part.gpu_indices(1) == shared));
}

TEST_CASE("shares never go to a node that does not share its GPUs") {
  CoreHarness h;
  h.AddNode("exclusive", 4);
  auto refused = h.core.Submit(ShareJob(300), "", h.fx);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "resources.gpu_share_milli: no node of this cluster shares its GPUs (an operator sets gpu_share_mode in the "
        "agents' agent.toml)");
  AddSharedNode(h, "s", 1);
  const uint64_t job = h.Submit(ShareJob(300));
  h.Pass();
  CHECK(PartOf(h, job).node() == "s");
}

TEST_CASE("a share the cluster could never give is refused at submit, naming the field") {
  CoreHarness h;
  AddSharedNode(h, "s", 2);
  auto too_much_memory = h.core.Submit(ShareJob(300, 1, 90000), "", h.fx);
  REQUIRE_FALSE(too_much_memory.ok());
  CHECK(too_much_memory.status().message() ==
        "resources.gpu_mem_limit_mb: 90000 MB of one GPU, but the largest shared GPU has 81559 MB");
  auto too_many = h.core.Submit(ShareJob(300, 3), "", h.fx);
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.status().message() ==
        "resources.gpus: 3 GPUs with a share on one node (and its CPUs and memory), all shared one way, but the most "
        "any node could give is 2");
  for (auto [milli, message] :
       {std::pair{0, ""}, std::pair{1001, "resources.gpu_share_milli: must be <= 1000, got 1001"},
        std::pair{-5, "resources.gpu_share_milli: must be >= 1, got -5"}}) {
    if (milli == 0) continue;
    auto bad = h.core.Submit(ShareJob(milli), "", h.fx);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message() == message);
  }
  v1::JobSpec spread = ShareJob(300, 2);
  spread.mutable_resources()->set_nodes(2);
  auto two_nodes = h.core.Submit(spread, "", h.fx);
  REQUIRE_FALSE(two_nodes.ok());
  CHECK(two_nodes.status().message() == "resources.nodes: a job with a GPU share runs on one node, got 2");
  v1::JobSpec limit_only = GpuJob(1);
  limit_only.mutable_resources()->set_gpu_mem_limit_mb(1000);
  auto no_share = h.core.Submit(limit_only, "", h.fx);
  REQUIRE_FALSE(no_share.ok());
  CHECK(no_share.status().message() ==
        "resources.gpu_mem_limit_mb: a GPU memory limit goes with a GPU share: ask for gpu_share_milli too");
}

TEST_CASE("a node that fails gives back the shares its jobs held") {
  CoreHarness h;
  AddSharedNode(h, "s", 1);
  const uint64_t a = h.Submit(ShareJob(300));
  h.Pass();
  h.StartOnAllNodes(a);
  CHECK(FreeShareOf(h, "s", 0) == 700);
  h.core.AgentDisconnected("s", h.fx);
  h.clock.Advance(absl::Hours(1));
  h.Pass();
  CHECK(h.StateOf(a) != v1::JOB_STATE_RUNNING);
  CHECK(h.core.cluster().Find("s")->gpu_shares[0].jobs.empty());
}
