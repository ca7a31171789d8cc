#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::testing {

// One sample line of Prometheus' text exposition format.
struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Every sample in a /metrics body (comments skipped). Lines that do not
// parse are left out; tests then miss the value they look for and say so.
std::vector<MetricSample> ParseMetricsText(const std::string& text);

// The value of the one sample named `name` whose labels include `labels`;
// nullopt when there is none (or more than one: be more specific).
std::optional<double> FindMetric(const std::string& text, const std::string& name,
                                 const std::map<std::string, std::string>& labels = {});

}  // namespace gpusched::testing
