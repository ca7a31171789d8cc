#include "common/io/metrics/text_format.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::metrics {
namespace {

using Label = prometheus::ClientMetric::Label;

const char* TypeName(prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter: return "counter";
    case prometheus::MetricType::Gauge: return "gauge";
    case prometheus::MetricType::Summary: return "summary";
    case prometheus::MetricType::Histogram: return "histogram";
    case prometheus::MetricType::Untyped: break;
  }
  return "untyped";
}

std::string Number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return absl::StrFormat("%.16g", value);
}

// Help text escapes backslash and newline; label values also the quote.
void AppendEscaped(std::string& out, const std::string& text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// NAME{labels,extra="value"} VALUE [TIMESTAMP]
void AppendSample(std::string& out, const std::string& name, const prometheus::ClientMetric& metric, const Label* extra,
                  const std::string& value) {
  out += name;
  if (!metric.label.empty() || extra != nullptr) {
    out += '{';
    bool first = true;
    auto append_label = [&](const Label& label) {
      if (!first) out += ',';
      first = false;
      absl::StrAppend(&out, label.name, "=\"");
      AppendEscaped(out, label.value, /*quote=*/true);
      out += '"';
    };
    for (const Label& label : metric.label) append_label(label);
    if (extra != nullptr) append_label(*extra);
    out += '}';
  }
  absl::StrAppend(&out, " ", value);
  if (metric.timestamp_ms != 0) absl::StrAppend(&out, " ", metric.timestamp_ms);
  out += '\n';
}

void AppendMetric(std::string& out, const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric) {
  const std::string& name = family.name;
  switch (family.type) {
    case prometheus::MetricType::Counter:
      AppendSample(out, name, metric, nullptr, Number(metric.counter.value));
      return;
    case prometheus::MetricType::Gauge: AppendSample(out, name, metric, nullptr, Number(metric.gauge.value)); return;
    case prometheus::MetricType::Untyped:
      AppendSample(out, name, metric, nullptr, Number(metric.untyped.value));
      return;
    case prometheus::MetricType::Summary:
      AppendSample(out, name + "_count", metric, nullptr, absl::StrCat(metric.summary.sample_count));
      AppendSample(out, name + "_sum", metric, nullptr, Number(metric.summary.sample_sum));
      for (const auto& q : metric.summary.quantile) {
        const Label quantile{"quantile", Number(q.quantile)};
        AppendSample(out, name, metric, &quantile, Number(q.value));
      }
      return;
    case prometheus::MetricType::Histogram: {
      AppendSample(out, name + "_count", metric, nullptr, absl::StrCat(metric.histogram.sample_count));
      AppendSample(out, name + "_sum", metric, nullptr, Number(metric.histogram.sample_sum));
      bool has_inf = false;
      for (const auto& bucket : metric.histogram.bucket) {
        has_inf = has_inf || std::isinf(bucket.upper_bound);
        const Label le{"le", Number(bucket.upper_bound)};
        AppendSample(out, name + "_bucket", metric, &le, absl::StrCat(bucket.cumulative_count));
      }
      // The format requires the +Inf bucket; it holds every sample.
      if (!has_inf) {
        const Label le{"le", "+Inf"};
        AppendSample(out, name + "_bucket", metric, &le, absl::StrCat(metric.histogram.sample_count));
      }
      return;
    }
  }
}

}  // namespace

std::string TextFormatOf(const std::vector<prometheus::MetricFamily>& families) {
  std::string out;
  for (const prometheus::MetricFamily& family : families) {
    if (!family.help.empty()) {
      absl::StrAppend(&out, "# HELP ", family.name, " ");
      AppendEscaped(out, family.help, /*quote=*/false);
      out += '\n';
    }
    absl::StrAppend(&out, "# TYPE ", family.name, " ", TypeName(family.type), "\n");
    for (const prometheus::ClientMetric& metric : family.metric) AppendMetric(out, family, metric);
  }
  return out;
}

}  // namespace gpusched::metrics
