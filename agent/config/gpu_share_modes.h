#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::agent {

// The words gpu_share_mode takes, in agent.toml and on the command line.
inline constexpr const char* kGpuShareModeWords[] = {"exclusive", "timeslice", "mps", "mig"};

// Per-GPU share modes: agent.toml's [gpu_share_modes] table or repeated
// --gpu-share-modes flags, each a list of GPU indices ("0-3", "4,6") and a
// mode word. Returns the mode by GPU index. InvalidArgument naming the entry
// for a list that does not parse, a word that is not a mode, or a GPU given
// twice.
absl::StatusOr<std::map<int32_t, std::string>> ParseGpuShareModes(
    const std::vector<std::pair<std::string, std::string>>& entries);

// "0-3=mps" -> {"0-3", "mps"}, for the flag; InvalidArgument without '='.
absl::StatusOr<std::pair<std::string, std::string>> SplitGpuShareModesFlag(absl::string_view flag);

}  // namespace gpusched::agent
