#pragma once

#include "absl/status/statusor.h"
#include "cli/command_context.h"
#include "cli/submit_options.h"

namespace gpusched::cli {

// Prints "Submitted job <id>" (or the SubmitJobResponse as JSON). With --wait
// it then blocks until the job ends, prints its final state (the Job as JSON
// with --json, one document per line) and returns 0 only for COMPLETED.
absl::StatusOr<int> RunSubmit(const SubmitOptions& options, CommandContext& cmd);

// "Job 42 COMPLETED", "Job 42 FAILED (exit code 3): <reason>".
std::string FinalStateLine(const v1::Job& job);

}  // namespace gpusched::cli
