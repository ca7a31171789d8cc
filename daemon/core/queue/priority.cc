#include "daemon/core/queue/priority.h"

#include <algorithm>


namespace gpusched::core {

v1::PriorityFactors PriorityScore::ToProto() const {
  v1::PriorityFactors out;
  out.set_age(age);
  out.set_fair_share(fair_share);
  out.set_tier(tier);
  out.set_job(job);
  out.set_size(size);
  out.set_total(total);
  return out;
}

PriorityScore ScoreJob(const v1::JobSpec& spec, absl::Time submitted, double fair_share, const PriorityContext& c) {
  const PriorityWeights& w = c.queues->weights;
  PriorityScore s;
  const absl::Duration waited = c.now - submitted;
  if (w.age_max > absl::ZeroDuration()) {
    s.age = std::clamp(absl::FDivDuration(waited, w.age_max), 0.0, 1.0);
  }
  s.fair_share = fair_share;
  const QueueSpec* queue = c.queues->Find(spec.queue());
  if (queue != nullptr && c.max_tier > 0) {
    s.tier = std::clamp(static_cast<double>(queue->tier) / static_cast<double>(c.max_tier), 0.0, 1.0);
  }
  s.job = static_cast<double>(spec.priority());
  if (c.cluster_gpus > 0) {
    s.size = std::clamp(static_cast<double>(spec.resources().gpus()) / static_cast<double>(c.cluster_gpus), 0.0, 1.0);
  }
  s.total = w.age * s.age + w.fair_share * s.fair_share + w.tier * s.tier + w.size * s.size + s.job;
  return s;
}

}  // namespace gpusched::core
