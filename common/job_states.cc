#include "common/job_states.h"

#include <string>
#include <utility>

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
    default: return false;
  }
}

namespace {

// Spelled out rather than read from JobState_Name(): the generated name
// functions build the descriptor pool of the proto files on first use,
// code and data that the daemon otherwise never runs or keeps, for a name.
constexpr std::pair<v1::JobState, absl::string_view> kJobStates[] = {
    {v1::JOB_STATE_PENDING, "PENDING"},     {v1::JOB_STATE_STARTING, "STARTING"},
    {v1::JOB_STATE_RUNNING, "RUNNING"},     {v1::JOB_STATE_COMPLETED, "COMPLETED"},
    {v1::JOB_STATE_FAILED, "FAILED"},       {v1::JOB_STATE_CANCELLED, "CANCELLED"},
    {v1::JOB_STATE_TIMEOUT, "TIMEOUT"},     {v1::JOB_STATE_NODE_FAIL, "NODE_FAIL"},
    {v1::JOB_STATE_PREEMPTED, "PREEMPTED"},
};

}  // namespace

absl::string_view StateName(v1::JobState state) {
  for (const auto& [s, name] : kJobStates) {
    if (s == state) return name;
  }
  return state == v1::JOB_STATE_UNSPECIFIED ? "UNSPECIFIED" : "UNKNOWN";
}

bool ParseStateName(absl::string_view text, v1::JobState* out) {
  std::string upper = absl::AsciiStrToUpper(text);
  absl::string_view name = upper;
  if (absl::StartsWith(name, "JOB_STATE_")) name.remove_prefix(10);
  for (const auto& [s, known] : kJobStates) {
    if (known == name) {
      *out = s;
      return true;
    }
  }
  return false;
}

namespace {

constexpr std::pair<v1::DependencyKind, absl::string_view> kDependencyKinds[] = {
    {v1::DEPENDENCY_KIND_AFTER, "after"},
    {v1::DEPENDENCY_KIND_AFTER_OK, "afterok"},
    {v1::DEPENDENCY_KIND_AFTER_NOT_OK, "afternotok"},
    {v1::DEPENDENCY_KIND_AFTER_ANY, "afterany"},
};

}  // namespace

absl::string_view DependencyKindName(v1::DependencyKind kind) {
  for (const auto& [k, name] : kDependencyKinds) {
    if (k == kind) return name;
  }
  return "?";
}

bool ParseDependencyKind(absl::string_view text, v1::DependencyKind* out) {
  for (const auto& [k, name] : kDependencyKinds) {
    if (name == text) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool IsPowerState(v1::NodeState state) {
  return state == v1::NODE_STATE_POWERED_DOWN || state == v1::NODE_STATE_POWERING_UP ||
         state == v1::NODE_STATE_POWERING_DOWN;
}

absl::string_view NodeStateName(v1::NodeState state) {
  switch (state) {
    case v1::NODE_STATE_UP: return "UP";
    case v1::NODE_STATE_DOWN: return "DOWN";
    case v1::NODE_STATE_NOT_RESPONDING: return "NOT_RESPONDING";
    case v1::NODE_STATE_POWERED_DOWN: return "POWERED_DOWN";
    case v1::NODE_STATE_POWERING_UP: return "POWERING_UP";
    case v1::NODE_STATE_POWERING_DOWN: return "POWERING_DOWN";
    default: return "UNKNOWN";
  }
}

}  // namespace gpusched
