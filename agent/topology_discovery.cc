#include "agent/topology_discovery.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/gpu/fake_gpu_source.h"
#include "agent/gpu/nvml_topology_source.h"
#include "agent/gpu/topology_file_source.h"

namespace gpusched::agent {
namespace {

absl::StatusOr<DiscoveredTopology> FromFile(const AgentOptions& options) {
  TopologyFileOptions file;
  file.path = options.topology_file.empty() ? "<embedded topology>" : options.topology_file;
  if (!options.topology_text.empty()) file.text = options.topology_text;
  file.node_name = options.node_name;
  file.gpu_model = options.gpu_model;
  file.gpu_memory_mb = options.gpu_memory_mb;
  auto topo = TopologyFileSource(std::move(file)).Discover();
  if (!topo.ok()) return topo.status();
  return DiscoveredTopology{*std::move(topo), absl::StrCat("file:", options.topology_file), ""};
}

absl::StatusOr<DiscoveredTopology> Fake(const AgentOptions& options) {
  auto topo = FakeGpuSource(options.node_name, options.fake_gpus, options.gpu_model, options.gpu_memory_mb).Discover();
  if (!topo.ok()) return topo.status();
  return DiscoveredTopology{*std::move(topo), "fake", ""};
}

NvmlTopologyOptions NvmlOptions(const AgentOptions& options) {
  NvmlTopologyOptions nvml;
  if (!options.nvml_library.empty()) nvml.nvml_library = options.nvml_library;
  return nvml;
}

absl::StatusOr<DiscoveredTopology> Nvml(const AgentOptions& options) {
  auto source = NvmlTopologySource::Open(NvmlOptions(options));
  if (!source.ok()) return source.status();
  auto topo = (*source)->Discover();
  if (!topo.ok()) return topo.status();
  return DiscoveredTopology{*std::move(topo), "nvml", ""};
}

// NVML when it loads, else the host alone (NUMA nodes and NICs from hwloc, no
// GPUs), so that a node without a driver still runs CPU jobs.
absl::StatusOr<DiscoveredTopology> NvmlOrHost(const AgentOptions& options) {
  AutoTopologySource chosen = OpenAutoTopologySource(NvmlOptions(options));
  auto topo = chosen.source->Discover();
  if (!topo.ok()) return topo.status();
  if (chosen.nvml_status.ok()) return DiscoveredTopology{*std::move(topo), "nvml", ""};
  return DiscoveredTopology{*std::move(topo), "host", std::string(chosen.nvml_status.message())};
}

}  // namespace

absl::StatusOr<DiscoveredTopology> DiscoverTopology(const AgentOptions& options) {
  switch (options.gpu_source) {
    case GpuSource::kFile:
      if (options.topology_file.empty() && options.topology_text.empty()) {
        return absl::InvalidArgumentError("the file GPU source needs a topology file");
      }
      return FromFile(options);
    case GpuSource::kFake: return Fake(options);
    case GpuSource::kNvml: return Nvml(options);
    case GpuSource::kAuto: break;
  }
  if (!options.topology_file.empty() || !options.topology_text.empty()) return FromFile(options);
  if (options.fake_gpus != 0) return Fake(options);
  return NvmlOrHost(options);
}

}  // namespace gpusched::agent
