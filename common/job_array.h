#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// A job array as `submit --array` writes it, in Slurm's syntax:
// "0-99", "1,3,8-10", "0-30:10" (every 10th), each optionally ending in
// "%8" (at most 8 tasks at once).
struct JobArraySpec {
  std::vector<int32_t> indices;  // ascending, no duplicates
  int32_t max_running = 0;       // 0 = no limit
};

// InvalidArgument naming what is wrong and where, e.g.
// `array "0-5x": "5x" is not a number`. At most `max_tasks` tasks.
absl::StatusOr<JobArraySpec> ParseJobArraySpec(absl::string_view text, size_t max_tasks);

}  // namespace gpusched
