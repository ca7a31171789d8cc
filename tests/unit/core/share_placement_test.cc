// Where a share of a GPU goes among equally good fits: on the node with the
// fewest whole GPUs free, and on it the GPU whose NVLink peers a gang would
// miss least, so that shares leave idle nodes and NVLink islands whole.
#include "daemon/core/policy/share_placement.h"

#include <catch2/catch.hpp>

#include "tests/unit/core/policy_test_cluster.h"

using namespace gpusched;
using namespace gpusched::core;
using namespace gpusched::core::policy_testing;

namespace {

void AddTimeSliced(ClusterState& cluster, const std::string& name, const Machine& machine) {
  v1::NodeInfo info = NodeInfoFor(name, machine);
  for (v1::GpuInfo& gpu : *info.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  AddUpNode(cluster, info);
}

GangRequest Share(int milli, int64_t gpus = 1) {
  GangRequest r = Gpus(gpus);
  r.gpu_share_milli = milli;
  r.cpus_per_gpu = 1;
  return r;
}

const v1::NodeAllocation& Placed(const PlacementResult& result) {
  INFO(result.reason());
  REQUIRE(result.placed());
  return result.allocation().nodes(0);
}

}  // namespace

TEST_CASE("a share goes to a fresh GPU of the busiest node, leaving an idle node whole for a gang") {
  for (int gpus : {1, 2}) {
    ClusterState cluster;
    AddTimeSliced(cluster, "a-idle", kDgx1);
    AddTimeSliced(cluster, "b-busy", kDgx1);
    HoldFirst(cluster, "b-busy", 6, 1);
    const PlacementResult result = policy::PlaceShares(cluster, Share(300, gpus));
    INFO(gpus << " GPU(s)");
    CHECK(Placed(result).node() == "b-busy");
  }
}

TEST_CASE("on a node, a share takes the GPU whose free NVLink peers are fewest") {
  // DGX-1's hybrid cube mesh: GPU 4 is NVLinked to 0, 5, 6 and 7. With 5-7
  // held, GPU 4 has one free NVLink peer; GPU 0 still has four (1-4).
  ClusterState cluster;
  AddTimeSliced(cluster, "dgx1", kDgx1);
  Hold(cluster, "dgx1", {5, 6, 7}, 1);
  const NodeSlot& slot = *cluster.Find("dgx1");
  CHECK(slot.FreePeerGbps(4) < slot.FreePeerGbps(0));
  CHECK(Placed(policy::PlaceShares(cluster, Share(300))).gpu_indices(0) == 4);
  // The next share fits best on the GPU already shared.
  v1::Allocation first = policy::PlaceShares(cluster, Share(300)).allocation();
  REQUIRE(cluster.Allocate(3, first).ok());
  CHECK(Placed(policy::PlaceShares(cluster, Share(300))).gpu_indices(0) == 4);
}
