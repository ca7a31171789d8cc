#pragma once

#include <string>

#include "absl/status/status.h"

namespace gpusched::agent {

// Whether `dir` (absolute, existing) is safe for a root agent to create job
// directories in: a directory, writable by the agent, and neither it nor any
// directory above it may be changed by another user. Whoever could rename an
// entry on the way could swap a job's directory for a link between the
// agent's checks and its writes, and have root write or chown where it
// points. A sticky directory (/tmp) of root's or the agent's protects what
// it holds.
// FailedPrecondition naming the directory at fault and what to change.
absl::Status CheckLogRoot(const std::string& dir);

}  // namespace gpusched::agent
