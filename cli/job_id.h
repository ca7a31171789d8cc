#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// A job id as typed: a positive whole number. Anything else is a UsageError.
absl::StatusOr<uint64_t> ParseJobId(absl::string_view text);

}  // namespace gpusched::cli
