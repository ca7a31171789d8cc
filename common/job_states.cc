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
