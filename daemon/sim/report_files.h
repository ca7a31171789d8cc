#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/simulator.h"

namespace gpusched::sim {

// Writes into `dir` (created if missing), deterministically:
//   summary.csv        policy,metric,size_class,value — every figure of the table
//   jobs-<policy>.csv  one row per trace job: times, placement, slowdown
//   utilization.csv    hour, then per policy the mean allocated share of the GPUs
//   waiting.csv        hour, then per policy the mean number of waiting jobs
//   jct_cdf.csv        fraction, then per policy the JCT (h) at that quantile
//   plots.gp           a gnuplot script turning them into the PNGs below
// Returns the names written.
absl::StatusOr<std::vector<std::string>> WriteReportFiles(const std::string& dir, const std::vector<SimResult>& results,
                                                          const std::vector<PolicyMetrics>& metrics);

// Creates `dir` and its parents when missing.
absl::Status MakeReportDir(const std::string& dir);

// Writes `text` to dir/name, whole, and appends name to `written`.
absl::Status WriteReportFile(const std::string& dir, const std::string& name, const std::string& text,
                             std::vector<std::string>& written);

// Runs `gnuplot plots.gp` in `dir` when gnuplot is on the PATH, writing
// jct_cdf.png, utilization.png and waiting.png. false when gnuplot is not
// installed; an error when it failed.
absl::StatusOr<bool> RenderPlots(const std::string& dir);

}  // namespace gpusched::sim
