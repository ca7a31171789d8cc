#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/nccl/probe_report.h"

namespace gpusched::agent {

// Measures NCCL all-reduce bandwidth over a set of this node's GPUs. The agent
// runs the real program; tests and the daemon-side decision logic use fakes.
class BandwidthProbe {
 public:
  virtual ~BandwidthProbe() = default;
  // `gpus`: CUDA device ordinals as the probe sees them.
  virtual absl::StatusOr<ProbeReport> Measure(const std::vector<int>& gpus) = 0;
};

struct ProgramBandwidthProbeOptions {
  std::string program;                  // path of gpusched-nccl-probe
  std::vector<std::string> extra_args;  // e.g. {"--max-bytes", "67108864"}
  absl::Duration timeout = absl::Minutes(2);
};

// Runs gpusched-nccl-probe --json --gpus ... as a child process and reads its
// report. Errors carry the probe's own last stderr line, e.g. "no CUDA device".
class ProgramBandwidthProbe : public BandwidthProbe {
 public:
  explicit ProgramBandwidthProbe(ProgramBandwidthProbeOptions options) : options_(std::move(options)) {}
  absl::StatusOr<ProbeReport> Measure(const std::vector<int>& gpus) override;

 private:
  ProgramBandwidthProbeOptions options_;
};

}  // namespace gpusched::agent
