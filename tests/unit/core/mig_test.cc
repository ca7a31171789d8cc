// Jobs that ask for MIG instances (resources.mig_profile) through the
// scheduling core: placed by profile on one node, never sharing an instance,
// and MIG GPUs never given whole.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "daemon/core/backfill.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using namespace gpusched::core::testing;
using v1::DaemonMessage;

namespace {

void AddMig(v1::GpuInfo& gpu, int index, const std::string& profile, int64_t memory_mb) {
  gpu.set_mig_enabled(true);
  gpu.set_share_mode(v1::GPU_SHARE_MODE_MIG);
  v1::MigInstance& mig = *gpu.add_mig_instances();
  mig.set_index(index);
  mig.set_uuid(absl::StrCat("MIG-", gpu.index(), "-", index));
  mig.set_profile(profile);
  mig.set_memory_mb(memory_mb);
}

// GPU 0: two 3g.40gb; GPU 1: seven 1g.10gb; GPUs 2 and 3 whole.
void AddMigNode(CoreHarness& h, const std::string& name) {
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode(name, 4);
  v1::NodeInfo& node = *reg.mutable_node();
  for (int k = 0; k < 2; ++k) AddMig(*node.mutable_gpus(0), k, "3g.40gb", 40192);
  for (int k = 0; k < 7; ++k) AddMig(*node.mutable_gpus(1), k, "1g.10gb", 9728);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
}

v1::JobSpec MigJob(const std::string& profile, int count = 1) {
  v1::JobSpec spec = GpuJob(count);
  spec.mutable_resources()->set_mig_profile(profile);
  return spec;
}

const v1::NodeAllocation& PartOf(CoreHarness& h, uint64_t job) { return h.Persisted(job).allocation().nodes(0); }

}  // namespace

TEST_CASE("a MIG job gets a free instance of its profile; the next gets the other; one more waits, saying why") {
  CoreHarness h;
  AddMigNode(h, "m");
  const uint64_t a = h.Submit(MigJob("3g.40gb"));
  const uint64_t b = h.Submit(MigJob("3G.40GB"));  // profiles match in any case
  const uint64_t c = h.Submit(MigJob("3g.40gb"));
  h.Pass();
  REQUIRE(h.StateOf(a) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(b) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(c) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(c).reason(),
             Catch::StartsWith("waits for 1 MIG instance of 3g.40gb on one node with the CPUs and memory for it; the "
                               "most free on any such node now is 0"));
  REQUIRE(PartOf(h, a).mig_slices_size() == 1);
  CHECK(PartOf(h, a).mig_slices(0).uuid() == "MIG-0-0");
  CHECK(PartOf(h, b).mig_slices(0).uuid() == "MIG-0-1");
  CHECK(PartOf(h, a).gpu_indices().empty());
  CHECK(PartOf(h, a).gpu_share_mode() == v1::GPU_SHARE_MODE_MIG);
  const auto launches = h.Sent("m", DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].launch().mig_slices(0).uuid() == "MIG-0-0");
  CHECK(h.Persisted(a).reason() == "placed on m MIG 3g.40gb on GPU 0 (MIG device 0)");

  // Given back, the instance goes to the job that waited.
  h.StartOnAllNodes(a);
  h.Report("m", a, v1::JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(c) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, c).mig_slices(0).uuid() == "MIG-0-0");
}

TEST_CASE("several MIG instances of one job come from one node, from the GPU with the fewest free first") {
  CoreHarness h;
  AddMigNode(h, "m");
  const uint64_t three = h.Submit(MigJob("1g.10gb", 3));
  h.Pass();
  REQUIRE(h.StateOf(three) == v1::JOB_STATE_STARTING);
  REQUIRE(PartOf(h, three).mig_slices_size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(PartOf(h, three).mig_slices(i).mig_index() == i);
  // Three ranks, one per instance.
  CHECK(h.Sent("m", DaemonMessage::kLaunch)[0].launch().world_size() == 3);
}

TEST_CASE("whole-GPU jobs never get a MIG GPU: a gang larger than the whole GPUs is refused at submit") {
  CoreHarness h;
  AddMigNode(h, "m");
  const uint64_t two = h.Submit(GpuJob(2));
  h.Pass();
  REQUIRE(h.StateOf(two) == v1::JOB_STATE_STARTING);
  CHECK(PartOf(h, two).gpu_indices(0) == 2);
  CHECK(PartOf(h, two).gpu_indices(1) == 3);
  auto three = h.core.Submit(GpuJob(3), "", h.fx);
  CHECK_FALSE(three.ok());
}

TEST_CASE("a MIG profile no node has, or more instances than a node has, is refused at submit, naming the field") {
  CoreHarness h;
  AddMigNode(h, "m");
  auto absent = h.core.Submit(MigJob("2g.20gb"), "", h.fx);
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.status().message() ==
        "resources.mig_profile: no node of this cluster has MIG instances of 2g.20gb (it has: 1g.10gb, 3g.40gb)");
  auto too_many = h.core.Submit(MigJob("3g.40gb", 3), "", h.fx);
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(std::string(too_many.status().message()),
             Catch::Contains("resources.gpus: 3 MIG instances of 3g.40gb on one node"));
  v1::JobSpec mixed = MigJob("3g.40gb");
  mixed.mutable_resources()->set_gpu_share_milli(300);
  auto both = h.core.Submit(mixed, "", h.fx);
  REQUIRE_FALSE(both.ok());
  CHECK_THAT(std::string(both.status().message()),
             Catch::Contains("resources.mig_profile: a MIG instance is not shared"));
  auto garbage = h.core.Submit(MigJob("3g 40gb;rm"), "", h.fx);
  REQUIRE_FALSE(garbage.ok());
  CHECK_THAT(std::string(garbage.status().message()), Catch::Contains("is not a MIG profile name"));
}

TEST_CASE("the accounting refuses a MIG instance held by another job or gone from the GPU") {
  CoreHarness h;
  AddMigNode(h, "m");
  core::ClusterState cluster = h.core.cluster();
  auto slice = [](int mig_index, const std::string& uuid) {
    v1::Allocation a;
    v1::NodeAllocation& n = *a.add_nodes();
    n.set_node("m");
    v1::MigSlice& s = *n.add_mig_slices();
    s.set_gpu_index(0);
    s.set_mig_index(mig_index);
    s.set_uuid(uuid);
    return a;
  };
  REQUIRE(cluster.Allocate(1, slice(0, "MIG-0-0")).ok());
  CHECK(cluster.Allocate(2, slice(0, "MIG-0-0")).message() == "MIG instance 0 of GPU 0 of m is held by job 1");
  CHECK(cluster.Allocate(2, slice(1, "MIG-stale")).message() == "GPU 0 of m has no MIG instance 1 MIG-stale");
  v1::Allocation whole;
  whole.add_nodes()->set_node("m");
  whole.mutable_nodes(0)->add_gpu_indices(0);
  CHECK(cluster.Allocate(3, whole).message() == "GPU 0 of m is in MIG mode");
}

TEST_CASE("a GPU partitioned anew keeps the holders of the instances still there, by UUID") {
  CoreHarness h;
  AddMigNode(h, "m");
  const uint64_t a = h.Submit(MigJob("3g.40gb"));
  const uint64_t b = h.Submit(MigJob("3g.40gb"));
  h.Pass();
  REQUIRE(h.StateOf(b) == v1::JOB_STATE_STARTING);
  const core::NodeSlot* slot = h.core.cluster().Find("m");
  REQUIRE(slot->mig_owner[0] == std::vector<uint64_t>{a, b});
  // The agent comes back with instance 0 gone and instance 1 now first.
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode("m", 4);
  AddMig(*reg.mutable_node()->mutable_gpus(0), 1, "3g.40gb", 40192);
  AddMig(*reg.mutable_node()->mutable_gpus(0), 2, "3g.40gb", 40192);
  core::ClusterState cluster = h.core.cluster();
  cluster.UpsertNode(reg.node());
  CHECK(cluster.Find("m")->mig_owner[0] == std::vector<uint64_t>{b, 0});
}

TEST_CASE("a MIG job's reservation holds its instances that are free now, and gives them back whole") {
  core::ClusterState cluster;
  v1::NodeInfo info = MakeNode("m", 4);
  for (int k = 0; k < 7; ++k) AddMig(*info.mutable_gpus(1), k, "1g.10gb", 9728);
  cluster.UpsertNode(info);
  cluster.SetState("m", v1::NODE_STATE_UP, "");
  auto slices = [](std::vector<int> instances) {
    v1::Allocation a;
    v1::NodeAllocation& part = *a.add_nodes();
    part.set_node("m");
    for (int k : instances) {
      v1::MigSlice& mig = *part.add_mig_slices();
      mig.set_gpu_index(1);
      mig.set_mig_index(k);
      mig.set_uuid(absl::StrCat("MIG-1-", k));
    }
    return a;
  };
  REQUIRE(cluster.Allocate(5, slices({0, 1, 2, 3, 4})).ok());  // busy
  core::Reservation reservation;
  reservation.job_id = 7;
  reservation.allocation = slices({3, 4, 5});  // 3 and 4 once job 5 ends; 5 is free now
  {
    core::ReservationHold hold(cluster, reservation);
    CHECK_FALSE(cluster.Allocate(9, slices({5})).ok());
    CHECK(cluster.Allocate(9, slices({6})).ok());
  }
  CHECK(cluster.Allocate(10, slices({5})).ok());
}
