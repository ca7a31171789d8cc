// The per-kind data placement scans read instead of each node: nodes of one
// hardware kind share it, and a constraint matched per kind gives what it
// gives matched per node.

#include <catch2/catch.hpp>

#include "daemon/core/cluster_state.h"
#include "daemon/core/policy/node_fit.h"
#include "tests/unit/core/test_cluster.h"

namespace gpusched::core {
namespace {

using testing::MakeNode;

v1::NodeInfo WithGpus(v1::NodeInfo info, const std::string& model, int64_t memory_mb) {
  for (v1::GpuInfo& gpu : *info.mutable_gpus()) {
    gpu.set_model(model);
    gpu.set_memory_mb(memory_mb);
  }
  return info;
}

TEST_CASE("nodes of one hardware kind share a GPU kind and a GPU graph") {
  ClusterState cluster;
  cluster.UpsertNode(MakeNode("h1", 8));
  cluster.UpsertNode(MakeNode("h2", 8));
  cluster.UpsertNode(WithGpus(MakeNode("a1", 8), "NVIDIA A100-SXM4-40GB", 40960));
  cluster.UpsertNode(MakeNode("small", 4));
  const NodeSlot& h1 = *cluster.Find("h1");
  const NodeSlot& h2 = *cluster.Find("h2");
  const NodeSlot& a1 = *cluster.Find("a1");
  const NodeSlot& small = *cluster.Find("small");

  CHECK(h1.gpu_kind == h2.gpu_kind);
  CHECK(h1.gpu_graph == h2.gpu_graph);
  CHECK(a1.gpu_kind != h1.gpu_kind);
  CHECK(small.gpu_kind != h1.gpu_kind);
  CHECK(small.gpu_graph != h1.gpu_graph);
  CHECK(cluster.gpu_kinds().size() == 3);
  CHECK(cluster.gpu_kinds()[h1.gpu_kind] == h1.gpus);

  SECTION("re-registering with other GPUs moves a node to another kind; its old kind stays for the others") {
    cluster.UpsertNode(WithGpus(MakeNode("h2", 8), "NVIDIA A100-SXM4-40GB", 40960));
    const NodeSlot& again = *cluster.Find("h2");
    CHECK(again.gpu_kind == a1.gpu_kind);
    CHECK(cluster.Find("h1")->gpu_kind == h1.gpu_kind);
    CHECK(cluster.scan()[again.scan_index].gpu_kind == a1.gpu_kind);
  }

  SECTION("a copy of the cluster keeps every node's kind valid") {
    const ClusterState copy = cluster;
    for (const auto& [name, slot] : copy.nodes()) {
      REQUIRE(slot.gpu_kind < static_cast<int>(copy.gpu_kinds().size()));
      CHECK(copy.gpu_kinds()[slot.gpu_kind] == slot.gpus);
      CHECK(slot.gpu_graph == cluster.Find(name)->gpu_graph);
    }
  }

  SECTION("model and memory constraints give per kind what they give per node") {
    for (const auto& [model, memory_mb] : std::vector<std::pair<std::string, int64_t>>{
             {"", 0}, {"h100", 0}, {"A100", 0}, {"nvidia", 50000}, {"", 81559}, {"v100", 0}}) {
      GangRequest req;
      req.total_gpus = 1;
      req.gpu_model = model;
      req.gpu_memory_mb = memory_mb;
      const policy::EligibleByKind eligible(cluster, req);
      for (const NodeScan& n : cluster.scan()) {
        INFO(n.slot->info.name() << " model '" << model << "' memory " << memory_mb);
        CHECK(eligible.Of(n) == policy::EligibleGpus(*n.slot, req));
      }
    }
    GangRequest a100;
    a100.total_gpus = 1;
    a100.gpu_model = "a100";
    CHECK(policy::EligibleByKind(cluster, a100).Of(cluster.scan()[a1.scan_index]) == 0xff);
    CHECK(policy::EligibleByKind(cluster, a100).Of(cluster.scan()[h1.scan_index]) == 0);
  }
}

}  // namespace
}  // namespace gpusched::core
