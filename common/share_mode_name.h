#pragma once

#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// "exclusive", "timeslice", "mps", "mig": the words of agent.toml's gpu_share_mode,
// the CLI's --gpu-sharing and what `nodes show` and `status` print.
// UNSPECIFIED reads as "exclusive", which is what it means on a GPU.
absl::string_view ShareModeName(v1::GpuShareMode mode);

// Accepts the words above (any case); false otherwise.
bool ParseShareModeName(absl::string_view text, v1::GpuShareMode* out);

}  // namespace gpusched
