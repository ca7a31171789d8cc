#include "common/topology/link_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpusched::topology {

GpuGeneration GpuGenerationFromModel(absl::string_view model) {
  std::string m = absl::AsciiStrToUpper(model);
  auto has = [&m](absl::string_view s) { return absl::StrContains(m, s); };
  // Longer names first only matters across generations; within one the order
  // is free ("A10" also matches "A100", both Ampere).
  if (has("V100")) return GpuGeneration::kVolta;
  if (has("H100") || has("H200") || has("H20")) return GpuGeneration::kHopper;
  if (has("A100") || has("A10") || has("A30")) return GpuGeneration::kAmpere;
  if (has("L40S") || has("4090") || has("L4")) return GpuGeneration::kAda;
  return GpuGeneration::kUnknown;
}

std::string GpuGenerationName(GpuGeneration gen) {
  switch (gen) {
    case GpuGeneration::kVolta: return "Volta";
    case GpuGeneration::kAmpere: return "Ampere";
    case GpuGeneration::kAda: return "Ada";
    case GpuGeneration::kHopper: return "Hopper";
    case GpuGeneration::kUnknown: return "unknown";
  }
  return "unknown";
}

double NvLinkPerLinkGBps(GpuGeneration /*gen*/) {
  // NVLink2 (Volta), NVLink3 (Ampere) and NVLink4 (Hopper) all give 25 GB/s
  // per link per direction; see the table in the header.
  return 25.0;
}

double PcieX16GBps(GpuGeneration gen) {
  switch (gen) {
    case GpuGeneration::kVolta: return 12.0;    // Gen3
    case GpuGeneration::kAmpere: return 25.0;   // Gen4
    case GpuGeneration::kAda: return 25.0;      // Gen4
    case GpuGeneration::kHopper: return 50.0;   // Gen5
    case GpuGeneration::kUnknown: return 25.0;  // assume Gen4
  }
  return 25.0;
}

double EstimatedLinkBandwidthGBps(const Link& link, GpuGeneration gen) {
  double pcie = PcieX16GBps(gen);
  switch (link.kind) {
    case LinkKind::kSelf: return 0.0;
    case LinkKind::kNvLink: return NvLinkPerLinkGBps(gen) * (link.nvlinks < 1 ? 1 : link.nvlinks);
    case LinkKind::kPix: return pcie * 1.00;
    case LinkKind::kPxb: return pcie * 0.95;
    case LinkKind::kPhb: return pcie * 0.85;
    case LinkKind::kNode: return pcie * 0.80;
    case LinkKind::kSys: return pcie * 0.65;
  }
  return 0.0;
}

double EstimatedGpuPairBandwidthGBps(const NodeTopology& topo, int i, int j) {
  if (i == j || i < 0 || j < 0 || i >= topo.num_gpus() || j >= topo.num_gpus()) {
    return 0.0;
  }
  GpuGeneration gen = GpuGenerationFromModel(topo.gpus()[i].model);
  return EstimatedLinkBandwidthGBps(topo.GpuLink(i, j), gen);
}

std::vector<double> MeasuredShortfall(const NodeTopology& topo) {
  const int n = topo.num_gpus();
  std::vector<double> factor(static_cast<size_t>(n) * n, 1.0);
  std::map<std::pair<LinkKind, int>, double> best;  // by link class
  auto link_class = [&](int i, int j) {
    const Link link = topo.GpuLink(i, j);
    return std::pair{link.kind, link.kind == LinkKind::kNvLink ? link.nvlinks : 0};
  };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      double& b = best[link_class(i, j)];
      b = std::max(b, topo.MeasuredGpuPairGBps(i, j));
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double measured = topo.MeasuredGpuPairGBps(i, j);
      const double b = best[link_class(i, j)];
      if (i == j || measured <= 0 || b <= 0) continue;
      const double share = measured / b;
      if (share < 0.9) factor[static_cast<size_t>(i) * n + j] = std::max(0.1, std::floor(share * 10) / 10);
    }
  }
  return factor;
}

std::vector<double> PlacementGpuPairMatrixGBps(const NodeTopology& topo) {
  const int n = topo.num_gpus();
  std::vector<double> matrix = MeasuredShortfall(topo);
  for (int i = 0; i < n; ++i) {
    const GpuGeneration gen = GpuGenerationFromModel(topo.gpus()[i].model);
    for (int j = 0; j < n; ++j) {
      double& m = matrix[static_cast<size_t>(i) * n + j];
      m = j == i ? 0.0 : m * EstimatedLinkBandwidthGBps(topo.GpuLink(i, j), gen);
    }
  }
  return matrix;
}

}  // namespace gpusched::topology
