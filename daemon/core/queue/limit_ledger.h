#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "daemon/core/queue/queue_policy.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// What the placed jobs hold against the limits that keep a job from
// starting on free GPUs: its queue's GPU limits (in all, per user) and its
// array's limit on tasks at once. A value: a scheduling pass charges a copy
// for the jobs it plans to start, so that the second of two jobs that fit
// the limit only together waits.
class LimitLedger {
 public:
  explicit LimitLedger(const QueuePolicy& queues) : queues_(&queues) {}

  // Counts (sign +1) or uncounts (-1) a placed job.
  void Charge(const v1::Job& job, int sign);
  // Whether the job's array has as many tasks placed as it lets run at once.
  bool OverArrayLimit(const v1::Job& job) const;
  // Why the job may not start now because of its queue's GPU limits, or "".
  std::string QueueLimitReason(const v1::Job& job) const;
  // How many tasks of the array are placed.
  int32_t ArrayPlaced(uint64_t array_id) const;
  static std::string ArrayLimitReason(const v1::Job& job);

 private:
  const QueuePolicy* queues_;
  // Thousandths of GPUs held (HeldGpuMilli: a share or a MIG instance is a
  // part of a GPU), by queue and by (queue, user).
  std::map<std::string, int64_t> queue_gpus_;
  std::map<std::pair<std::string, std::string>, int64_t> user_gpus_;
  absl::flat_hash_map<uint64_t, int32_t> array_placed_;  // placed tasks, by array
};

}  // namespace gpusched::core
