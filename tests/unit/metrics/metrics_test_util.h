#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "common/io/metrics/text_format.h"
#include "prometheus/collectable.h"
#include "tests/support/metrics_text.h"

namespace gpusched::metrics::testing {

// The registry as a scrape would show it: read through the endpoint's text
// format, so that names and labels are checked as Prometheus sees them.
inline std::string Scrape(const prometheus::Collectable& registry) { return TextFormatOf(registry.Collect()); }

inline double Value(const prometheus::Collectable& registry, const std::string& name,
                    const std::map<std::string, std::string>& labels = {}) {
  const std::string text = Scrape(registry);
  std::optional<double> value = gpusched::testing::FindMetric(text, name, labels);
  INFO("no single sample " << name << " in:\n" << text);
  REQUIRE(value.has_value());
  return *value;
}

// A histogram's cumulative count at upper bound `le`, matched by number so
// that the serializer's float formatting does not matter.
inline double Bucket(const prometheus::Collectable& registry, const std::string& histogram, double le) {
  const std::string text = Scrape(registry);
  for (const auto& sample : gpusched::testing::ParseMetricsText(text)) {
    auto it = sample.labels.find("le");
    if (sample.name != histogram + "_bucket" || it == sample.labels.end() || it->second == "+Inf") continue;
    const double bound = std::stod(it->second);
    if (std::abs(bound - le) <= 1e-9 * std::max(1.0, std::abs(le))) return sample.value;
  }
  FAIL("no bucket le=" << le << " of " << histogram << " in:\n" << text);
  return -1;
}

}  // namespace gpusched::metrics::testing
