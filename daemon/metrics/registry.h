#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpusched::metrics {

// gpuschedd's metric series: counters, gauges and histograms in families of
// labelled series, in a registry that /metrics collects. Written here rather
// than linked from prometheus-cpp's core library (whose interface it keeps:
// BuildCounter().Name(...).Help(...).Register(registry).Add(labels)): that
// library is C++ and shared only, and with it the daemon loaded the shared
// C++ runtime (1.7 MiB resident). Collects into prometheus-cpp's data types
// (header-only), which the endpoint writes (common/io/metrics/text_format.h).
//
// Thread-safe: series are updated from any thread while the endpoint's
// thread collects.

using Labels = std::map<std::string, std::string>;

// Only goes up: a negative increment is ignored, as Prometheus' counters
// must never fall.
class Counter {
 public:
  static constexpr prometheus::MetricType kType = prometheus::MetricType::Counter;
  void Increment(double by = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }
  void Fill(prometheus::ClientMetric& metric) const { metric.counter.value = Value(); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  static constexpr prometheus::MetricType kType = prometheus::MetricType::Gauge;
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Increment(double by = 1);
  void Decrement(double by = 1) { Increment(-by); }
  double Value() const { return value_.load(std::memory_order_relaxed); }
  void Fill(prometheus::ClientMetric& metric) const { metric.gauge.value = Value(); }

 private:
  std::atomic<double> value_{0};
};

// Counts of observations at or below each upper bound (sorted ascending if
// given otherwise), and above all of them (+Inf), with their sum.
class Histogram {
 public:
  static constexpr prometheus::MetricType kType = prometheus::MetricType::Histogram;
  using BucketBoundaries = std::vector<double>;
  explicit Histogram(BucketBoundaries boundaries);
  void Observe(double value);
  void Fill(prometheus::ClientMetric& metric) const;

 private:
  const BucketBoundaries boundaries_;
  mutable Mutex mu_;
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket, not cumulative; the last is +Inf
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
};

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  // Nothing when the family has no series yet.
  virtual void CollectInto(std::vector<prometheus::MetricFamily>& out) const = 0;
};

// One metric name: a series per distinct label set.
template <class Metric>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}

  // The series with these labels, made with `args` (a histogram's bucket
  // boundaries) if it is new. Stays valid until Remove.
  template <class... Args>
  Metric& Add(const Labels& labels, Args&&... args) {
    MutexLock lock(&mu_);
    std::unique_ptr<Metric>& series = series_[labels];
    if (!series) series = std::make_unique<Metric>(std::forward<Args>(args)...);
    return *series;
  }

  void Remove(Metric* metric) {
    MutexLock lock(&mu_);
    for (auto it = series_.begin(); it != series_.end(); ++it) {
      if (it->second.get() == metric) {
        series_.erase(it);
        return;
      }
    }
  }

  void CollectInto(std::vector<prometheus::MetricFamily>& out) const override {
    MutexLock lock(&mu_);
    if (series_.empty()) return;
    prometheus::MetricFamily& family = out.emplace_back();
    family.name = name_;
    family.help = help_;
    family.type = Metric::kType;
    for (const auto& [labels, series] : series_) {
      prometheus::ClientMetric& metric = family.metric.emplace_back();
      for (const auto& [name, value] : labels) metric.label.push_back({name, value});
      series->Fill(metric);
    }
  }

 private:
  const std::string name_;
  const std::string help_;
  mutable Mutex mu_;
  // By labels: scrapes list them in one order.
  std::map<Labels, std::unique_ptr<Metric>> series_ ABSL_GUARDED_BY(mu_);
};

class Registry final : public prometheus::Collectable {
 public:
  // The families in the order they were registered.
  std::vector<prometheus::MetricFamily> Collect() const override;

  template <class Metric>
  Family<Metric>& AddFamily(std::string name, std::string help) {
    auto family = std::make_unique<Family<Metric>>(std::move(name), std::move(help));
    Family<Metric>& added = *family;
    MutexLock lock(&mu_);
    families_.push_back(std::move(family));
    return added;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
};

template <class Metric>
class FamilyBuilder {
 public:
  FamilyBuilder& Name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  FamilyBuilder& Help(std::string help) {
    help_ = std::move(help);
    return *this;
  }
  Family<Metric>& Register(Registry& registry) { return registry.AddFamily<Metric>(name_, help_); }

 private:
  std::string name_;
  std::string help_;
};

inline FamilyBuilder<Counter> BuildCounter() { return {}; }
inline FamilyBuilder<Gauge> BuildGauge() { return {}; }
inline FamilyBuilder<Histogram> BuildHistogram() { return {}; }

}  // namespace gpusched::metrics
