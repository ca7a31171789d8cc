#pragma once

#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED: nothing more
// will happen (a requeued job is PENDING again instead).
bool IsTerminal(v1::JobState state);

// "PENDING", "RUNNING", ...: the name without the enum prefix, for people.
absl::string_view StateName(v1::JobState state);

// "UP", "NOT_RESPONDING", "DOWN"; "UNKNOWN" otherwise.
absl::string_view NodeStateName(v1::NodeState state);
// POWERED_DOWN, POWERING_UP or POWERING_DOWN: the states only the nodes of
// elastic pools have, off or changing power by design (not failures).
bool IsPowerState(v1::NodeState state);

// Accepts "running", "RUNNING" or "JOB_STATE_RUNNING".
bool ParseStateName(absl::string_view text, v1::JobState* out);

// "after", "afterok", "afternotok", "afterany": Slurm's --dependency words,
// which the CLI takes and shows and the daemon's reasons use; "?" otherwise.
absl::string_view DependencyKindName(v1::DependencyKind kind);
bool ParseDependencyKind(absl::string_view text, v1::DependencyKind* out);

}  // namespace gpusched
