#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::sim {

// The `nvidia-smi topo -m` fixtures of shared/fixtures/topo, compiled into
// the binary so that the shipped cluster specs work from any directory.
std::vector<std::string> EmbeddedFixtureNames();

// The text of a node type's topology: a name without '/' that is embedded
// wins; otherwise a file, relative to `base_dir` unless absolute. NotFound
// names both places looked in.
absl::StatusOr<std::string> LoadFixture(const std::string& name, const std::string& base_dir);

}  // namespace gpusched::sim
