// Shares of GPUs that their node shares through MPS: one user per GPU at a
// time, the mechanism a job asks for, a job's GPUs all shared one way.
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using namespace gpusched::core::testing;
using v1::DaemonMessage;

namespace {

// A node whose GPUs are shared as `modes` says, by position.
void AddNode(CoreHarness& h, const std::string& name, const std::vector<v1::GpuShareMode>& modes) {
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode(name, static_cast<int>(modes.size()));
  for (size_t i = 0; i < modes.size(); ++i)
    reg.mutable_node()->mutable_gpus(static_cast<int>(i))->set_share_mode(modes[i]);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
}

constexpr v1::GpuShareMode kMps = v1::GPU_SHARE_MODE_MPS;
constexpr v1::GpuShareMode kSliced = v1::GPU_SHARE_MODE_TIMESLICE;

v1::JobSpec ShareJob(const std::string& user, int milli, int gpus = 1,
                     v1::GpuShareMode how = v1::GPU_SHARE_MODE_UNSPECIFIED) {
  v1::JobSpec spec = GpuJob(gpus);
  spec.set_user(user);
  spec.mutable_resources()->set_gpu_share_milli(milli);
  spec.mutable_resources()->set_gpu_sharing(how);
  return spec;
}

const v1::NodeAllocation& PartOf(CoreHarness& h, uint64_t job) { return h.Persisted(job).allocation().nodes(0); }

}  // namespace

TEST_CASE("an MPS GPU serves one user at a time: another user's share waits until the GPU is free of the first") {
  CoreHarness h;
  AddNode(h, "m", {kMps});
  const uint64_t alice = h.Submit(ShareJob("alice", 300));
  const uint64_t bob = h.Submit(ShareJob("bob", 300));
  const uint64_t alice2 = h.Submit(ShareJob("alice", 300));
  h.Pass();
  CHECK(h.StateOf(alice) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(bob) == v1::JOB_STATE_PENDING);
  // The same user's next job shares the GPU with the first.
  CHECK(h.StateOf(alice2) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, alice).gpu_share_mode() == kMps);
  CHECK(PartOf(h, alice).mps_user() == "alice");
  const auto launches = h.Sent("m", DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].launch().gpu_share_mode() == kMps);
  CHECK(h.core.cluster().Find("m")->gpu_shares[0].mps_user == "alice");

  h.StartOnAllNodes(alice);
  h.StartOnAllNodes(alice2);
  h.Report("m", alice, v1::JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(bob) == v1::JOB_STATE_PENDING);
  h.Report("m", alice2, v1::JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(bob) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, bob).mps_user() == "bob");
}

TEST_CASE("another user's share takes a fresh MPS GPU rather than the one best fit would give it") {
  CoreHarness h;
  AddNode(h, "m", {kMps, kMps});
  const uint64_t alice = h.Submit(ShareJob("alice", 300));
  h.Pass();
  const uint64_t bob = h.Submit(ShareJob("bob", 300));
  const uint64_t alice2 = h.Submit(ShareJob("alice", 300));
  h.Pass();
  REQUIRE(h.StateOf(bob) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(alice2) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, bob).gpu_indices(0) != PartOf(h, alice).gpu_indices(0));
  CHECK(PartOf(h, alice2).gpu_indices(0) == PartOf(h, alice).gpu_indices(0));
}

TEST_CASE("time-sliced GPUs take any user's shares, side by side") {
  CoreHarness h;
  AddNode(h, "t", {kSliced});
  const uint64_t alice = h.Submit(ShareJob("alice", 300));
  const uint64_t bob = h.Submit(ShareJob("bob", 300));
  h.Pass();
  CHECK(h.StateOf(alice) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(bob) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, bob).gpu_share_mode() == kSliced);
  CHECK(PartOf(h, bob).mps_user().empty());
}

TEST_CASE("a job that asks for MPS gets only MPS GPUs, one that asks for time-slicing only time-sliced ones") {
  CoreHarness h;
  AddNode(h, "mixed", {kSliced, kMps});
  const uint64_t mps = h.Submit(ShareJob("alice", 200, 1, kMps));
  const uint64_t sliced = h.Submit(ShareJob("alice", 200, 1, kSliced));
  h.Pass();
  REQUIRE(h.StateOf(mps) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(sliced) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, mps).gpu_indices(0) == 1);
  CHECK(PartOf(h, sliced).gpu_indices(0) == 0);
  // The MPS GPU has room, but not for another user: the job waits, and says
  // for what.
  const uint64_t bob = h.Submit(ShareJob("bob", 200, 1, kMps));
  h.Pass();
  CHECK(h.StateOf(bob) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(bob).reason(), Catch::Contains("waits for 1 GPU with 20% free shared by mps"));
}

TEST_CASE("a job's GPUs are all shared one way: two GPUs from a node with one of each way wait for more") {
  CoreHarness h;
  AddNode(h, "mixed", {kSliced, kMps, kMps});
  const uint64_t two = h.Submit(ShareJob("alice", 300, 2));
  h.Pass();
  REQUIRE(h.StateOf(two) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, two).gpu_share_mode() == kMps);
  CHECK(PartOf(h, two).gpu_indices(0) == 1);
  CHECK(PartOf(h, two).gpu_indices(1) == 2);
  // Three GPUs alike this node never has.
  auto three = h.core.Submit(ShareJob("alice", 300, 3), "", h.fx);
  REQUIRE_FALSE(three.ok());
  CHECK_THAT(std::string(three.status().message()),
             Catch::Contains("all shared one way, but the most any node could give is 2"));
}

TEST_CASE("asking for a sharing mechanism no node offers is refused at submit, naming the field") {
  CoreHarness h;
  AddNode(h, "t", {kSliced});
  auto refused = h.core.Submit(ShareJob("alice", 300, 1, kMps), "", h.fx);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "resources.gpu_sharing: no node of this cluster shares its GPUs by mps (agent gpu_share_mode)");
  auto without_share = GpuJob(1);
  without_share.mutable_resources()->set_gpu_sharing(kMps);
  auto invalid = h.core.Submit(without_share, "", h.fx);
  REQUIRE_FALSE(invalid.ok());
  CHECK_THAT(std::string(invalid.status().message()), Catch::Contains("resources.gpu_sharing"));
}

TEST_CASE("the accounting refuses another user's share on an MPS GPU, and a share placed for another mechanism") {
  CoreHarness h;
  AddNode(h, "mixed", {kMps, kSliced});
  core::ClusterState cluster = h.core.cluster();
  auto part = [](int gpu, v1::GpuShareMode how, const std::string& user) {
    v1::Allocation a;
    v1::NodeAllocation& n = *a.add_nodes();
    n.set_node("mixed");
    n.add_gpu_indices(gpu);
    n.set_gpu_share_milli(100);
    n.set_gpu_mem_limit_mb(1000);
    n.set_gpu_share_mode(how);
    n.set_mps_user(user);
    return a;
  };
  REQUIRE(cluster.Allocate(1, part(0, kMps, "alice")).ok());
  absl::Status other_user = cluster.Allocate(2, part(0, kMps, "bob"));
  CHECK(other_user.message() == "GPU 0 of mixed serves user alice through MPS, not bob");
  absl::Status wrong_way = cluster.Allocate(3, part(1, kMps, "alice"));
  CHECK(wrong_way.message() == "GPU 1 of mixed is shared by timeslice, not mps");
  // Given back, the GPU serves whoever comes next.
  cluster.Release(1, part(0, kMps, "alice"));
  CHECK(cluster.Allocate(2, part(0, kMps, "bob")).ok());
}
