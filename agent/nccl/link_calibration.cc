#include "agent/nccl/link_calibration.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/topology/link_bandwidth.h"
#include "common/topology/link_kind.h"

namespace gpusched::agent {

std::string TruncatedProbeMessage(absl::string_view message) {
  constexpr size_t kMax = 1000;
  if (message.size() <= kMax) return std::string(message);
  return absl::StrCat(message.substr(0, kMax), "... (", message.size() - kMax, " more bytes)");
}

v1::NodeProbe CalibrateLinks(BandwidthProbe& probe, const topology::NodeTopology& topology,
                             const std::atomic<bool>* stop) {
  v1::NodeProbe out;
  const int n = topology.num_gpus();
  if (n < 2) {
    out.set_unavailable(absl::StrCat("the node has ", n, " GPU", n == 1 ? "" : "s", ": no link between GPUs"));
    return out;
  }
  auto measure = [&](const std::vector<int>& gpus) -> absl::StatusOr<ProbeReport> {
    if (stop != nullptr && stop->load()) return absl::CancelledError("stopped");
    auto report = probe.Measure(gpus);
    if (!report.ok()) return report.status();
    if (out.nccl_version().empty()) out.set_nccl_version(report->nccl_version);
    return report;
  };
  std::vector<int> all;
  for (int a = 0; a < n; ++a) {
    all.push_back(topology.gpus()[a].index);
    for (int b = a + 1; b < n; ++b) {
      const int ga = topology.gpus()[a].index;
      const int gb = topology.gpus()[b].index;
      auto report = measure({ga, gb});
      if (!report.ok()) {
        out.set_error(TruncatedProbeMessage(absl::StrCat("GPUs ", ga, "-", gb, ": ", report.status().message())));
        return out;
      }
      v1::GpuPairBandwidth* pair = out.add_pairs();
      pair->set_gpu_a(ga);
      pair->set_gpu_b(gb);
      pair->set_busbw_gbps(report->peak_busbw_gbps);
      pair->set_estimated_gbps(topology::EstimatedGpuPairBandwidthGBps(topology, a, b));
      pair->set_link(topology::FormatLink(topology.GpuLink(a, b)));
    }
  }
  if (n > 2) {
    auto report = measure(all);
    if (!report.ok()) {
      out.set_error(TruncatedProbeMessage(absl::StrCat("all ", n, " GPUs: ", report.status().message())));
      return out;
    }
    out.set_all_gpus_busbw_gbps(report->peak_busbw_gbps);
  } else {
    out.set_all_gpus_busbw_gbps(out.pairs(0).busbw_gbps());
  }
  return out;
}

}  // namespace gpusched::agent
