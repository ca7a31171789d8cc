#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/gpu/topology_source.h"

namespace gpusched::agent {

// A node described by a saved `nvidia-smi topo -m` output: the wiring of a
// real machine without its GPUs, for `gpuschedd dev`, tests and operators
// rehearsing a cluster. topo -m does not name the GPU model or its memory, so
// the caller supplies them; UUIDs are made up from the node name.
struct TopologyFileOptions {
  std::string path;  // read unless `text` is set; then only named in errors
  std::optional<std::string> text;
  std::string node_name;
  std::string gpu_model;
  int64_t gpu_memory_mb = 0;
};

class TopologyFileSource final : public TopologySource {
 public:
  explicit TopologyFileSource(TopologyFileOptions options);
  // NotFound when the file cannot be read; InvalidArgument, naming the file
  // and line, when it is not topo -m output.
  absl::StatusOr<topology::NodeTopology> Discover() override;

 private:
  TopologyFileOptions options_;
};

}  // namespace gpusched::agent
