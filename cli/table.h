#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpusched::cli {

// A plain-text table: columns padded to their widest cell, two spaces apart,
// no trailing blanks. Empty cells print as "-" so that every row keeps the
// same number of words for `awk`.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  void AddRow(std::vector<std::string> cells);
  void Render(std::ostream& out) const;
  std::string ToString() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpusched::cli
