#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// Parses a job time limit in Slurm's notation, so that users can carry their
// habits over: "90" (minutes), "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM",
// "D-HH:MM:SS". Returns seconds. "0", "unlimited" and "infinite" mean no limit
// (0). Anything else is an InvalidArgument that quotes the input.
absl::StatusOr<int64_t> ParseTimeLimit(absl::string_view text);

// Formats seconds as D-HH:MM:SS (or HH:MM:SS under a day); 0 as "none".
std::string FormatTimeLimit(int64_t seconds);

}  // namespace gpusched
