#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/sim/trace.h"

namespace gpusched::sim {

// Reads a Slurm accounting export, as written by
//
//   sacct --parsable2 --allusers --starttime ... --format=JobID,User,
//         Partition,Submit,Start,End,Elapsed,AllocTRES,ReqTRES,State
//
// ('|'-separated, one header line naming the columns). Columns used, by name,
// in any order; others are ignored:
//   JobID      required. Steps (123.batch, 123.extern, 123.0) are skipped and
//              counted: the allocation belongs to the job line.
//   Submit     required, YYYY-MM-DDTHH:MM:SS (sacct's default format; the
//              zone does not matter, only differences are used).
//   Elapsed    the run time, [D-][HH:]MM:SS; without this column, End - Start.
//   Start      "Unknown"/"None" (never started) makes the run time unknown.
//   State      PENDING makes the run time unknown. Other states are kept:
//              failed and cancelled jobs held their GPUs while they ran.
//   AllocTRES  GPUs from gres/gpu=N (or the sum of typed gres/gpu:T=N);
//   ReqTRES    used when AllocTRES is absent or empty. At least one of the two
//              columns is required.
//   User, Partition   kept as user and queue (options.queue filters on Partition).
// Rows of unknown run time or without GPUs are counted and skipped. Errors are
// InvalidArgument "line N: field F: ..." (the caller adds the file name).
absl::StatusOr<Trace> ParseSacctTrace(absl::string_view text, const TraceOptions& options);

// "[D-][HH:]MM:SS" in seconds; nullopt when malformed.
std::optional<int64_t> ParseSlurmDuration(absl::string_view text);
// The GPU count of a TRES string ("cpu=8,gres/gpu=2,mem=64G"); 0 without GPUs,
// nullopt when a gres/gpu value is not a number.
std::optional<int64_t> GpusFromTres(absl::string_view tres);

}  // namespace gpusched::sim
