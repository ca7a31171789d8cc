#include "daemon/core/node_slot.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "absl/strings/ascii.h"

namespace gpusched::core {

GpuKind GpuKind::Of(const v1::NodeInfo& info) {
  GpuKind kind;
  kind.gpu_count = info.gpus_size();
  for (int p = 0; p < info.gpus_size() && p < 64; ++p) {
    std::string model = absl::AsciiStrToLower(info.gpus(p).model());
    auto same = std::find_if(kind.by_model.begin(), kind.by_model.end(),
                             [&](const ModelGpus& m) { return m.model_lower == model; });
    if (same == kind.by_model.end()) same = kind.by_model.insert(same, {std::move(model), 0});
    same->mask |= uint64_t{1} << p;
    kind.memory_mb.push_back(info.gpus(p).memory_mb());
  }
  return kind;
}

int64_t NodeSlot::FreeGpus() const {
  if (gpu_owner.size() <= 64) return std::popcount(free_mask);
  int64_t free = 0;
  for (uint64_t owner : gpu_owner) free += owner == 0 ? 1 : 0;
  return free;
}

std::vector<int32_t> NodeSlot::FreeGpuIndices() const {
  std::vector<int32_t> free;
  for (size_t i = 0; i < gpu_owner.size(); ++i) {
    if (gpu_owner[i] == 0) free.push_back(info.gpus(static_cast<int>(i)).index());
  }
  return free;
}

int64_t NodeSlot::FreePeerGbps(int pos) const {
  double gbps = 0;
  for (uint64_t bits = free_mask & ~(uint64_t{1} << pos); bits != 0; bits &= bits - 1) {
    gbps += PairGbps(pos, std::countr_zero(bits));
  }
  return std::llround(gbps);
}

int NodeSlot::MigPosition(int pos, int32_t mig_index) const {
  if (pos < 0 || pos >= info.gpus_size()) return -1;
  const v1::GpuInfo& gpu = info.gpus(pos);
  for (int k = 0; k < gpu.mig_instances_size(); ++k) {
    if (gpu.mig_instances(k).index() == mig_index) return k;
  }
  return -1;
}

bool NodeSlot::Shareable(int pos) const { return pos >= 0 && pos < 64 && (shareable_mask >> pos & 1) != 0; }

v1::GpuShareMode NodeSlot::ShareMode(int pos) const {
  if (!Shareable(pos)) return v1::GPU_SHARE_MODE_EXCLUSIVE;
  return (mps_mask >> pos & 1) != 0 ? v1::GPU_SHARE_MODE_MPS : v1::GPU_SHARE_MODE_TIMESLICE;
}

uint64_t NodeSlot::SharedMask(v1::GpuShareMode how) const {
  switch (how) {
    case v1::GPU_SHARE_MODE_MPS: return mps_mask;
    case v1::GPU_SHARE_MODE_TIMESLICE: return shareable_mask & ~mps_mask;
    case v1::GPU_SHARE_MODE_UNSPECIFIED: return shareable_mask;
    default: return 0;
  }
}

int NodeSlot::FreeShareMilli(int pos) const {
  if (!Shareable(pos)) return 0;
  if (gpu_owner[pos] == 0) return 1000;
  if (gpu_owner[pos] != kSharedGpuOwner) return 0;
  return std::max(0, 1000 - gpu_shares[pos].milli_used);
}

int64_t NodeSlot::FreeShareMemMb(int pos) const {
  if (!Shareable(pos)) return 0;
  const int64_t total = info.gpus(pos).memory_mb();
  return gpu_owner[pos] == kSharedGpuOwner ? std::max<int64_t>(0, total - gpu_shares[pos].mem_used_mb) : total;
}

}  // namespace gpusched::core
