#include "agent/runner/cpu_binding.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/gpu_lookup.h"
#include "common/topology/cpu_list.h"

namespace gpusched::agent {
namespace {

std::vector<int> SortedUnique(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

struct CpuSetFree {
  void operator()(cpu_set_t* set) const { CPU_FREE(set); }
};

}  // namespace

std::vector<int> GpuLocalCpus(const topology::NodeTopology& topo, int gpu_index) {
  std::optional<int> position = GpuPosition(topo, gpu_index);
  if (!position) return {};
  const topology::GpuInfo& gpu = topo.gpus()[*position];
  if (gpu.numa_node >= 0) {
    for (const topology::NumaNode& node : topo.numa_nodes()) {
      if (node.id == gpu.numa_node && !node.cpus.empty()) return SortedUnique(node.cpus);
    }
  }
  return SortedUnique(gpu.cpu_affinity);
}

CpuBinding ChooseCpuBinding(const topology::NodeTopology& topo, const std::vector<int>& gpu_indices,
                            const std::vector<int>& allowed) {
  CpuBinding binding;
  if (gpu_indices.empty()) return binding;
  std::vector<int> local;
  for (int index : gpu_indices) {
    std::vector<int> cpus = GpuLocalCpus(topo, index);
    if (cpus.empty()) {
      binding.not_bound_reason = absl::StrCat("the topology does not say which CPUs are near GPU ", index);
      return binding;
    }
    local.insert(local.end(), cpus.begin(), cpus.end());
  }
  local = SortedUnique(std::move(local));
  const std::vector<int> agent_cpus = SortedUnique(allowed);
  std::set_intersection(local.begin(), local.end(), agent_cpus.begin(), agent_cpus.end(),
                        std::back_inserter(binding.cpus));
  if (binding.cpus.empty()) {
    binding.not_bound_reason =
        absl::StrCat("the CPUs near GPU(s) ", absl::StrJoin(gpu_indices, ","), " (", topology::FormatCpuList(local),
                     ") are none of the CPUs this agent may use (", topology::FormatCpuList(agent_cpus),
                     "); the topology probably describes another machine");
  }
  return binding;
}

absl::StatusOr<std::vector<int>> AllowedCpusOfThisThread() {
  // The kernel refuses a mask narrower than its own CPU count, which this
  // process cannot know beforehand; widen until it fits.
  for (int count = 1024; count <= topology::kMaxCpuId + 1; count *= 2) {
    std::unique_ptr<cpu_set_t, CpuSetFree> set(CPU_ALLOC(count));
    if (!set) return absl::ResourceExhaustedError("CPU_ALLOC failed");
    const size_t size = CPU_ALLOC_SIZE(count);
    CPU_ZERO_S(size, set.get());
    if (sched_getaffinity(0, size, set.get()) != 0) {
      if (errno == EINVAL) continue;
      return absl::InternalError(absl::StrCat("sched_getaffinity: ", std::strerror(errno)));
    }
    std::vector<int> cpus;
    for (int cpu = 0; cpu < count; ++cpu) {
      if (CPU_ISSET_S(cpu, size, set.get())) cpus.push_back(cpu);
    }
    return cpus;
  }
  return absl::InternalError("sched_getaffinity: more CPUs than this agent can describe");
}

}  // namespace gpusched::agent
