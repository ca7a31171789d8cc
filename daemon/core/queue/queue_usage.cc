#include "daemon/core/queue/queue_usage.h"

#include <vector>

#include "common/gpu_fraction.h"

namespace gpusched::core {

void QueueUsage::Advance(absl::Time now, const JobTable& jobs) {
  std::vector<FairShare::Holding> running;
  running.reserve(jobs.placed().size());
  for (uint64_t id : jobs.placed()) {
    const v1::JobSpec& spec = jobs.at(id).job.spec();
    running.push_back({&spec.user(), &spec.account(), HeldGpus(spec.resources())});
  }
  fair_share_.Advance(now, running);
}

std::optional<v1::FairShareUsage> QueueUsage::DueToKeep(absl::Time now) {
  if (queues_.weights.fair_share == 0 || now - kept_ < kKeepEvery) return std::nullopt;
  return KeepNow(now);
}

v1::FairShareUsage QueueUsage::KeepNow(absl::Time now) {
  kept_ = now;
  return fair_share_.Snapshot();
}

}  // namespace gpusched::core
