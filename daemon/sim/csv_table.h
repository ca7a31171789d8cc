#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace gpusched::sim {

// One data row of a CSV file: its line number and its fields, looked up by
// the position of a column in the list the caller asked for.
class CsvRow {
 public:
  CsvRow(int line, const std::vector<std::string>& fields, const std::vector<int>& at)
      : line_(line), fields_(fields), at_(at) {}
  int line() const { return line_; }
  const std::string& operator[](size_t column) const { return fields_[at_[column]]; }

 private:
  int line_;
  const std::vector<std::string>& fields_;
  const std::vector<int>& at_;
};

// Calls on_row for each data row of an RFC 4180 file (one row per line, no
// quoted line breaks; blank lines and a trailing \r skipped). The header must
// name every one of `columns`, in any order; other columns are ignored. Every
// row must have the header's width. Errors are InvalidArgument "line N: ...";
// an error from on_row stops the reading and is returned as it is.
absl::Status ForEachCsvRow(absl::string_view text, absl::Span<const absl::string_view> columns,
                           absl::FunctionRef<absl::Status(const CsvRow&)> on_row);

// "line N: field F: what".
absl::Status CsvFieldError(int line, absl::string_view field, absl::string_view what);

// The field as RFC 4180 writes it: quoted when it holds a comma, a quote or
// a line break.
std::string CsvQuoted(const std::string& field);

// A whole number >= 0, or a CsvFieldError saying what was there.
absl::StatusOr<int64_t> CsvWholeNumber(const std::string& text, int line, absl::string_view field);

}  // namespace gpusched::sim
