#include "agent/gpu/fake_gpu_source.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::agent {

FakeGpuSource::FakeGpuSource(std::string node_name, int count, std::string model, int64_t memory_mb)
    : node_name_(std::move(node_name)), count_(count), model_(std::move(model)), memory_mb_(memory_mb) {}

absl::StatusOr<topology::NodeTopology> FakeGpuSource::Discover() {
  if (count_ < 0) return absl::InvalidArgumentError(absl::StrCat("fake GPU count must be >= 0, got ", count_));
  if (count_ > 0 && memory_mb_ <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("fake GPU memory must be > 0 MB, got ", memory_mb_));
  }
  topology::NodeTopology node(count_, 0);
  for (topology::GpuInfo& gpu : node.gpus()) {
    // Node name in the UUID keeps UUIDs unique across the fake nodes of one cluster.
    gpu.uuid = absl::StrCat("GPU-fake-", node_name_, "-", gpu.index);
    gpu.model = model_;
    gpu.memory_mb = memory_mb_;
  }
  return node;
}

}  // namespace gpusched::agent
