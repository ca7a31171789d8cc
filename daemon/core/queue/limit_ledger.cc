#include "daemon/core/queue/limit_ledger.h"

#include "absl/strings/str_cat.h"
#include "common/gpu_fraction.h"

namespace gpusched::core {

void LimitLedger::Charge(const v1::Job& job, int sign) {
  const int64_t gpus = sign * HeldGpuMilli(job.spec().resources());
  queue_gpus_[job.spec().queue()] += gpus;
  user_gpus_[{job.spec().queue(), job.spec().user()}] += gpus;
  if (job.array().max_running() > 0) {
    auto it = array_placed_.try_emplace(job.array().array_id(), 0).first;
    if ((it->second += sign) <= 0) array_placed_.erase(it);
  }
}

int32_t LimitLedger::ArrayPlaced(uint64_t array_id) const {
  auto it = array_placed_.find(array_id);
  return it == array_placed_.end() ? 0 : it->second;
}

std::string LimitLedger::ArrayLimitReason(const v1::Job& job) {
  return absl::StrCat("waiting for array ", job.array().array_id(), "'s limit: at most ", job.array().max_running(),
                      " of its tasks at once");
}

bool LimitLedger::OverArrayLimit(const v1::Job& job) const {
  const int32_t limit = job.array().max_running();
  return limit > 0 && ArrayPlaced(job.array().array_id()) >= limit;
}

std::string LimitLedger::QueueLimitReason(const v1::Job& job) const {
  const QueueSpec* queue = queues_->Find(job.spec().queue());
  if (queue == nullptr) return "";
  const int64_t gpus = HeldGpuMilli(job.spec().resources());
  if (queue->max_gpus > 0) {
    auto it = queue_gpus_.find(queue->name);
    const int64_t held = it == queue_gpus_.end() ? 0 : it->second;
    if (held + gpus > queue->max_gpus * 1000) {
      return absl::StrCat("waiting for queue ", queue->name, "'s GPU limit: its jobs hold ", held / 1000.0, " of ",
                          queue->max_gpus, " GPUs");
    }
  }
  if (queue->max_gpus_per_user > 0) {
    auto it = user_gpus_.find({queue->name, job.spec().user()});
    const int64_t held = it == user_gpus_.end() ? 0 : it->second;
    if (held + gpus > queue->max_gpus_per_user * 1000) {
      return absl::StrCat("waiting for queue ", queue->name, "'s per-user GPU limit: ", job.spec().user(),
                          "'s jobs hold ", held / 1000.0, " of ", queue->max_gpus_per_user, " GPUs");
    }
  }
  return "";
}

}  // namespace gpusched::core
