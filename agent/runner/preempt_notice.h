#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace gpusched::agent {

// A preempted job (a spot interruption, a higher-priority job) is told when
// it must be gone: before its SIGTERM the agent writes this file in the
// job's log directory, and every rank has its path in
// GPUSCHED_PREEMPT_NOTICE from the start. A SIGTERM handler that finds the
// file checkpoints within the deadline; one that finds none was cancelled
// or timed out. Lines of key=value:
//   deadline_unix_ms=1764700800000
//   deadline=2026-12-02T18:40:00Z
//   seconds_left=115
//   reason=spot interruption of gpu017 (...)
inline constexpr char kPreemptNoticeEnv[] = "GPUSCHED_PREEMPT_NOTICE";

std::string PreemptNoticePath(const std::string& job_log_dir);

// Written through OpenJobFile: the directory belongs to the job's user, who
// could plant a link there for the agent to write through.
absl::Status WritePreemptNotice(const std::string& job_log_dir, absl::Time deadline, absl::Time now,
                                const std::string& reason);

// A new attempt starts without the notice an earlier one was given.
void ClearPreemptNotice(const std::string& job_log_dir);

}  // namespace gpusched::agent
