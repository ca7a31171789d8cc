#include "common/job_states.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpusched {

bool IsTerminal(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_COMPLETED:
    case v1::JOB_STATE_FAILED:
    case v1::JOB_STATE_CANCELLED:
    case v1::JOB_STATE_TIMEOUT:
    case v1::JOB_STATE_NODE_FAIL:
    case v1::JOB_STATE_PREEMPTED:  // for good: a requeued job is PENDING again
      return true;
    default:
      return false;
  }
}

absl::string_view StateName(v1::JobState state) {
  const std::string& full = v1::JobState_Name(state);
  absl::string_view name = full;
  if (absl::StartsWith(name, "JOB_STATE_")) name.remove_prefix(10);
  return name;
}

bool ParseStateName(absl::string_view text, v1::JobState* out) {
  std::string upper = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(upper, "JOB_STATE_")) upper = "JOB_STATE_" + upper;
  return v1::JobState_Parse(upper, out) && *out != v1::JOB_STATE_UNSPECIFIED;
}

}  // namespace gpusched
