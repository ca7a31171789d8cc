#include "daemon/core/queue/attained_service.h"

#include <algorithm>

#include "common/gpu_fraction.h"
#include "common/proto_time.h"

namespace gpusched::core {

absl::Duration AttainedService(const v1::Job& job, absl::Time now) {
  absl::Duration ran = absl::Seconds(job.earlier_run_s());
  if (job.has_start_time()) ran += std::max(absl::ZeroDuration(), now - FromProtoTime(job.start_time()));
  return ran;
}

absl::Duration DemoteAfter(const v1::Job& job, const QueueSpec& queue) {
  if (queue.demote_after_s <= 0) return absl::InfiniteDuration();
  // GPUs as limits and fair share count them (a share or a MIG instance is a
  // part of one), at least one: a job holding less than a GPU has no gang to
  // gather again.
  const double gpus = queue.demote_after_per_gpu ? std::max(1.0, HeldGpus(job.spec().resources())) : 1.0;
  return absl::Seconds(queue.demote_after_s) * gpus;
}

bool Demoted(const v1::Job& job, const QueueSpec* queue, absl::Time now) {
  if (queue == nullptr) return false;
  const absl::Duration after = DemoteAfter(job, *queue);
  return after != absl::InfiniteDuration() && AttainedService(job, now) >= after;
}

}  // namespace gpusched::core
