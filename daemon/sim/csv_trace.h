#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/sim/trace.h"

namespace gpusched::sim {

// Reads the converted-trace CSV format of shared/traces (README there):
//
//   job_id,submit_time_s,num_gpus,duration_s,user,queue,status
//
// The header must name all seven columns (in any order; further columns are
// ignored). Every row is checked: job_id non-empty; submit_time_s and
// num_gpus whole numbers >= 0; duration_s empty or a whole number >= 0.
// Fields may be double-quoted ("" for a quote inside). Rows with an empty
// duration_s, with 0 GPUs or of another queue than options.queue are counted
// and skipped; status is kept out of it on purpose: a failed job held its
// GPUs for its duration as a completed one did. Errors are InvalidArgument
// "line N: field F: ..." (the caller adds the file name).
absl::StatusOr<Trace> ParseCsvTrace(absl::string_view text, const TraceOptions& options);

}  // namespace gpusched::sim
