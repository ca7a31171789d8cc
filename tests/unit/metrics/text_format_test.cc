#include "common/io/metrics/text_format.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "prometheus/summary.h"
#include "prometheus/text_serializer.h"

namespace gpusched::metrics {
namespace {

// prometheus-cpp's own serializer is the oracle: what the daemon's
// /metrics answered before the endpoint was written without its library.
// (It leaves a backslash or newline in a help text as it is, which the
// format forbids; the next case checks that help texts are escaped.)
TEST_CASE("the text format is what prometheus-cpp's serializer writes for the same registry") {
  prometheus::Registry registry;
  auto& counters = prometheus::BuildCounter().Name("gpusched_test_things_total").Help("Things seen").Register(registry);
  counters.Add({{"kind", "a"}}).Increment(3);
  counters.Add({{"kind", "quote\" back\\slash\nnewline"}}).Increment(0.5);
  auto& gauges = prometheus::BuildGauge().Name("gpusched_test_level").Help("A level").Register(registry);
  gauges.Add({}).Set(-1234567.125);
  gauges.Add({{"node", "n1"}, {"gpu", "0"}}).Set(1e-7);
  gauges.Add({{"node", "n2"}}).Set(std::numeric_limits<double>::infinity());
  auto& histograms = prometheus::BuildHistogram().Name("gpusched_test_wait_seconds").Help("Waits").Register(registry);
  auto& histogram = histograms.Add({{"queue", "q"}}, prometheus::Histogram::BucketBoundaries{0.005, 0.1, 1, 60});
  for (double v : {0.001, 0.05, 0.05, 3.0, 1000.0}) histogram.Observe(v);
  auto& summaries = prometheus::BuildSummary().Name("gpusched_test_pass_seconds").Help("").Register(registry);
  auto& summary = summaries.Add({}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.99, 0.001}});
  for (double v : {1.0, 2.0, 3.0}) summary.Observe(v);

  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  CHECK(TextFormatOf(families) == prometheus::TextSerializer().Serialize(families));
}

TEST_CASE("the text format, line by line, for a gauge with labels and a histogram") {
  prometheus::MetricFamily gauge;
  gauge.name = "gpusched_agent_connected";
  gauge.help = "1 while registered \\ or\nelse";
  gauge.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.label = {{"node", "a\"b"}};
  metric.gauge.value = 1;
  gauge.metric.push_back(metric);

  prometheus::MetricFamily histogram;
  histogram.name = "h";
  histogram.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric h;
  h.histogram.sample_count = 3;
  h.histogram.sample_sum = 2.5;
  h.histogram.bucket = {{1, 0.5}, {2, 1}};  // no +Inf bucket given: the format needs one
  histogram.metric.push_back(h);

  prometheus::MetricFamily empty;
  empty.name = "nothing_yet";
  empty.help = "a family with no samples";
  empty.type = prometheus::MetricType::Counter;

  CHECK(TextFormatOf({gauge, histogram, empty}) ==
        "# HELP gpusched_agent_connected 1 while registered \\\\ or\\nelse\n"
        "# TYPE gpusched_agent_connected gauge\n"
        "gpusched_agent_connected{node=\"a\\\"b\"} 1\n"
        "# TYPE h histogram\n"
        "h_count 3\n"
        "h_sum 2.5\n"
        "h_bucket{le=\"0.5\"} 1\n"
        "h_bucket{le=\"1\"} 2\n"
        "h_bucket{le=\"+Inf\"} 3\n"
        "# HELP nothing_yet a family with no samples\n"
        "# TYPE nothing_yet counter\n");
}

}  // namespace
}  // namespace gpusched::metrics
