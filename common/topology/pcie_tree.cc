#include "common/topology/pcie_tree.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace gpusched::topology {
namespace {

// Union-find over the positions 0..n-1 of a device list.
class Partition {
 public:
  explicit Partition(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int i) { return parent_[i] == i ? i : parent_[i] = Find(parent_[i]); }
  void Join(int a, int b) { parent_[Find(a)] = Find(b); }

  // The classes as lists of positions, each in ascending order, ordered by
  // their first position.
  std::vector<std::vector<int>> Classes() {
    std::map<int, size_t> slot;  // root -> index in `out`
    std::vector<std::vector<int>> out;
    for (int i = 0; i < static_cast<int>(parent_.size()); ++i) {
      auto [it, added] = slot.emplace(Find(i), out.size());
      if (added) out.emplace_back();
      out[it->second].push_back(i);
    }
    return out;
  }

 private:
  std::vector<int> parent_;
};

bool IsPcieSwitchPath(const Link& l) { return l.kind == LinkKind::kPix || l.kind == LinkKind::kPxb; }

PcieNode Leaf(DeviceRef d) { return PcieNode{d, {}}; }

PcieNode Bridge(std::vector<PcieNode> children) { return PcieNode{std::nullopt, std::move(children)}; }

// The subtree for devices that reach each other through PCIe switches only.
PcieNode SwitchGroup(const NodeTopology& topo, const std::vector<DeviceRef>& group) {
  const int n = static_cast<int>(group.size());
  Partition pix(n);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (LinkBetween(topo, group[a], group[b]).kind == LinkKind::kPix) pix.Join(a, b);
    }
  }
  std::vector<std::vector<int>> clusters = pix.Classes();
  auto leaves = [&](const std::vector<int>& members) {
    std::vector<PcieNode> out;
    for (int m : members) out.push_back(Leaf(group[m]));
    return out;
  };
  if (clusters.size() == 1) return Bridge(leaves(clusters[0]));
  std::vector<PcieNode> sub_bridges;
  for (const std::vector<int>& c : clusters) sub_bridges.push_back(Bridge(leaves(c)));
  return Bridge(std::move(sub_bridges));
}

std::vector<PcieNode> DomainChildren(const NodeTopology& topo, const std::vector<DeviceRef>& members) {
  const int n = static_cast<int>(members.size());
  Partition near(n);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (IsPcieSwitchPath(LinkBetween(topo, members[a], members[b]))) near.Join(a, b);
    }
  }
  std::vector<PcieNode> out;
  for (const std::vector<int>& cls : near.Classes()) {
    if (cls.size() == 1) {
      out.push_back(Leaf(members[cls[0]]));
      continue;
    }
    std::vector<DeviceRef> group;
    for (int m : cls) group.push_back(members[m]);
    out.push_back(SwitchGroup(topo, group));
  }
  return out;
}

// The GPU a NIC hangs closest to, when that is nearer than SYS.
std::optional<int> ClosestNonSysGpu(const NodeTopology& topo, int nic) {
  std::optional<int> best;
  for (int g = 0; g < topo.num_gpus(); ++g) {
    Link l = topo.GpuNicLink(g, nic);
    if (l.kind == LinkKind::kSys || l.kind == LinkKind::kSelf) continue;
    if (!best.has_value() || BetterThan(l, topo.GpuNicLink(*best, nic))) best = g;
  }
  return best;
}

}  // namespace

Link LinkBetween(const NodeTopology& topo, DeviceRef a, DeviceRef b) {
  using K = DeviceRef::Kind;
  if (a.kind == K::kGpu && b.kind == K::kGpu) return topo.GpuLink(a.index, b.index);
  if (a.kind == K::kNic && b.kind == K::kNic) return topo.NicLink(a.index, b.index);
  if (a.kind == K::kGpu) return topo.GpuNicLink(a.index, b.index);
  return topo.GpuNicLink(b.index, a.index);
}

std::vector<CpuDomain> SynthesizePcieTree(const NodeTopology& topo) {
  std::set<int> known;
  for (const NumaNode& n : topo.numa_nodes()) known.insert(n.id);
  for (const GpuInfo& g : topo.gpus()) {
    if (g.numa_node >= 0) known.insert(g.numa_node);
  }
  for (const NicInfo& n : topo.nics()) {
    if (n.numa_node >= 0) known.insert(n.numa_node);
  }

  // Domain of every device; affinity groups draw ids no real node uses.
  std::map<std::vector<int>, int> affinity_domain;
  std::set<int> synthesized;
  int next_free = 0;
  std::vector<int> gpu_domain(topo.num_gpus(), -1);
  for (int g = 0; g < topo.num_gpus(); ++g) {
    const GpuInfo& gpu = topo.gpus()[g];
    if (gpu.numa_node >= 0) {
      gpu_domain[g] = gpu.numa_node;
    } else if (!gpu.cpu_affinity.empty()) {
      auto it = affinity_domain.find(gpu.cpu_affinity);
      if (it == affinity_domain.end()) {
        while (known.count(next_free) > 0) ++next_free;
        it = affinity_domain.emplace(gpu.cpu_affinity, next_free++).first;
        synthesized.insert(it->second);
      }
      gpu_domain[g] = it->second;
    }
  }
  std::vector<int> nic_domain(topo.num_nics(), -1);
  for (int n = 0; n < topo.num_nics(); ++n) {
    if (topo.nics()[n].numa_node >= 0) {
      nic_domain[n] = topo.nics()[n].numa_node;
    } else if (std::optional<int> g = ClosestNonSysGpu(topo, n); g.has_value()) {
      nic_domain[n] = gpu_domain[*g];
    }
  }

  std::map<int, std::vector<DeviceRef>> members;  // domain -> devices, in order
  for (int id : known) members[id];
  for (int id : synthesized) members[id];
  for (int g = 0; g < topo.num_gpus(); ++g) {
    members[gpu_domain[g]].push_back({DeviceRef::Kind::kGpu, g});
  }
  for (int n = 0; n < topo.num_nics(); ++n) {
    members[nic_domain[n]].push_back({DeviceRef::Kind::kNic, n});
  }

  std::vector<CpuDomain> out;
  for (const auto& [id, devices] : members) {
    CpuDomain d;
    d.numa_id = id;
    d.numa_id_synthesized = synthesized.count(id) > 0;
    auto numa = std::find_if(topo.numa_nodes().begin(), topo.numa_nodes().end(),
                             [id = id](const NumaNode& n) { return n.id == id; });
    if (id >= 0 && numa != topo.numa_nodes().end()) {
      d.cpus = numa->cpus;
    } else {
      for (const DeviceRef& dev : devices) {
        if (dev.kind != DeviceRef::Kind::kGpu) continue;
        const std::vector<int>& a = topo.gpus()[dev.index].cpu_affinity;
        d.cpus.insert(d.cpus.end(), a.begin(), a.end());
      }
    }
    std::sort(d.cpus.begin(), d.cpus.end());
    d.cpus.erase(std::unique(d.cpus.begin(), d.cpus.end()), d.cpus.end());
    d.children = DomainChildren(topo, devices);
    out.push_back(std::move(d));
  }
  // std::map put -1 first; it goes last, like NCCL's own "unknown CPU".
  std::stable_partition(out.begin(), out.end(), [](const CpuDomain& d) { return d.numa_id >= 0; });
  return out;
}

}  // namespace gpusched::topology
