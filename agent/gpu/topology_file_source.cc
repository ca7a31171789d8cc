#include "agent/gpu/topology_file_source.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/topology/nvidia_smi_topo.h"

namespace gpusched::agent {

TopologyFileSource::TopologyFileSource(TopologyFileOptions options) : options_(std::move(options)) {}

absl::StatusOr<topology::NodeTopology> TopologyFileSource::Discover() {
  if (options_.gpu_memory_mb <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("GPU memory must be > 0 MB, got ", options_.gpu_memory_mb));
  }
  std::string text;
  if (options_.text.has_value()) {
    text = *options_.text;
  } else {
    std::ifstream in(options_.path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read topology file ", options_.path));
    std::stringstream content;
    content << in.rdbuf();
    text = content.str();
  }
  auto parsed = topology::ParseNvidiaSmiTopo(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(options_.path, ": ", parsed.status().message()));
  }
  topology::NodeTopology node = *std::move(parsed);
  for (topology::GpuInfo& gpu : node.gpus()) {
    gpu.uuid = absl::StrCat("GPU-file-", options_.node_name, "-", gpu.index);
    gpu.model = options_.gpu_model;
    gpu.memory_mb = options_.gpu_memory_mb;
  }
  // topo -m prints NV<n> for NVSwitch and point-to-point NVLink alike; an
  // all-to-all mesh of equal links on 4+ GPUs is NVSwitch on every real system.
  node.set_nvswitch(node.LooksLikeNvSwitch());
  return node;
}

}  // namespace gpusched::agent
