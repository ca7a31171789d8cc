#include "daemon/core/queue/attained_service.h"

#include <algorithm>

#include "common/proto_time.h"

namespace gpusched::core {

absl::Duration AttainedService(const v1::Job& job, absl::Time now) {
  absl::Duration ran = absl::Seconds(job.earlier_run_s());
  if (job.has_start_time()) ran += std::max(absl::ZeroDuration(), now - FromProtoTime(job.start_time()));
  return ran;
}

bool Demoted(const v1::Job& job, const QueueSpec* queue, absl::Time now) {
  if (queue == nullptr || queue->demote_after_s <= 0) return false;
  return AttainedService(job, now) >= absl::Seconds(queue->demote_after_s);
}

}  // namespace gpusched::core
