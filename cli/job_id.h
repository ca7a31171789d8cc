#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/client.h"

namespace gpusched::cli {

// A job id as typed: a positive whole number. Anything else is a UsageError.
absl::StatusOr<uint64_t> ParseJobId(absl::string_view text);

// A job as typed: "12", or "17_3" for the task of job array 17 whose index
// is 3 (as `status` shows array tasks, and as Slurm writes them).
struct JobRef {
  uint64_t id = 0;                     // the job, or the array
  std::optional<int32_t> array_index;  // set for "ARRAY_INDEX"
};
absl::StatusOr<JobRef> ParseJobRef(absl::string_view text);

// The id of the job `ref` names: ref.id itself, or the array task's id,
// looked up with GetJob. NotFound when the array has no such index.
absl::StatusOr<uint64_t> ResolveJobRef(SchedulerClient& client, const JobRef& ref);

// ParseJobRef, then ResolveJobRef.
absl::StatusOr<uint64_t> FindJobId(SchedulerClient& client, absl::string_view text);

}  // namespace gpusched::cli
