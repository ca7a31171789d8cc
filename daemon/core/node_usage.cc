#include "common/gpu_fraction.h"
#include "daemon/core/effects.h"

namespace gpusched::core {

std::vector<NodeUsage::PartHolder> NodeUsage::PartsOf(
    const v1::NodeInfo& info, const google::protobuf::RepeatedPtrField<v1::GpuHolders>& holders) {
  std::vector<PartHolder> parts;
  for (int p = 0; p < holders.size() && p < info.gpus_size(); ++p) {
    const v1::GpuHolders& gpu = holders[p];
    for (const v1::GpuShareHolder& share : gpu.shares()) {
      parts.push_back({gpu.index(), share.job_id(), share.milli(), false});
    }
    const v1::GpuInfo& g = info.gpus(p);
    for (int k = 0; k < gpu.mig_holders_size() && k < g.mig_instances_size(); ++k) {
      if (gpu.mig_holders(k) == 0) continue;
      parts.push_back(
          {gpu.index(), gpu.mig_holders(k), static_cast<int>(MigInstanceMilli(g.mig_instances(k).profile())), true});
    }
  }
  return parts;
}

}  // namespace gpusched::core
