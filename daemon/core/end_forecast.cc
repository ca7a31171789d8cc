#include "daemon/core/end_forecast.h"

#include <algorithm>

#include "common/proto_time.h"

namespace gpusched::core {

absl::Time EndForecast::EndOf(const v1::Job& job, Which which) const {
  const absl::Time now = clock_.Now();
  if (job.stopping_as() != v1::JOB_STATE_UNSPECIFIED) return StoppedBy();
  const absl::Time started = job.has_start_time() ? FromProtoTime(job.start_time()) : now;
  if (job.spec().time_limit_s() > 0) {
    return std::max(now, started + absl::Seconds(job.spec().time_limit_s())) + kill_grace_;
  }
  if (head_blocks_after_ <= absl::ZeroDuration()) return absl::InfiniteFuture();
  const RuntimeEstimate estimate = history_.Estimate(job.spec());
  if (!estimate.known()) return absl::InfiniteFuture();
  // A job already past its estimate is expected to run a tenth as long
  // again (at least a minute): jobs that have run long tend to run longer.
  const absl::Duration ran = now - started;
  const absl::Duration run = which == Which::kHigh ? estimate.high : estimate.typical;
  return std::max(started + run, now + std::max(absl::Minutes(1), ran / 10));
}

absl::Duration EndForecast::Run(const v1::JobSpec& spec, bool mean) const {
  return Run(spec, history_.Estimate(spec), mean);
}

absl::Duration EndForecast::Run(const v1::JobSpec& spec, const RuntimeEstimate& estimate, bool mean) {
  absl::Duration expected = spec.time_limit_s() > 0 ? absl::Seconds(spec.time_limit_s()) : absl::InfiniteDuration();
  if (estimate.known()) expected = std::min(expected, mean ? estimate.mean : estimate.typical);
  return expected;
}

bool EndForecast::EndsBy(const v1::Job& job, absl::Time when, bool trust_estimates) const {
  const absl::Time now = clock_.Now();
  if (job.spec().time_limit_s() > 0) return now + absl::Seconds(job.spec().time_limit_s()) + kill_grace_ <= when;
  if (!trust_estimates) return false;
  const RuntimeEstimate estimate = history_.Estimate(job.spec());
  return estimate.known() && now + estimate.high <= when;
}

absl::Duration StarvationBound(absl::Duration head_blocks_after, int64_t gpus, int64_t largest_node_gpus) {
  if (largest_node_gpus <= 0 || gpus <= largest_node_gpus || head_blocks_after <= absl::ZeroDuration() ||
      head_blocks_after == absl::InfiniteDuration()) {
    return head_blocks_after;
  }
  const double size = static_cast<double>(gpus) / static_cast<double>(kBoundGangNodes * largest_node_gpus);
  return head_blocks_after * std::min(size * size, kMaxBoundScale);
}

absl::Duration EndForecast::BoundOf(const v1::Job& job, int64_t largest_node_gpus) const {
  return StarvationBound(head_blocks_after_, job.spec().resources().gpus(), largest_node_gpus);
}

bool EndForecast::WaitedPastBound(const v1::Job& job, int64_t largest_node_gpus, double times) const {
  return clock_.Now() - FromProtoTime(job.submit_time()) >= times * BoundOf(job, largest_node_gpus);
}

}  // namespace gpusched::core
