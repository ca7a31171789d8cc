// FGD packing of shares in the daemon (share_packing = "fgd"): where best
// fit would strand a GPU's leftover that the cluster's jobs cannot use, FGD
// opens a fresh GPU instead; with no mix to weigh against it is best fit.
// fill-fgd (share_packing = "fill-fgd") first keeps each node's GPUs
// fillable, by the shares the mix holds and the CPUs and memory they ask.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/core/policy/share_placement.h"
#include "daemon/core/share_mix.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using namespace gpusched::core;
using namespace gpusched::core::testing;

namespace {

// An up node of two time-sliced GPUs.
void AddSharedNode(ClusterState& cluster, const std::string& name, int64_t cpus = 64) {
  v1::NodeInfo info = MakeNode(name, 2, cpus);
  for (v1::GpuInfo& gpu : *info.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  cluster.UpsertNode(info);
  cluster.SetState(name, v1::NODE_STATE_UP, "");
}

// Node "n": one time-sliced GPU with 1000 - held_milli free (a job holds the
// rest) and one fresh.
ClusterState TwoGpus(int held_milli = 400) {
  ClusterState cluster;
  AddSharedNode(cluster, "n");
  v1::Allocation held;
  v1::NodeAllocation& part = *held.add_nodes();
  part.set_node("n");
  part.add_gpu_indices(0);
  part.set_gpu_share_milli(held_milli);
  part.set_gpu_mem_limit_mb(1000);
  part.set_gpu_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  REQUIRE(cluster.Allocate(1, held).ok());
  return cluster;
}

GangRequest Share(int milli) {
  GangRequest r;
  r.total_gpus = 1;
  r.gpu_share_milli = milli;
  return r;
}

int GpuOf(const PlacementResult& result) {
  INFO(result.reason());
  REQUIRE(result.placed());
  return result.allocation().nodes(0).gpu_indices(0);
}

// The node and GPUs of a placed share.
std::pair<std::string, std::vector<int>> Where(const PlacementResult& result) {
  INFO(result.reason());
  REQUIRE(result.placed());
  const v1::NodeAllocation& part = result.allocation().nodes(0);
  return {part.node(), std::vector<int>(part.gpu_indices().begin(), part.gpu_indices().end())};
}

}  // namespace

TEST_CASE("FGD keeps a leftover the mix can use: a 40% share opens a fresh GPU when the jobs ask for 50%") {
  ClusterState cluster = TwoGpus();
  // Best fit: GPU 0 (60% free) is the tightest, and leaves 20% no 50% job fits.
  CHECK(GpuOf(policy::PlaceShares(cluster, Share(400))) == 0);
  const ShareWeighing fgd =
      ShareWeighing::Of(SharePacking::kFgd, ShareMixOf({Share(500), Share(500), Share(500), Share(400)}));
  const PlacementResult placed = policy::PlaceShares(cluster, Share(400), fgd);
  CHECK(GpuOf(placed) == 1);
  CHECK(placed.allocation().policy() == "share fgd");
  // Where the mix holds only 20% jobs, GPU 0's 20% leftover is of use to
  // them: nothing grows, and best fit decides.
  const ShareWeighing small = ShareWeighing::Of(SharePacking::kFgd, ShareMixOf({Share(200)}));
  CHECK(GpuOf(policy::PlaceShares(cluster, Share(400), small)) == 0);
}

TEST_CASE("fill-fgd fills a GPU the mix can fill exactly where FGD keeps it open to the larger size") {
  // Jobs ask for 60% and 40%. A 30% share beside the 30% already on GPU 0
  // leaves 40%, which a 40% job fills to the brim; FGD counts that 40% as
  // lost to the 60% jobs and opens the fresh GPU, whose 70% left a 60% job
  // fills only to 90%.
  ClusterState cluster = TwoGpus(300);
  const sharing::TaskMix mix = ShareMixOf({Share(600), Share(600), Share(400), Share(400)});
  CHECK(GpuOf(policy::PlaceShares(cluster, Share(300), ShareWeighing::Of(SharePacking::kFgd, mix))) == 1);
  const PlacementResult placed =
      policy::PlaceShares(cluster, Share(300), ShareWeighing::Of(SharePacking::kFillFgd, mix));
  CHECK(GpuOf(placed) == 0);
  CHECK(placed.allocation().policy() == "share fill-fgd");
}

TEST_CASE("fill-fgd sends a CPU-hungry share to the node with CPUs left for the shares to come") {
  // Jobs ask for half a GPU and 2 CPUs. An 8-CPU half share on a-poor (12
  // CPUs) leaves 4 CPUs for 1.5 GPUs of shares that ask 6; another share
  // still fits there, so FGD sees no cost and takes the first name.
  ClusterState cluster;
  AddSharedNode(cluster, "a-poor", 12);
  AddSharedNode(cluster, "b-rich", 64);
  GangRequest expected = Share(500);
  expected.cpus_per_gpu = 2;
  const sharing::TaskMix mix = ShareMixOf({expected, expected, expected});
  GangRequest hungry = Share(500);
  hungry.cpus_per_gpu = 8;
  CHECK(Where(policy::PlaceShares(cluster, hungry, ShareWeighing::Of(SharePacking::kFgd, mix))).first == "a-poor");
  CHECK(Where(policy::PlaceShares(cluster, hungry, ShareWeighing::Of(SharePacking::kFillFgd, mix))).first == "b-rich");
}

TEST_CASE("fill-fgd counts the CPUs a node's exclusive free GPUs will need before it sends a CPU-hungry share there") {
  // a-mixed: one time-sliced GPU with half of it held, three exclusive GPUs
  // free, 20 CPUs; b-shared: two fresh time-sliced GPUs, 40 CPUs. Whole-GPU
  // jobs ask 12 CPUs a GPU. A half share fills a-mixed's shared GPU to the
  // brim, which FGD likes best; seen by that GPU alone, a-mixed has CPUs to
  // spare, but its exclusive GPUs will need 36 of them.
  ClusterState cluster;
  v1::NodeInfo mixed = MakeNode("a-mixed", 4, 20);
  mixed.mutable_gpus(0)->set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  cluster.UpsertNode(mixed);
  cluster.SetState("a-mixed", v1::NODE_STATE_UP, "");
  v1::Allocation held;
  v1::NodeAllocation& part = *held.add_nodes();
  part.set_node("a-mixed");
  part.add_gpu_indices(0);
  part.set_gpu_share_milli(500);
  part.set_gpu_mem_limit_mb(1000);
  part.set_gpu_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  REQUIRE(cluster.Allocate(1, held).ok());
  AddSharedNode(cluster, "b-shared", 40);
  GangRequest whole;
  whole.total_gpus = 1;
  whole.cpus_per_gpu = 12;
  GangRequest half = Share(500);
  half.cpus_per_gpu = 2;
  const sharing::TaskMix mix = ShareMixOf({whole, whole, half, half});
  GangRequest hungry = Share(500);
  hungry.cpus_per_gpu = 8;
  CHECK(Where(policy::PlaceShares(cluster, hungry, ShareWeighing::Of(SharePacking::kFgd, mix))).first == "a-mixed");
  CHECK(Where(policy::PlaceShares(cluster, hungry, ShareWeighing::Of(SharePacking::kFillFgd, mix))).first ==
        "b-shared");
}

TEST_CASE("spread puts a share on the GPU with the most share free, on the node with the most whole GPUs free") {
  ClusterState cluster = TwoGpus(600);  // node n: GPU 0 with 40% free, GPU 1 fresh
  AddSharedNode(cluster, "m");
  const ShareWeighing spread = ShareWeighing::Of(SharePacking::kSpread, {});
  // Best fit takes GPU 0 of n, the tightest; spread a fresh GPU of m, the
  // node with both GPUs whole (the last of equals: best fit's order reversed).
  CHECK(Where(policy::PlaceShares(cluster, Share(300))) == std::pair(std::string("n"), std::vector<int>{0}));
  const PlacementResult placed = policy::PlaceShares(cluster, Share(300), spread);
  CHECK(Where(placed) == std::pair(std::string("m"), std::vector<int>{1}));
  CHECK(placed.allocation().policy() == "share spread");
  // A share of two GPUs: both of m's rather than n's 40% beside a fresh one.
  GangRequest pair = Share(300);
  pair.total_gpus = 2;
  CHECK(Where(policy::PlaceShares(cluster, pair, spread)) == std::pair(std::string("m"), std::vector<int>{0, 1}));
  CHECK(Where(policy::PlaceShares(cluster, pair)) == std::pair(std::string("n"), std::vector<int>{0, 1}));
  // With m gone, spread on n takes its fresh GPU, best fit the shared one.
  cluster.SetState("m", v1::NODE_STATE_DOWN, "");
  CHECK(Where(policy::PlaceShares(cluster, Share(300), spread)) == std::pair(std::string("n"), std::vector<int>{1}));
}

TEST_CASE("the FGD mix is what each job asks of one node; MIG jobs are left out") {
  GangRequest gang;
  gang.total_gpus = 16;
  gang.nodes = 2;
  gang.gpus_per_node = 8;
  GangRequest mig;
  mig.total_gpus = 1;
  mig.mig_profile = "3g.40gb";
  const sharing::TaskMix mix = ShareMixOf({Share(300), Share(300), gang, mig});
  REQUIRE(mix.tasks.size() == 2);
  CHECK(mix.total == 3);
  for (size_t i = 0; i < mix.tasks.size(); ++i) {
    if (mix.tasks[i].gpu_milli == 300) CHECK(mix.counts[i] == 2);
    if (mix.tasks[i].gpu_milli == 1000) CHECK(mix.tasks[i].num_gpus == 8);
  }
}

TEST_CASE("a core with share_packing spread, fgd or fill-fgd places shares by it") {
  for (SharePacking packing : {SharePacking::kSpread, SharePacking::kFgd, SharePacking::kFillFgd}) {
    INFO(SharePackingName(packing));
    CoreOptions options = CoreHarness::Options();
    options.share_packing = packing;
    CoreHarness h(options);
    h.AddNode("n", 2, v1::GPU_SHARE_MODE_TIMESLICE);
    v1::JobSpec first = GpuJob(1);
    first.mutable_resources()->set_gpu_share_milli(400);
    const uint64_t a = h.Submit(first);
    h.Pass();
    REQUIRE(h.StateOf(a) == v1::JOB_STATE_STARTING);
    CHECK(h.Persisted(a).allocation().policy() == absl::StrCat("share ", SharePackingName(packing)));
  }
}
