#include "daemon/sim/csv_table.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpusched::sim {
namespace {

// RFC 4180 fields of one line (no quoted line breaks: one row per line).
absl::Status SplitCsvLine(absl::string_view line, int line_no, std::vector<std::string>& fields) {
  fields.assign(1, std::string());
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        fields.back().push_back(c);
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      fields.emplace_back();
      was_quoted = false;
    } else if (c == '"' && fields.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (was_quoted) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": field ", fields.size(), ": text after a closing quote"));
    } else {
      fields.back().push_back(c);
    }
  }
  if (quoted) return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": unterminated quote"));
  return absl::OkStatus();
}

}  // namespace

absl::Status CsvFieldError(int line, absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": field ", field, ": ", what));
}

std::string CsvQuoted(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  return quoted + "\"";
}

absl::StatusOr<int64_t> CsvWholeNumber(const std::string& text, int line, absl::string_view field) {
  int64_t v = 0;
  if (text.empty()) return CsvFieldError(line, field, "is empty");
  if (!absl::SimpleAtoi(text, &v) || v < 0) {
    return CsvFieldError(line, field, absl::StrCat("expected a whole number >= 0, got \"", text, "\""));
  }
  return v;
}

absl::Status ForEachCsvRow(absl::string_view text, absl::Span<const absl::string_view> columns,
                           absl::FunctionRef<absl::Status(const CsvRow&)> on_row) {
  std::vector<int> at(columns.size(), -1);
  std::vector<std::string> fields;
  size_t width = 0;
  int line_no = 0;
  bool header = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (absl::Status split = SplitCsvLine(line, line_no, fields); !split.ok()) return split;
    if (header) {
      header = false;
      width = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        for (size_t c = 0; c < columns.size(); ++c) {
          if (fields[i] != columns[c]) continue;
          if (at[c] >= 0) return CsvFieldError(line_no, columns[c], "column is named twice in the header");
          at[c] = static_cast<int>(i);
        }
      }
      for (size_t c = 0; c < columns.size(); ++c) {
        if (at[c] < 0) {
          return CsvFieldError(line_no, columns[c],
                               absl::StrCat("missing from the header (expected ", absl::StrJoin(columns, ","), ")"));
        }
      }
      continue;
    }
    if (fields.size() != width) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected ", width, " fields as in the header, got ", fields.size()));
    }
    if (absl::Status s = on_row(CsvRow(line_no, fields, at)); !s.ok()) return s;
  }
  if (header) return absl::InvalidArgumentError("line 1: the file is empty (expected a CSV header)");
  return absl::OkStatus();
}

}  // namespace gpusched::sim
