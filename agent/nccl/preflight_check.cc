#include "agent/nccl/preflight_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/nccl/link_calibration.h"

namespace gpusched::agent {

PreflightOutcome RunPreflight(BandwidthProbe& probe, const std::vector<int>& gpus, const v1::Preflight& preflight) {
  PreflightOutcome outcome;
  const std::string which = absl::StrCat("GPUs ", absl::StrJoin(gpus, ","));
  auto report = probe.Measure(gpus);
  if (!report.ok()) {
    outcome.message =
        TruncatedProbeMessage(absl::StrCat("NCCL all-reduce over ", which, " failed: ", report.status().message()));
    return outcome;
  }
  outcome.busbw_gbps = report->peak_busbw_gbps;
  outcome.passed = outcome.busbw_gbps >= preflight.min_busbw_gbps();
  outcome.message = absl::StrFormat(
      "NCCL all-reduce over %s: %.1f GB/s bus bandwidth, %s the %.1f GB/s needed "
      "(estimate %.1f GB/s)",
      which, outcome.busbw_gbps, outcome.passed ? "at least" : "below", preflight.min_busbw_gbps(),
      preflight.expected_busbw_gbps());
  return outcome;
}

}  // namespace gpusched::agent
