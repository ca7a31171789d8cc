// ChooseGpus calls/s, cold (every call builds the node's graph and searches)
// and through GpuChooser's cache, on the real topology fixtures; then a
// 5,000-node x 8-GPU cluster of those fixtures. A benchmark, not a test:
//   gpu_choice_bench [seconds per row, default 0.5]
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/topology/nvidia_smi_topo.h"
#include "daemon/core/placement/gpu_choice.h"
#include "daemon/core/placement/gpu_chooser.h"
#include "tests/bench/report.h"

namespace {

using gpusched::bench::Fixed;
using gpusched::bench::Table;
using gpusched::core::placement::ChooseGpus;
using gpusched::core::placement::GpuChooser;
using gpusched::topology::NodeTopology;
using Clock = std::chrono::steady_clock;

struct Fixture {
  const char* file;
  const char* model;
};

const Fixture kFixtures[] = {
    {"dgx1-v100.txt", "Tesla V100-SXM2-32GB"},          {"dgx-a100.txt", "NVIDIA A100-SXM4-40GB"},
    {"hgx-h200-8gpu-12nic.txt", "NVIDIA H200"},         {"aws-p4d.24xlarge.txt", "NVIDIA A100-SXM4-40GB"},
    {"aws-p5.48xlarge.txt", "NVIDIA H100 80GB HBM3"},   {"aws-g6e.12xlarge-4xL40S.txt", "NVIDIA L40S"},
    {"pcie-8x-rtx4090.txt", "NVIDIA GeForce RTX 4090"},
};

NodeTopology Load(const Fixture& fixture) {
  const std::string path = std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + fixture.file;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto topo = gpusched::topology::ParseNvidiaSmiTopo(text.str());
  if (!topo.ok()) {
    std::cerr << path << ": " << topo.status() << "\n";
    std::exit(1);
  }
  for (auto& gpu : topo->gpus()) gpu.model = fixture.model;
  return *std::move(topo);
}

uint64_t AllGpus(int gpus) { return gpus >= 64 ? ~uint64_t{0} : (uint64_t{1} << gpus) - 1; }

// `islands` NVSwitch islands of 8 H200s joined by SYS, one NUMA node each:
// a node too large for the exact search when mostly free.
NodeTopology NvSwitchIslands(int islands) {
  const int n = 8 * islands;
  NodeTopology topo(n, 0);
  for (int a = 0; a < n; ++a) {
    topo.gpus()[a].model = "NVIDIA H200";
    topo.gpus()[a].numa_node = a / 8;
    for (int b = 0; b < n; ++b) {
      if (a != b && a / 8 == b / 8) topo.SetGpuLink(a, b, {gpusched::topology::LinkKind::kNvLink, 18});
    }
  }
  return topo;
}

struct Ask {
  uint64_t free_mask;
  int k;
};

// Random feasible asks; k drawn like the gang sizes of the Microsoft ITP
// trace (1: 83%, 2: 2%, 4: 3.4%, 8: 10%), capped at the free GPUs.
std::vector<Ask> RandomAsks(std::mt19937_64& rng, int gpus, size_t count,
                            std::vector<double> weights = {83.2, 2.1, 3.4, 10.1}) {
  std::discrete_distribution<int> size_class(weights.begin(), weights.end());
  std::vector<Ask> asks;
  while (asks.size() < count) {
    const uint64_t mask = rng() & AllGpus(gpus);
    const int k = std::min(1 << size_class(rng), std::popcount(mask));
    if (k > 0) asks.push_back({mask, k});
  }
  return asks;
}

// Runs `call(i)` for i = 0, 1, ... over about `seconds`; calls per second.
template <typename Call>
double Rate(double seconds, Call call) {
  size_t calls = 0;
  const Clock::time_point start = Clock::now();
  Clock::duration elapsed{};
  do {
    for (int i = 0; i < 256; ++i) call(calls++);
    elapsed = Clock::now() - start;
  } while (elapsed < std::chrono::duration<double>(seconds));
  return calls / std::chrono::duration<double>(elapsed).count();
}

// Printed at the end so that no call is optimised away.
size_t sink = 0;

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  std::mt19937_64 rng(1);
  std::cout << "gpu_choice_bench: " << std::thread::hardware_concurrency() << " hardware threads, one used; " << seconds
            << " s per row\n\n";

  Table per_fixture("ChooseGpus per fixture (random free masks, trace-like k)",
                    {"fixture", "GPUs", "cold calls/s", "cold us/call", "cached calls/s", "cached ns/call"});
  for (const Fixture& fixture : kFixtures) {
    const NodeTopology topo = Load(fixture);
    const std::vector<Ask> asks = RandomAsks(rng, topo.num_gpus(), 1 << 16);
    const size_t mask = asks.size() - 1;
    const double cold = Rate(
        seconds, [&](size_t i) { sink += ChooseGpus(topo, asks[i & mask].free_mask, asks[i & mask].k)->gpus.size(); });
    GpuChooser chooser;
    const GpuChooser::TopologyId id = chooser.Intern(topo);
    for (const Ask& ask : asks) chooser.Choose(id, ask.free_mask, ask.k);  // warm up
    const double cached = Rate(seconds, [&](size_t i) {
      sink += chooser.Choose(id, asks[i & mask].free_mask, asks[i & mask].k)->gpus.size();
    });
    per_fixture.Add({fixture.file, std::to_string(topo.num_gpus()), Fixed(cold, 0), Fixed(1e6 / cold, 2),
                     Fixed(cached, 0), Fixed(1e9 / cached, 1)});
  }
  std::cout << per_fixture.Render() << "\n";

  Table large("Large nodes: NVSwitch islands of 8 (k = 1..64, powers of two, capped at free GPUs)",
              {"GPUs", "cold calls/s", "cold us/call", "share greedy", "cached calls/s"});
  for (int islands : {2, 4, 8}) {
    const NodeTopology topo = NvSwitchIslands(islands);
    const std::vector<Ask> asks = RandomAsks(rng, topo.num_gpus(), 1 << 10, {50, 10, 10, 10, 10, 5, 5});
    const size_t mask = asks.size() - 1;
    size_t greedy = 0, cold_calls = 0;
    const double cold = Rate(seconds, [&](size_t i) {
      auto choice = ChooseGpus(topo, asks[i & mask].free_mask, asks[i & mask].k);
      greedy += !choice->exact;
      ++cold_calls;
    });
    GpuChooser chooser;
    const GpuChooser::TopologyId id = chooser.Intern(topo);
    for (const Ask& ask : asks) chooser.Choose(id, ask.free_mask, ask.k);
    const double cached = Rate(seconds, [&](size_t i) {
      sink += chooser.Choose(id, asks[i & mask].free_mask, asks[i & mask].k)->gpus.size();
    });
    large.Add({std::to_string(topo.num_gpus()), Fixed(cold, 0), Fixed(1e6 / cold, 1),
               Fixed(100.0 * greedy / cold_calls, 0) + "%", Fixed(cached, 0)});
  }
  std::cout << large.Render() << "\n";

  Table worst("Worst cases, cold (one ask repeated)", {"node", "free", "k", "search", "us/call"});
  for (auto [islands, free_gpus, k] : {std::tuple{2, 12, 6}, {2, 13, 6}, {8, 64, 32}, {8, 64, 16}}) {
    const NodeTopology topo = NvSwitchIslands(islands);
    const uint64_t free_mask = AllGpus(free_gpus);
    bool exact = true;
    const double cold = Rate(seconds, [&](size_t) { exact = ChooseGpus(topo, free_mask, k)->exact; });
    worst.Add({std::to_string(topo.num_gpus()) + " GPUs", std::to_string(free_gpus), std::to_string(k),
               exact ? "exact" : "greedy", Fixed(1e6 / cold, 1)});
  }
  std::cout << worst.Render() << "\n";

  // 5,000 nodes of the six 8-GPU fixtures, each with its own free mask.
  constexpr int kNodes = 5000;
  std::vector<NodeTopology> kinds;
  for (const Fixture& fixture : kFixtures) {
    NodeTopology topo = Load(fixture);
    if (topo.num_gpus() == 8) kinds.push_back(std::move(topo));
  }
  GpuChooser chooser;
  std::vector<GpuChooser::TopologyId> node_ids;
  std::vector<uint64_t> node_free;
  const Clock::time_point intern_start = Clock::now();
  for (int node = 0; node < kNodes; ++node) {
    node_ids.push_back(chooser.Intern(kinds[node % kinds.size()]));
    node_free.push_back(rng() & 0xff);
  }
  const double intern_s = std::chrono::duration<double>(Clock::now() - intern_start).count();
  const std::vector<Ask> asks = RandomAsks(rng, 8, 1 << 16);
  // One scheduling pass that asks every node once: the cost of a full scan.
  auto scan = [&](size_t pass) {
    size_t found = 0;
    const int k = asks[pass & (asks.size() - 1)].k;
    for (int node = 0; node < kNodes; ++node) {
      found += chooser.Choose(node_ids[node], node_free[node], k) != nullptr;
    }
    return found;
  };
  const Clock::time_point cold_start = Clock::now();
  for (size_t pass = 0; pass < 64; ++pass) sink += scan(pass);
  const double first_scans_s = std::chrono::duration<double>(Clock::now() - cold_start).count();
  const double calls = Rate(seconds, [&](size_t i) {
    const size_t node = (i * 2654435761u) % kNodes;
    sink += chooser.Choose(node_ids[node], node_free[node], asks[i & (asks.size() - 1)].k) != nullptr;
  });
  const double scans = Rate(seconds, [&](size_t i) { sink += scan(i); });

  Table cluster("5,000 nodes x 8 GPUs (six fixture kinds), GpuChooser", {"what", "figure"});
  cluster.Add({"distinct topologies interned", std::to_string(chooser.num_topologies())});
  cluster.Add({"interning 5,000 nodes", Fixed(intern_s * 1e3, 1) + " ms"});
  cluster.Add({"first 64 full scans (cache cold -> warm)", Fixed(first_scans_s * 1e3, 1) + " ms"});
  cluster.Add({"Choose calls/s, random node, warm", Fixed(calls, 0)});
  cluster.Add({"full scans of all 5,000 nodes per second, warm", Fixed(scans, 0)});
  cluster.Add(
      {"cache hits / misses", std::to_string(chooser.cache_hits()) + " / " + std::to_string(chooser.cache_misses())});
  std::cout << cluster.Render();
  std::cout << "(checksum " << sink << ")\n";
  return 0;
}
