#pragma once

#include <ostream>

#include "cli/client.h"
#include "cli/local_context.h"

namespace gpusched::cli {

// What every command runs with. Commands return absl::StatusOr<int>: an error
// status is printed as one line and mapped by ExitCodeFor; a value is the exit
// code of a command that has already said what happened (a failed job, a
// partly failed cancel).
struct CommandContext {
  SchedulerClient& client;
  const LocalContext& local;
  std::ostream& out;
  std::ostream& err;
};

}  // namespace gpusched::cli
