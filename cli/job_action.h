#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command_context.h"
#include "cli/job_id.h"

namespace gpusched::cli {

// Does `act` to each job in turn: "<done> job N" on stdout (with `json`,
// the job `act` returns, as a JSON line), or the daemon's message on stderr;
// returns 1 if any of them failed. Every id is checked (and every array task
// "17_3" found) before the first is acted on, and an unreachable daemon
// stops at once. `act` gets the job's id and the reference as typed.
absl::StatusOr<int> ForEachJob(const std::vector<std::string>& jobs, const std::string& command,
                               const std::string& done, bool json, CommandContext& cmd,
                               const std::function<absl::StatusOr<v1::Job>(uint64_t, const JobRef&)>& act);

}  // namespace gpusched::cli
