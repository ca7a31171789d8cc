#include "tests/bench/report.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace gpusched::bench {

Percentiles Summarize(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::min(values.size() - 1, i == 0 ? 0 : i - 1)];
  };
  p.n = values.size();
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  p.min = values.front();
  p.max = values.back();
  return p;
}

std::string Fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

Table::Table(std::string title, std::vector<std::string> columns)
    : title_(std::move(title)), columns_(std::move(columns)) {}

void Table::Add(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = columns_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      // First column left-aligned (a name), the rest right-aligned (numbers).
      const std::string pad(width[c] - cells[c].size(), ' ');
      out << (c == 0 ? cells[c] + pad : pad + cells[c]) << (c + 1 < cells.size() ? "  " : "\n");
    }
  };
  out << "== " << title_ << " ==\n";
  line(columns_);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out << std::string(total - 2, '-') << "\n";
  for (const auto& row : rows_) line(row);
  return out.str();
}

std::string Table::Csv() const {
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool quote = cells[c].find_first_of(",\"") != std::string::npos;
      std::string cell = cells[c];
      if (quote) {
        std::string escaped;
        for (char ch : cell) escaped += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        cell = "\"" + escaped + "\"";
      }
      out << cell << (c + 1 < cells.size() ? "," : "\n");
    }
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
  return out.str();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace gpusched::bench
