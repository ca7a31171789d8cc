#include "daemon/core/queue/dependencies.h"

#include "absl/strings/str_cat.h"
#include "common/job_states.h"

namespace gpusched::core {
namespace {

// What the dependency waits for, in words.
std::string Awaited(const v1::Dependency& d) {
  switch (d.kind()) {
    case v1::DEPENDENCY_KIND_AFTER: return absl::StrCat("job ", d.job_id(), " to start");
    case v1::DEPENDENCY_KIND_AFTER_OK: return absl::StrCat("job ", d.job_id(), " to complete");
    case v1::DEPENDENCY_KIND_AFTER_NOT_OK: return absl::StrCat("job ", d.job_id(), " to fail");
    default: return absl::StrCat("job ", d.job_id(), " to end");
  }
}

}  // namespace

std::string DescribeDependency(const v1::Dependency& dependency) {
  return absl::StrCat(DependencyKindName(dependency.kind()), ":", dependency.job_id());
}

absl::Status ValidateDependencies(const v1::JobSpec& spec, uint64_t own_id, const JobStateLookup& state_of) {
  if (spec.dependencies_size() > kMaxDependencies) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.dependencies: ", spec.dependencies_size(), " dependencies, at most ", kMaxDependencies));
  }
  for (int i = 0; i < spec.dependencies_size(); ++i) {
    const v1::Dependency& d = spec.dependencies(i);
    const std::string field = absl::StrCat("spec.dependencies[", i, "]");
    if (!v1::DependencyKind_IsValid(d.kind()) || d.kind() == v1::DEPENDENCY_KIND_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".kind: unknown value ", d.kind()));
    }
    if (d.job_id() == own_id) return absl::InvalidArgumentError(absl::StrCat(field, ": a job cannot wait for itself"));
    if (!state_of(d.job_id()).has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": there is no job ", d.job_id()));
    }
  }
  return absl::OkStatus();
}

DependencyVerdict CheckDependencies(const v1::JobSpec& spec, const JobStateLookup& state_of) {
  for (const v1::Dependency& d : spec.dependencies()) {
    const std::optional<v1::JobState> state = state_of(d.job_id());
    if (!state.has_value()) {
      return {DependencyVerdict::kNever,
              absl::StrCat("dependency ", DescribeDependency(d), ": job ", d.job_id(), " is unknown")};
    }
    const bool ended = IsTerminal(*state);
    const bool completed = *state == v1::JOB_STATE_COMPLETED;
    bool met = false;
    bool never = false;
    switch (d.kind()) {
      case v1::DEPENDENCY_KIND_AFTER:
        met = ended || *state == v1::JOB_STATE_STARTING || *state == v1::JOB_STATE_RUNNING;
        break;
      case v1::DEPENDENCY_KIND_AFTER_OK:
        met = completed;
        never = ended && !completed;
        break;
      case v1::DEPENDENCY_KIND_AFTER_NOT_OK:
        met = ended && !completed;
        never = completed;
        break;
      default: met = ended; break;
    }
    if (never) {
      return {DependencyVerdict::kNever, absl::StrCat("dependency never satisfied: job ", d.job_id(), " ended ",
                                                      StateName(*state), " (", DescribeDependency(d), ")")};
    }
    if (!met) {
      return {DependencyVerdict::kWaiting, absl::StrCat("waiting for ", Awaited(d), " (", DescribeDependency(d), ")")};
    }
  }
  return {};
}

}  // namespace gpusched::core
