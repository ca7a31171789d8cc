#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpusched::agent {

// Finds a command the way execvp would, but in the job's PATH rather than the
// agent's (execvp/execvpe search the caller's own environment). A name with a
// '/' is returned as is; exec reports whether it exists. NotFound reads like
// the shell's error: exec "foo": No such file or directory.
absl::StatusOr<std::string> ResolveExecutable(const std::string& name, const std::string& path_env);

}  // namespace gpusched::agent
