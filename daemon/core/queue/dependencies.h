#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// Where a job a dependency names stands: still active (pending, starting,
// running) or ended, and how. nullopt: no such job.
using JobStateLookup = std::function<std::optional<v1::JobState>(uint64_t job_id)>;

// At most this many dependencies per job.
inline constexpr int kMaxDependencies = 64;

// Checks a spec's dependencies at submit: known kinds, existing jobs other
// than itself (`own_id`). Errors name the field: "spec.dependencies[1]: ...".
absl::Status ValidateDependencies(const v1::JobSpec& spec, uint64_t own_id, const JobStateLookup& state_of);

struct DependencyVerdict {
  enum Kind { kMet, kWaiting, kNever } kind = kMet;
  std::string reason;  // kWaiting: what it waits for; kNever: which one can no longer be met
};

// Whether every dependency of `spec` is met now, which one is still awaited,
// or which one never will be (an afterok whose job failed, ...).
DependencyVerdict CheckDependencies(const v1::JobSpec& spec, const JobStateLookup& state_of);

// "afterok:12", as `gpusched submit --dependency` takes it.
std::string DescribeDependency(const v1::Dependency& dependency);

}  // namespace gpusched::core
