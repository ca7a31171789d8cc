// The per-kind data placement scans read instead of each node: nodes of one
// hardware kind share it, and a constraint matched per kind gives what it
// gives matched per node.

#include "daemon/core/cluster_state.h"

#include <catch2/catch.hpp>
#include <random>
#include <tuple>

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

TEST_CASE("a candidate scored from the scan entry offers what the node itself offers, now and idle") {
  ClusterState cluster;
  cluster.UpsertNode(MakeNode("h-free", 8));
  cluster.UpsertNode(MakeNode("h-busy", 8, /*cpus=*/40, /*mem_mb=*/100000));
  cluster.UpsertNode(WithGpus(MakeNode("a-40g", 8), "NVIDIA A100-SXM4-40GB", 40960));
  cluster.UpsertNode(MakeNode("queue-b", 8));
  cluster.UpsertNode(MakeNode("wide", 72, /*cpus=*/1024, /*mem_mb=*/4000000));  // GPUs past 64 are never offered
  cluster.UpsertNode(MakeNode("cpu-only", 0));
  cluster.UpsertNode(MakeNode("down", 8));
  for (const auto& [name, slot] : cluster.nodes()) {
    if (name != "down") cluster.SetState(name, v1::NODE_STATE_UP, "");
  }
  v1::Allocation busy;
  v1::NodeAllocation* part = busy.add_nodes();
  part->set_node("h-busy");
  part->add_gpu_indices(0);
  part->add_gpu_indices(3);
  part->set_cpus(24);
  part->set_mem_mb(60000);
  REQUIRE(cluster.Allocate(7, busy).ok());
  REQUIRE(cluster.SetAccess("queue-b", 0b10, /*spot=*/false));

  size_t candidates = 0;
  for (const char* model : {"", "h100", "a100", "nvidia"}) {
    for (int64_t memory_mb : {0, 50000}) {
      for (int64_t cpus_per_gpu : {0, 4, 8}) {
        for (int64_t mem_per_gpu_mb : {0, 20000}) {
          for (uint64_t queue_bit : {uint64_t{0b01}, uint64_t{0b10}}) {
            GangRequest req;
            req.total_gpus = 2;
            req.gpu_model = model;
            req.gpu_memory_mb = memory_mb;
            req.cpus_per_gpu = cpus_per_gpu;
            req.mem_per_gpu_mb = mem_per_gpu_mb;
            req.queue_bit = queue_bit;
            const policy::EligibleByKind eligible(cluster, req);
            for (const NodeScan& n : cluster.scan()) {
              for (bool idle : {false, true}) {
                const NodeSlot& slot = *n.slot;
                INFO(slot.info.name() << " model '" << model << "' memory " << memory_mb << " cpus/GPU " << cpus_per_gpu
                                      << " mem/GPU " << mem_per_gpu_mb << " queue " << queue_bit
                                      << (idle ? " idle" : " now"));
                policy::GpuCandidate c;
                const bool scored = policy::ScoreGpuCandidate(n, req, eligible, idle, 1, c);
                const int64_t usable = slot.gpu_count == 0 ? 0 : policy::UsableGpus(slot, req, idle);
                CHECK(scored == (slot.accepts_jobs() && usable >= 1));
                if (!scored) continue;
                ++candidates;
                CHECK(c.slot == &slot);
                CHECK(c.usable == usable);
                CHECK(c.mask == policy::CandidateMask(slot, req, idle));
                CHECK(c.generation == slot.generation);
                CHECK(c.network_ids == slot.network_ids);
              }
            }
          }
        }
      }
    }
  }
  CHECK(candidates > 200);
  // The busy node: 6 GPUs free, 16 CPUs and 40000 MB left (40 CPUs and
  // 100000 MB when idle).
  GangRequest req;
  req.total_gpus = 1;
  req.cpus_per_gpu = 4;
  req.mem_per_gpu_mb = 20000;
  policy::GpuCandidate c;
  REQUIRE(policy::ScoreGpuCandidate(cluster.scan()[cluster.Find("h-busy")->scan_index], req,
                                    policy::EligibleByKind(cluster, req), false, 1, c));
  CHECK(c.usable == 2);  // memory for two
  CHECK(c.mask == 0b11110110);
  REQUIRE(policy::ScoreGpuCandidate(cluster.scan()[cluster.Find("h-busy")->scan_index], req,
                                    policy::EligibleByKind(cluster, req), /*idle=*/true, 1, c));
  CHECK(c.usable == 5);  // memory for five
  CHECK(c.mask == 0xff);
  REQUIRE(policy::ScoreGpuCandidate(cluster.scan()[cluster.Find("wide")->scan_index], req,
                                    policy::EligibleByKind(cluster, req), false, 1, c));
  CHECK(c.usable == 64);
  CHECK(c.mask == ~uint64_t{0});
}

}  // namespace

namespace {

// A NodeScan without its slot pointer, which differs between copies.
auto ScanFields(const NodeScan& n) {
  return std::tuple(n.free_mask, n.free_cpus, n.free_mem_mb, n.gpu_count, n.gpu_kind, n.up, n.runs_containers, n.spot,
                    n.queue_mask, n.generation, n.network_ids);
}

}  // namespace

// The placement index is kept up to date on every change; a copy builds its
// own from the slots alone. After any sequence of shares, whole-GPU jobs,
// releases, node state changes, drains, kills awaited and access changes
// (several between two reads, at random),
// the two must agree: the same GPUs at the same share levels, the same
// fields for every node, and each slot's free_mask what its owners say.
TEST_CASE("the placement index kept on every change, nodes registering among others, equals one built from the slots") {
  std::mt19937_64 rng(5);
  ClusterState cluster;
  std::vector<std::string> names;
  auto register_node = [&](const std::string& name, int n) {
    v1::NodeInfo info = MakeNode(name, 4);
    for (int g = 0; g < 4; ++g) {
      if (n % 3 != 0 || g < 2) info.mutable_gpus(g)->set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
    }
    cluster.UpsertNode(info);
    names.push_back(name);
  };
  for (int n = 0; n < 6; ++n) register_node("s" + std::to_string(n), n);
  struct Held {
    uint64_t job;
    v1::Allocation allocation;
  };
  std::vector<Held> held;
  uint64_t next_job = 1;
  int shares_seen = 0;
  for (int step = 0; step < 2000; ++step) {
    const int action = static_cast<int>(rng() % 10);
    const std::string node = names[rng() % names.size()];
    if (action < 6) {
      v1::Allocation allocation;
      v1::NodeAllocation& part = *allocation.add_nodes();
      part.set_node(node);
      part.add_gpu_indices(static_cast<int32_t>(rng() % 4));
      if (action < 5) {
        part.set_gpu_share_milli(static_cast<int32_t>(100 * (1 + rng() % 6)));
        part.set_gpu_mem_limit_mb(static_cast<int64_t>(1000 * (rng() % 20)));
      }
      const uint64_t job = next_job++;
      if (cluster.Allocate(job, allocation).ok()) held.push_back({job, allocation});
    } else if (action < 9 && !held.empty()) {
      const size_t i = rng() % held.size();
      cluster.Release(held[i].job, held[i].allocation);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      switch (rng() % 6) {
        // A node registers between others, its share entries and theirs
        // perhaps not yet brought up to date.
        case 5: register_node("s" + std::to_string(rng() % 7) + "-" + std::to_string(step), step); break;
        case 0: cluster.SetState(node, rng() % 2 ? v1::NODE_STATE_UP : v1::NODE_STATE_DOWN, "test"); break;
        case 1: cluster.SetDrain(node, rng() % 2 ? "maintenance" : "", v1::DRAIN_KIND_OPERATOR); break;
        case 2: cluster.AddUnconfirmedKill(node, next_job++); break;
        case 3: cluster.SetUnconfirmedKills(node, {}); break;
        default: cluster.SetAccess(node, rng() % 2 ? ~uint64_t{0} : uint64_t{1}, rng() % 2 == 0); break;
      }
    }
    // The share entries follow lazily: let a few changes pile up between
    // reads, as a pass's what-ifs do.
    if (rng() % 3 != 0) continue;
    const ClusterState rebuilt = cluster;
    REQUIRE(rebuilt.share_index() == cluster.share_index());
    shares_seen += cluster.share_index().empty() ? 0 : 1;
    REQUIRE(rebuilt.scan().size() == cluster.scan().size());
    for (size_t i = 0; i < cluster.scan().size(); ++i) {
      const NodeScan& kept = cluster.scan()[i];
      REQUIRE(kept.slot->scan_index == i);
      REQUIRE(kept.free_mask == kept.slot->CountFree());
      REQUIRE(ScanFields(rebuilt.scan()[i]) == ScanFields(kept));
    }
  }
  CHECK(shares_seen > 100);  // the run did exercise shares
}
}  // namespace gpusched::core
