#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpusched {

struct ProgramOutput {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, or 0
  std::string out;     // all of stdout
  std::string err;     // all of stderr
};

// Runs argv[0] (a path, no PATH search) with stdin from /dev/null, collecting
// stdout and stderr. The child leads its own process group, so that a program
// still running after `timeout` is killed with whatever it started, and the
// call returns DeadlineExceeded. Safe to call from a threaded process: the
// child only does async-signal-safe calls between fork and exec.
absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv, absl::Duration timeout);

}  // namespace gpusched
