#include "daemon/core/placement/gpu_graph.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/topology/cpu_list.h"
#include "common/topology/link_bandwidth.h"

namespace gpusched::core::placement {
namespace {

using topology::Link;
using topology::LinkKind;

// A self link off the diagonal is stale data; read it as the worst class.
Link OffDiagonal(Link link) { return link.kind == LinkKind::kSelf ? Link{LinkKind::kSys, 0} : link; }

std::string DomainKey(const topology::GpuInfo& gpu) {
  if (gpu.numa_node >= 0) return absl::StrCat("numa:", gpu.numa_node);
  if (!gpu.cpu_affinity.empty()) {
    return absl::StrCat("cpus:", topology::FormatCpuList(gpu.cpu_affinity));
  }
  return "unknown";
}

template <typename T>
void AppendBytes(std::string* out, const T& value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

}  // namespace

GpuGraph GpuGraph::FromTopology(const topology::NodeTopology& topo) {
  GpuGraph g;
  const int n = std::min(topo.num_gpus(), kMaxPlaceableGpus);
  g.size_ = n;

  std::vector<topology::GpuGeneration> generation(n);
  for (int i = 0; i < n; ++i) {
    generation[i] = topology::GpuGenerationFromModel(topo.gpus()[i].model);
  }

  const std::vector<double> shortfall = topology::MeasuredShortfall(topo);
  g.links_.assign(static_cast<size_t>(n) * n, Link{LinkKind::kSelf, 0});
  std::vector<double> gbps(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const Link there = OffDiagonal(topo.GpuLink(i, j));
      const Link back = OffDiagonal(topo.GpuLink(j, i));
      const double bw = std::min(topology::EstimatedLinkBandwidthGBps(there, generation[i]),
                                 topology::EstimatedLinkBandwidthGBps(back, generation[j])) *
                        shortfall[i * topo.num_gpus() + j];
      g.links_[i * n + j] = g.links_[j * n + i] = topology::BetterThan(there, back) ? back : there;
      gbps[i * n + j] = gbps[j * n + i] = bw;
    }
  }

  std::vector<double> distinct;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) distinct.push_back(gbps[i * n + j]);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  g.level_gbps_.push_back(0.0);
  g.level_gbps_.insert(g.level_gbps_.end(), distinct.begin(), distinct.end());
  g.levels_.assign(static_cast<size_t>(n) * n, 0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      auto it = std::lower_bound(distinct.begin(), distinct.end(), gbps[i * n + j]);
      g.levels_[i * n + j] = static_cast<BandwidthLevel>(it - distinct.begin() + 1);
    }
  }

  g.best_nic_.resize(n);
  g.nic_rank_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int nic = 0; nic < topo.num_nics(); ++nic) {
      Link link = topo.GpuNicLink(i, nic);
      if (!g.best_nic_[i] || topology::BetterThan(link, *g.best_nic_[i])) {
        g.best_nic_[i] = link;
      }
    }
    if (g.best_nic_[i]) g.nic_rank_[i] = topology::LinkRank(*g.best_nic_[i]);
  }

  std::map<std::string, int> domain_ids;
  g.domain_.resize(n);
  for (int i = 0; i < n; ++i) {
    auto [it, inserted] = domain_ids.emplace(DomainKey(topo.gpus()[i]), static_cast<int>(domain_ids.size()));
    g.domain_[i] = it->second;
  }
  return g;
}

std::string GpuGraph::Fingerprint() const {
  std::string out;
  out.reserve(16 + levels_.size() * 4 + level_gbps_.size() * 8 + size_ * 16);
  AppendBytes(&out, size_);
  AppendBytes(&out, level_gbps_.size());
  for (double v : level_gbps_) AppendBytes(&out, v);
  for (BandwidthLevel l : levels_) AppendBytes(&out, l);
  for (const Link& l : links_) {
    AppendBytes(&out, static_cast<int>(l.kind));
    AppendBytes(&out, l.nvlinks);
  }
  for (int i = 0; i < size_; ++i) {
    const auto& nic = best_nic_[i];
    AppendBytes(&out, nic ? static_cast<int>(nic->kind) : -1);
    AppendBytes(&out, nic ? nic->nvlinks : -1);
    AppendBytes(&out, domain_[i]);
  }
  return out;
}

}  // namespace gpusched::core::placement
