#include "common/share_mode_name.h"

#include "absl/strings/match.h"

namespace gpusched {

absl::string_view ShareModeName(v1::GpuShareMode mode) {
  switch (mode) {
    case v1::GPU_SHARE_MODE_TIMESLICE: return "timeslice";
    case v1::GPU_SHARE_MODE_MPS: return "mps";
    case v1::GPU_SHARE_MODE_MIG: return "mig";
    default: return "exclusive";
  }
}

bool ParseShareModeName(absl::string_view text, v1::GpuShareMode* out) {
  for (v1::GpuShareMode mode :
       {v1::GPU_SHARE_MODE_EXCLUSIVE, v1::GPU_SHARE_MODE_TIMESLICE, v1::GPU_SHARE_MODE_MPS, v1::GPU_SHARE_MODE_MIG}) {
    if (absl::EqualsIgnoreCase(text, ShareModeName(mode))) {
      *out = mode;
      return true;
    }
  }
  return false;
}

}  // namespace gpusched
