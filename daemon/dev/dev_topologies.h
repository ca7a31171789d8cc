#pragma once

#include <string>

namespace gpusched::dev {

// The text of a `nvidia-smi topo -m` fixture compiled into the binary, by file
// name ("hgx-h200-8gpu-12nic.txt"); "" when the build did not find it.
std::string EmbeddedTopology(const std::string& file);

}  // namespace gpusched::dev
