#pragma once

#include "absl/status/statusor.h"
#include "cli/command_context.h"
#include "cli/submit_options.h"

namespace gpusched::cli {

// gpusched run: submits an interactive job with these options, waits for
// its GPUs, then runs the command on its first node attached to this
// terminal (a pseudo-terminal there when stdin and stdout are terminals
// here, pipes otherwise) and returns its exit code; the job ends with it.
// Inside `gpusched alloc` ($GPUSCHED_ALLOCATION) it runs the command in that
// allocation instead, queueing for nothing. Uses this process's descriptors
// 0-2 and signals, not cmd's streams: it is tested end to end.
absl::StatusOr<int> RunInteractive(const SubmitOptions& options, CommandContext& cmd);

// gpusched alloc: submits an interactive job, waits for its GPUs, holds
// them while a shell (or the command after --) runs here with
// GPUSCHED_ALLOCATION set, and gives them back when it exits, when this
// process dies, or when the job ends (its time limit), which ends the shell.
absl::StatusOr<int> RunAlloc(const SubmitOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
