#include "common/gpu_fraction.h"

#include "absl/strings/numbers.h"

namespace gpusched {
namespace {

// Compute slices of the GPUs MIG exists on in this form (A100, H100, H200).
constexpr int64_t kMigSlicesPerGpu = 7;

}  // namespace

int MigSlicesOf(absl::string_view profile) {
  // The GPU instance's part: the "<N>g" field, after an optional "<M>c.".
  const size_t g = profile.find('g');
  if (g == absl::string_view::npos) return 0;
  const size_t dot = profile.rfind('.', g);
  const absl::string_view digits =
      profile.substr(dot == absl::string_view::npos ? 0 : dot + 1, g - (dot == absl::string_view::npos ? 0 : dot + 1));
  int slices = 0;
  if (!absl::SimpleAtoi(digits, &slices) || slices <= 0 || slices > kMigSlicesPerGpu) return 0;
  return slices;
}

int64_t RequestedGpus(const v1::Resources& resources) {
  if (resources.gpus() > 0) return resources.gpus();
  return resources.nodes() * resources.gpus_per_node();
}

int64_t MigInstanceMilli(absl::string_view profile) {
  const int slices = MigSlicesOf(profile);
  return slices > 0 ? slices * 1000 / kMigSlicesPerGpu : 1000;
}

int64_t HeldGpuMilli(const v1::Resources& resources) {
  const int64_t gpus = RequestedGpus(resources);
  if (!resources.mig_profile().empty()) {
    const int slices = MigSlicesOf(resources.mig_profile());
    return slices > 0 ? gpus * slices * 1000 / kMigSlicesPerGpu : gpus * 1000;
  }
  if (resources.gpu_share_milli() > 0) return gpus * resources.gpu_share_milli();
  return gpus * 1000;
}

}  // namespace gpusched
