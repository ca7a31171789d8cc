#pragma once

// Percentiles and the aligned text / CSV tables a benchmark prints.

#include <string>
#include <vector>

namespace gpusched::bench {

struct Percentiles {
  size_t n = 0;
  double p50 = 0, p99 = 0, min = 0, max = 0;
};

// Nearest-rank percentiles of `values` (any order).
Percentiles Summarize(std::vector<double> values);

std::string Fixed(double value, int digits);

// CPU seconds the calling thread has used: what a timed pass cost, whatever
// else the shared machine was doing.
double ThreadCpuSeconds();

class Table {
 public:
  Table(std::string title, std::vector<std::string> columns);
  void Add(std::vector<std::string> cells);
  const std::string& title() const { return title_; }
  std::string Render() const;  // title, header and rows, columns aligned
  std::string Csv() const;     // header and rows

 private:
  std::string title_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpusched::bench
