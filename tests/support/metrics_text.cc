#include "tests/support/metrics_text.h"

#include <limits>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace gpusched::testing {
namespace {

// Parses `{a="x",b="y\"z"}` from text[at] on; returns the index after '}',
// or npos.
size_t ParseLabels(const std::string& text, size_t at, std::map<std::string, std::string>& labels) {
  ++at;  // '{'
  while (at < text.size()) {
    if (text[at] == '}') return at + 1;
    if (text[at] == ',' || text[at] == ' ') {
      ++at;
      continue;
    }
    const size_t eq = text.find('=', at);
    if (eq == std::string::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return std::string::npos;
    std::string name = text.substr(at, eq - at);
    std::string value;
    at = eq + 2;
    while (at < text.size() && text[at] != '"') {
      if (text[at] == '\\' && at + 1 < text.size()) {
        ++at;
        value += text[at] == 'n' ? '\n' : text[at];
      } else {
        value += text[at];
      }
      ++at;
    }
    if (at >= text.size()) return std::string::npos;
    labels[name] = value;
    ++at;  // closing quote
  }
  return std::string::npos;
}

}  // namespace

std::vector<MetricSample> ParseMetricsText(const std::string& text) {
  std::vector<MetricSample> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    MetricSample sample;
    size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) continue;
    sample.name = line.substr(0, at);
    if (line[at] == '{') {
      at = ParseLabels(line, at, sample.labels);
      if (at == std::string::npos) continue;
    }
    std::string rest(absl::StripAsciiWhitespace(line.substr(at)));
    rest = rest.substr(0, rest.find(' '));  // a timestamp may follow
    if (rest == "+Inf") {
      sample.value = std::numeric_limits<double>::infinity();
    } else if (!absl::SimpleAtod(rest, &sample.value)) {
      continue;
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::optional<double> FindMetric(const std::string& text, const std::string& name,
                                 const std::map<std::string, std::string>& labels) {
  std::optional<double> found;
  for (const MetricSample& sample : ParseMetricsText(text)) {
    if (sample.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = sample.labels.find(key);
      match = match && it != sample.labels.end() && it->second == value;
    }
    if (!match) continue;
    if (found.has_value()) return std::nullopt;
    found = sample.value;
  }
  return found;
}

}  // namespace gpusched::testing
