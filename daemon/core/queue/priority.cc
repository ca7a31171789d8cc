#include "daemon/core/queue/priority.h"

#include <algorithm>
#include <cmath>

namespace gpusched::core {

v1::PriorityFactors PriorityScore::ToProto() const {
  v1::PriorityFactors out;
  out.set_age(age);
  out.set_fair_share(fair_share);
  out.set_tier(tier);
  out.set_job(job);
  out.set_size(size);
  out.set_short_work(short_work);
  out.set_total(total);
  if (expected_run != absl::InfiniteDuration()) out.set_expected_run_s(absl::ToInt64Seconds(expected_run));
  if (estimate.known()) {
    out.set_estimate_typical_s(absl::ToInt64Seconds(estimate.typical));
    out.set_estimate_high_s(absl::ToInt64Seconds(estimate.high));
    out.set_estimate_samples(estimate.samples);
    out.set_estimate_basis(core::ToProto(estimate.basis));
  }
  return out;
}

PriorityScore ScoreJob(const v1::JobSpec& spec, absl::Time submitted, double fair_share, absl::Duration expected_run,
                       const PriorityContext& c) {
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
  if (expected_run != absl::InfiniteDuration()) {
    // Expected GPU-hours on a log scale: a 1-GPU job of minutes scores ~1,
    // 16 GPUs for a day ~0.1. Log, because run times span six orders of
    // magnitude and the rank should still tell an hour from a day.
    const double gpu_hours =
        std::max<int64_t>(1, spec.resources().gpus()) * std::max(60.0, absl::ToDoubleSeconds(expected_run)) / 3600;
    s.short_work = 1.0 / (1.0 + std::log2(1.0 + gpu_hours));
  }
  s.total = w.short_work * s.short_work + w.age * s.age + w.fair_share * s.fair_share + w.tier * s.tier +
            w.size * s.size + s.job;
  return s;
}

}  // namespace gpusched::core
