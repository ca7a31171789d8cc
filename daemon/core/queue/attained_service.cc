#include "daemon/core/queue/attained_service.h"

#include <algorithm>

#include "common/proto_time.h"

namespace gpusched::core {

absl::Duration AttainedService(const v1::Job& job, absl::Time now) {
  absl::Duration ran = absl::Seconds(job.earlier_run_s());
  if (job.has_start_time()) ran += std::max(absl::ZeroDuration(), now - FromProtoTime(job.start_time()));
  return ran;
}

absl::Duration DemoteAfter(const v1::Job& job, const QueueSpec& queue) {
  if (queue.demote_after_s <= 0) return absl::InfiniteDuration();
  const int64_t gpus = queue.demote_after_per_gpu ? std::max<int64_t>(1, job.spec().resources().gpus()) : 1;
  return absl::Seconds(queue.demote_after_s) * gpus;
}

bool Demoted(const v1::Job& job, const QueueSpec* queue, absl::Time now) {
  if (queue == nullptr) return false;
  const absl::Duration after = DemoteAfter(job, *queue);
  return after != absl::InfiniteDuration() && AttainedService(job, now) >= after;
}

}  // namespace gpusched::core
