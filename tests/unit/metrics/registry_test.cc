#include "daemon/metrics/registry.h"

#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "common/io/metrics/text_format.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace gpusched::metrics {
namespace {

// prometheus-cpp's registry, which the daemon linked before, is the oracle:
// the same updates to both must scrape the same text.
TEST_CASE("the registry scrapes as prometheus-cpp's does after the same random updates") {
  Registry ours;
  prometheus::Registry theirs;
  auto& our_counters = BuildCounter().Name("gpusched_t_total").Help("things").Register(ours);
  auto& their_counters = prometheus::BuildCounter().Name("gpusched_t_total").Help("things").Register(theirs);
  auto& our_gauges = BuildGauge().Name("gpusched_g").Help("levels").Register(ours);
  auto& their_gauges = prometheus::BuildGauge().Name("gpusched_g").Help("levels").Register(theirs);
  auto& our_histograms = BuildHistogram().Name("gpusched_h_seconds").Help("waits").Register(ours);
  auto& their_histograms = prometheus::BuildHistogram().Name("gpusched_h_seconds").Help("waits").Register(theirs);
  const Histogram::BucketBoundaries buckets = {0.001, 0.01, 0.1, 1, 10};
  BuildGauge().Name("gpusched_unused").Help("a family with no series").Register(ours);
  prometheus::BuildGauge().Name("gpusched_unused").Help("a family with no series").Register(theirs);

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(-5, 50);
  const std::vector<std::string> queues = {"a", "b", "c"};
  for (int step = 0; step < 2000; ++step) {
    const Labels labels = {{"queue", queues[rng() % queues.size()]}, {"state", rng() % 2 ? "x" : "y"}};
    const double v = value(rng);
    switch (rng() % 6) {
      case 0:
        our_counters.Add(labels).Increment(v);  // negative: ignored by both
        their_counters.Add(labels).Increment(v);
        break;
      case 1:
        our_gauges.Add(labels).Set(v);
        their_gauges.Add(labels).Set(v);
        break;
      case 2:
        our_gauges.Add(labels).Decrement(v);
        their_gauges.Add(labels).Decrement(v);
        break;
      case 3:
        our_histograms.Add(labels, buckets).Observe(v / 10);
        their_histograms.Add(labels, buckets).Observe(v / 10);
        break;
      case 4:
        if (rng() % 10 == 0) {
          our_gauges.Remove(&our_gauges.Add(labels));
          their_gauges.Remove(&their_gauges.Add(labels));
        }
        break;
      default:
        our_histograms.Add(labels, buckets).Observe(1);  // exactly on a bound: in its bucket
        their_histograms.Add(labels, buckets).Observe(1);
        break;
    }
  }
  // prometheus-cpp lists a family's series in hash order; ours by labels.
  std::vector<prometheus::MetricFamily> expected = theirs.Collect();
  for (prometheus::MetricFamily& family : expected) {
    std::sort(family.metric.begin(), family.metric.end(),
              [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) { return a.label < b.label; });
  }
  CHECK(TextFormatOf(ours.Collect()) == TextFormatOf(expected));
}

TEST_CASE("a series is made once per label set and outlives other series' removal") {
  Registry registry;
  auto& family = BuildCounter().Name("gpusched_x_total").Help("x").Register(registry);
  Counter& a = family.Add({{"k", "a"}});
  a.Increment(2);
  CHECK(&family.Add({{"k", "a"}}) == &a);
  Counter& b = family.Add({{"k", "b"}});
  family.Remove(&b);
  a.Increment();
  CHECK(a.Value() == 3);
  CHECK(TextFormatOf(registry.Collect()) ==
        "# HELP gpusched_x_total x\n"
        "# TYPE gpusched_x_total counter\n"
        "gpusched_x_total{k=\"a\"} 3\n");
  family.Remove(&a);
  CHECK(registry.Collect().empty());  // a family with no series is not scraped
}

}  // namespace
}  // namespace gpusched::metrics
