#pragma once

#include <cstdint>
#include <tuple>

#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// The order in which pending jobs are considered: higher priority first, then
// earlier submission, then lower id (so the order is total and deterministic).
struct QueueKey {
  int64_t priority = 0;
  int64_t submit_ns = 0;
  uint64_t job_id = 0;

  static QueueKey Of(const v1::Job& job);
  bool operator<(const QueueKey& other) const {
    return std::tuple(-priority, submit_ns, job_id) < std::tuple(-other.priority, other.submit_ns, other.job_id);
  }
};

}  // namespace gpusched::core
