#include "agent/config/gpu_share_modes.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/topology/cpu_list.h"

namespace gpusched::agent {

absl::StatusOr<std::map<int32_t, std::string>> ParseGpuShareModes(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  std::map<int32_t, std::string> modes;
  for (const auto& [gpus, mode] : entries) {
    if (std::find(std::begin(kGpuShareModeWords), std::end(kGpuShareModeWords), mode) == std::end(kGpuShareModeWords)) {
      return absl::InvalidArgumentError(absl::StrCat("gpu_share_modes \"", gpus, "\" = \"", mode, "\": \"", mode,
                                                     "\" is not one of ", absl::StrJoin(kGpuShareModeWords, ", ")));
    }
    // GPU indices read like CPU lists, with the same bounds.
    auto indices = topology::ParseCpuList(gpus);
    if (!indices.ok() || indices->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu_share_modes \"", gpus, "\": not a list of GPU indices such as \"0-3\" or \"4,6\""));
    }
    for (int index : *indices) {
      if (!modes.emplace(index, mode).second) {
        return absl::InvalidArgumentError(absl::StrCat("gpu_share_modes: GPU ", index, " is given twice"));
      }
    }
  }
  return modes;
}

absl::StatusOr<std::pair<std::string, std::string>> SplitGpuShareModesFlag(absl::string_view flag) {
  const size_t eq = flag.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gpu-share-modes \"", flag, "\": expected GPUS=MODE, e.g. 0-3=mps"));
  }
  return std::pair<std::string, std::string>(flag.substr(0, eq), flag.substr(eq + 1));
}

}  // namespace gpusched::agent
