#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/gpu/hwloc_host.h"
#include "agent/gpu/nvml_library.h"
#include "agent/gpu/topology_source.h"

namespace gpusched::agent {

struct NvmlTopologyOptions {
  // A soname searched the usual way, or an absolute path (tests load a fake).
  std::string nvml_library = NvmlLibrary::kDefaultPath;
  HostOptions host;
};

// A real node: GPUs and their links from NVML, NUMA nodes and NICs from hwloc
// (see AssembleTopology for who says what).
class NvmlTopologySource final : public TopologySource {
 public:
  // Loads and initialises NVML now, so that a node without a usable driver
  // is known when the agent starts: Unavailable "NVML not available: ..."
  // saying why (library missing, too old, driver not loaded, ...).
  static absl::StatusOr<std::unique_ptr<NvmlTopologySource>> Open(NvmlTopologyOptions options);

  // Queries NVML and hwloc afresh on every call. Fails, naming the NVML call
  // and GPU, when a GPU cannot say what it is, or when hwloc cannot load.
  absl::StatusOr<topology::NodeTopology> Discover() override;

 private:
  NvmlTopologySource(std::unique_ptr<NvmlLibrary> nvml, HostOptions host);

  std::unique_ptr<NvmlLibrary> nvml_;
  HostOptions host_;
};

// The host alone, for nodes without NVIDIA GPUs or driver: NUMA nodes and
// NICs from hwloc, no GPUs.
class HostTopologySource final : public TopologySource {
 public:
  explicit HostTopologySource(HostOptions host = {});
  absl::StatusOr<topology::NodeTopology> Discover() override;

 private:
  HostOptions host_;
};

// What `--gpu-source auto` should use: NVML plus hwloc when NVML loads and
// initialises; otherwise the host alone, with `nvml_status` saying why NVML
// could not be used (for the log). Never fails for want of a driver.
struct AutoTopologySource {
  std::unique_ptr<TopologySource> source;
  absl::Status nvml_status;  // OK when `source` is NVML-backed
};
AutoTopologySource OpenAutoTopologySource(NvmlTopologyOptions options);

}  // namespace gpusched::agent
