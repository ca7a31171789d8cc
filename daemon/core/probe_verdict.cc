#include "daemon/core/probe_verdict.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/topology/link_bandwidth.h"
#include "common/topology/link_kind.h"

namespace gpusched::core {
namespace {

// GpuInfo.index -> position in topology.gpus().
std::map<int, int> Positions(const topology::NodeTopology& topology) {
  std::map<int, int> positions;
  for (int p = 0; p < topology.num_gpus(); ++p) positions[topology.gpus()[p].index] = p;
  return positions;
}

std::string Percent(double fraction) { return absl::StrFormat("%.0f%%", fraction * 100); }

}  // namespace

std::string CalibrationFailure(const topology::NodeTopology& topology, const v1::NodeProbe& probe, double drain_below) {
  if (!probe.unavailable().empty()) return "";
  if (!probe.error().empty()) return absl::StrCat("the link calibration failed: ", probe.error());
  if (drain_below <= 0) return "";
  const std::map<int, int> positions = Positions(topology);
  // The worst pair relative to its estimate names the problem.
  double worst_ratio = std::numeric_limits<double>::infinity();
  std::string worst;
  for (const v1::GpuPairBandwidth& pair : probe.pairs()) {
    auto a = positions.find(pair.gpu_a());
    auto b = positions.find(pair.gpu_b());
    if (a == positions.end() || b == positions.end() || a->second == b->second) continue;
    const double estimate = topology::EstimatedGpuPairBandwidthGBps(topology, a->second, b->second);
    if (estimate <= 0) continue;
    const double ratio = pair.busbw_gbps() / estimate;
    if (ratio >= drain_below || ratio >= worst_ratio) continue;
    worst_ratio = ratio;
    worst = absl::StrFormat("GPUs %d-%d (%s) measured %.1f GB/s, below %s of the %.1f GB/s estimate", pair.gpu_a(),
                            pair.gpu_b(), topology::FormatLink(topology.GpuLink(a->second, b->second)),
                            pair.busbw_gbps(), Percent(drain_below), estimate);
  }
  return worst;
}

std::optional<v1::Preflight> PreflightFor(const topology::NodeTopology& topology, const v1::NodeAllocation& part,
                                          double preflight_min) {
  const int k = part.gpu_indices_size();
  if (k < 2) return std::nullopt;
  const std::map<int, int> positions = Positions(topology);
  double ring = std::numeric_limits<double>::infinity();
  // A two-GPU ring is one link used both ways.
  for (int i = 0; i < (k == 2 ? 1 : k); ++i) {
    auto a = positions.find(part.gpu_indices(i));
    auto b = positions.find(part.gpu_indices((i + 1) % k));
    const double pair = a == positions.end() || b == positions.end()
                            ? 0
                            : topology::EstimatedGpuPairBandwidthGBps(topology, a->second, b->second);
    ring = std::min(ring, pair);
  }
  v1::Preflight preflight;
  preflight.set_expected_busbw_gbps(ring);
  preflight.set_min_busbw_gbps(ring * std::max(0.0, preflight_min));
  return preflight;
}

}  // namespace gpusched::core
