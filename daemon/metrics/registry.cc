#include "daemon/metrics/registry.h"

#include <algorithm>
#include <limits>

namespace gpusched::metrics {
namespace {

void Add(std::atomic<double>& value, double by) {
  double current = value.load(std::memory_order_relaxed);
  while (!value.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

}  // namespace

void Counter::Increment(double by) {
  if (by < 0) return;
  Add(value_, by);
}

void Gauge::Increment(double by) { Add(value_, by); }

namespace {

Histogram::BucketBoundaries Ascending(Histogram::BucketBoundaries boundaries) {
  std::sort(boundaries.begin(), boundaries.end());
  return boundaries;
}

}  // namespace

Histogram::Histogram(BucketBoundaries boundaries)
    : boundaries_(Ascending(std::move(boundaries))), counts_(boundaries_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  // The first bound at or above the value: buckets are "less than or equal".
  const size_t bucket = std::lower_bound(boundaries_.begin(), boundaries_.end(), value) - boundaries_.begin();
  MutexLock lock(&mu_);
  ++counts_[bucket];
  sum_ += value;
}

void Histogram::Fill(prometheus::ClientMetric& metric) const {
  MutexLock lock(&mu_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    cumulative += counts_[i];
    metric.histogram.bucket.push_back(
        {cumulative, i < boundaries_.size() ? boundaries_[i] : std::numeric_limits<double>::infinity()});
  }
  metric.histogram.sample_count = cumulative;
  metric.histogram.sample_sum = sum_;
}

std::vector<prometheus::MetricFamily> Registry::Collect() const {
  MutexLock lock(&mu_);
  std::vector<prometheus::MetricFamily> families;
  for (const auto& family : families_) family->CollectInto(families);
  return families;
}

}  // namespace gpusched::metrics
