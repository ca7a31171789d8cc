#include "agent/gpu/nvml_topology_source.h"

#include <utility>

#include "agent/gpu/assemble_topology.h"
#include "agent/gpu/nvml_gpu_reader.h"

namespace gpusched::agent {

absl::StatusOr<std::unique_ptr<NvmlTopologySource>> NvmlTopologySource::Open(NvmlTopologyOptions options) {
  auto nvml = NvmlLibrary::Open(options.nvml_library);
  if (!nvml.ok()) return nvml.status();
  return std::unique_ptr<NvmlTopologySource>(new NvmlTopologySource(*std::move(nvml), std::move(options.host)));
}

NvmlTopologySource::NvmlTopologySource(std::unique_ptr<NvmlLibrary> nvml, HostOptions host)
    : nvml_(std::move(nvml)), host_(std::move(host)) {}

absl::StatusOr<topology::NodeTopology> NvmlTopologySource::Discover() {
  auto gpus = ReadNvmlGpus(*nvml_);
  if (!gpus.ok()) return gpus.status();
  auto host = HwlocHost::Load(host_);
  if (!host.ok()) return host.status();
  return AssembleTopology(*gpus, **host);
}

HostTopologySource::HostTopologySource(HostOptions host) : host_(std::move(host)) {}

absl::StatusOr<topology::NodeTopology> HostTopologySource::Discover() {
  auto host = HwlocHost::Load(host_);
  if (!host.ok()) return host.status();
  return AssembleTopology(NvmlGpus{}, **host);
}

AutoTopologySource OpenAutoTopologySource(NvmlTopologyOptions options) {
  HostOptions host = options.host;
  auto nvml = NvmlTopologySource::Open(std::move(options));
  if (nvml.ok()) return AutoTopologySource{*std::move(nvml), absl::OkStatus()};
  return AutoTopologySource{std::make_unique<HostTopologySource>(std::move(host)), nvml.status()};
}

}  // namespace gpusched::agent
