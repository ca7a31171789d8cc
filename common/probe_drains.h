#pragma once

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// Node drains the NCCL probe sets, told apart from an operator's by their
// first words: a link calibration's, and a failed job preflight's. The
// daemon lifts only these by itself; `gpusched nodes probe` reports them.
inline constexpr absl::string_view kProbeDrainPrefix = "NCCL probe: ";
inline constexpr absl::string_view kPreflightDrainPrefix = "NCCL preflight: ";

inline bool IsProbeDrain(absl::string_view drain_reason) {
  return absl::StartsWith(drain_reason, kProbeDrainPrefix) || absl::StartsWith(drain_reason, kPreflightDrainPrefix);
}

}  // namespace gpusched
