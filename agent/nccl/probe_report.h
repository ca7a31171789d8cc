#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::agent {

// One message size of gpusched-nccl-probe's all-reduce (float, sum).
struct ProbeRow {
  int64_t bytes = 0;
  int64_t count = 0;      // floats per rank
  double time_us = 0;     // one all-reduce, mean over the timed iterations
  double algbw_gbps = 0;  // bytes / time, in GB/s (1e9 B/s) as nccl-tests
  double busbw_gbps = 0;  // algbw * 2(n-1)/n: comparable with the link speed
};

// What gpusched-nccl-probe --json printed.
struct ProbeReport {
  std::string nccl_version;    // "2.28.9"
  std::vector<int> gpus;       // local CUDA device ordinals measured
  int nranks = 0;              // ranks in total, over all nodes
  std::vector<ProbeRow> rows;  // ascending sizes
  double peak_busbw_gbps = 0;
};

// Reads the probe's --json output. Unknown fields are ignored (a newer probe
// may add some); a missing or mistyped one is an InvalidArgument error that
// names it, e.g. "rows[2].busbw_gbps is missing".
absl::StatusOr<ProbeReport> ParseProbeReport(const std::string& json);

}  // namespace gpusched::agent
