#pragma once

#include <string>
#include <vector>

#include "prometheus/metric_family.h"

namespace gpusched::metrics {

// Prometheus' text exposition format (version 0.0.4) of the families, as
// /metrics answers: # HELP and # TYPE lines, then one line per sample;
// histograms as _count, _sum and _bucket{le=...} (cumulative), summaries as
// _count, _sum and {quantile=...}, in the order prometheus-cpp's serializer
// writes them. Label values and help texts are escaped as the format asks;
// values print with 16 significant digits, NaN and +Inf/-Inf as Prometheus
// spells them. Uses prometheus-cpp's data types
// (header-only) without its library, so that the agent loads no C++ shared
// library for its metrics.
std::string TextFormatOf(const std::vector<prometheus::MetricFamily>& families);

}  // namespace gpusched::metrics
