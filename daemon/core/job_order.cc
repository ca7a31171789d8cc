#include "daemon/core/job_order.h"

#include "common/proto_time.h"

namespace gpusched::core {

QueueKey QueueKey::Of(const v1::Job& job) {
  return QueueKey{job.spec().priority(), absl::ToUnixNanos(FromProtoTime(job.submit_time())), job.id()};
}

}  // namespace gpusched::core
