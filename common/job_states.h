#pragma once

#include "absl/strings/string_view.h"

#include "gpusched/v1/types.pb.h"

namespace gpusched {

// COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL: nothing more will happen.
bool IsTerminal(v1::JobState state);

// "PENDING", "RUNNING", ...: the name without the enum prefix, for people.
absl::string_view StateName(v1::JobState state);

// Accepts "running", "RUNNING" or "JOB_STATE_RUNNING".
bool ParseStateName(absl::string_view text, v1::JobState* out);

}  // namespace gpusched
