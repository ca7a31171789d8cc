#include "daemon/core/power/pool_spec.h"

namespace gpusched::core {

absl::string_view PoolClassName(PoolClass pool_class) {
  switch (pool_class) {
    case PoolClass::kReserved: return "reserved";
    case PoolClass::kSpot: return "spot";
    case PoolClass::kOnDemand: return "on-demand";
  }
  return "on-demand";
}

v1::NodeInfo ShapedNode(const PoolSpec& pool, const std::string& name) {
  v1::NodeInfo info = pool.shape;
  info.set_name(name);
  for (int i = 0; i < info.gpus_size(); ++i) {
    v1::GpuInfo& gpu = *info.mutable_gpus(i);
    gpu.set_index(i);
    if (gpu.uuid().empty()) gpu.set_uuid(name + "-gpu" + std::to_string(i));
  }
  return info;
}

}  // namespace gpusched::core
