#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// Elapsed time the way squeue shows it: M:SS, H:MM:SS, D-HH:MM:SS.
std::string FormatElapsed(absl::Duration d);

// How long the job has run, or (while it waits) how long it has waited; for an
// ended job, its run time, or its wait if it never started.
absl::Duration JobElapsed(const v1::Job& job, absl::Time now);

// GPU indices, sorted, with runs of three or more as ranges: "0-3", "0,1", "0,2,4-7".
std::string FormatIndexList(std::vector<int32_t> indices);

// "node-a[0,1] node-b[0-3]" in node-rank order; a node without GPUs is just
// its name. Empty for a job that holds no allocation.
std::string FormatPlacement(const v1::Allocation& allocation);

// How `status` names a task of a job array: "17_3" (array 17, index 3),
// as Slurm does; other jobs by their id.
std::string ArrayTaskLabel(const v1::Job& job);

// The GPUS column: "8", or "1x30%" for one GPU at a 30% share.
std::string GpusLabel(const v1::Resources& resources);

// "2024-05-01 14:03:07" in the given zone; "-" for an unset timestamp.
std::string FormatTimestamp(const google::protobuf::Timestamp& ts, absl::TimeZone zone);

// argv as a shell would need it typed: words with spaces or quotes get quoted.
std::string ShellJoin(const google::protobuf::RepeatedPtrField<std::string>& argv);

// "per-gpu" / "per-node", the spelling of --launch.
std::string LaunchModeName(v1::LaunchMode mode);

}  // namespace gpusched::cli
