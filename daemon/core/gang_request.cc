#include "daemon/core/gang_request.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace gpusched::core {

GangRequest ToGangRequest(const v1::JobSpec& spec) {
  const v1::Resources& r = spec.resources();
  GangRequest g;
  g.nodes = r.nodes();
  g.gpus_per_node = r.gpus_per_node();
  g.total_gpus = r.nodes() > 0 ? r.nodes() * r.gpus_per_node() : r.gpus();
  g.cpus_per_gpu = r.cpus_per_gpu();
  g.mem_per_gpu_mb = r.mem_per_gpu_mb();
  g.cpus = std::max<int64_t>(1, r.cpus());
  g.mem_mb = r.mem_mb();
  g.gpu_model = r.gpu_model();
  g.gpu_memory_mb = r.gpu_memory_mb();
  g.gpu_share_milli = r.gpu_share_milli();
  g.gpu_mem_limit_mb = r.gpu_mem_limit_mb();
  g.mig_profile = absl::AsciiStrToLower(r.mig_profile());
  if (g.gpu_share_milli > 0) {
    g.gpu_sharing = r.gpu_sharing();
    g.user = spec.user();
  }
  g.in_container = spec.has_container();
  g.no_spot = spec.no_spot();
  g.topology = spec.topology() == v1::TOPOLOGY_MODE_UNSPECIFIED ? v1::TOPOLOGY_MODE_PREFER : spec.topology();
  return g;
}

}  // namespace gpusched::core
