#include "daemon/sim/csv_trace.h"

#include <array>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpusched::sim {
namespace {

constexpr std::array<absl::string_view, 7> kColumns = {"job_id", "submit_time_s", "num_gpus", "duration_s",
                                                       "user",   "queue",         "status"};
enum Column { kJobId, kSubmit, kGpus, kDuration, kUser, kQueue, kStatus };

absl::Status RowError(int line, absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": field ", field, ": ", what));
}

// RFC 4180 fields of one line (no quoted line breaks: one row per line).
absl::StatusOr<std::vector<std::string>> SplitCsvLine(absl::string_view line, int line_no) {
  std::vector<std::string> fields(1);
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
  return fields;
}

absl::StatusOr<int64_t> WholeNumber(const std::string& text, int line, absl::string_view field) {
  int64_t v = 0;
  if (text.empty()) return RowError(line, field, "is empty");
  if (!absl::SimpleAtoi(text, &v) || v < 0) {
    return RowError(line, field, absl::StrCat("expected a whole number >= 0, got \"", text, "\""));
  }
  return v;
}

}  // namespace

absl::StatusOr<Trace> ParseCsvTrace(absl::string_view text, const TraceOptions& options) {
  Trace trace;
  std::array<int, kColumns.size()> at;
  at.fill(-1);
  size_t width = 0;
  int line_no = 0;
  bool header = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto fields = SplitCsvLine(line, line_no);
    if (!fields.ok()) return fields.status();
    if (header) {
      header = false;
      width = fields->size();
      for (size_t i = 0; i < fields->size(); ++i) {
        for (size_t c = 0; c < kColumns.size(); ++c) {
          if ((*fields)[i] != kColumns[c]) continue;
          if (at[c] >= 0) return RowError(line_no, kColumns[c], "column is named twice in the header");
          at[c] = static_cast<int>(i);
        }
      }
      for (size_t c = 0; c < kColumns.size(); ++c) {
        if (at[c] < 0) {
          return RowError(line_no, kColumns[c],
                          absl::StrCat("missing from the header (expected ", absl::StrJoin(kColumns, ","), ")"));
        }
      }
      continue;
    }
    if (fields->size() != width) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected ", width, " fields as in the header, got ", fields->size()));
    }
    ++trace.rows;
    auto field = [&](Column c) -> const std::string& { return (*fields)[at[c]]; };
    TraceJob job;
    job.line = line_no;
    job.id = field(kJobId);
    if (job.id.empty()) return RowError(line_no, "job_id", "is empty");
    auto submit = WholeNumber(field(kSubmit), line_no, "submit_time_s");
    if (!submit.ok()) return submit.status();
    auto gpus = WholeNumber(field(kGpus), line_no, "num_gpus");
    if (!gpus.ok()) return gpus.status();
    job.submit_s = *submit;
    job.gpus = *gpus;
    job.user = field(kUser);
    job.queue = field(kQueue);
    if (!field(kDuration).empty()) {
      auto duration = WholeNumber(field(kDuration), line_no, "duration_s");
      if (!duration.ok()) return duration.status();
      job.duration_s = *duration;
    }
    // Every row is validated before it is filtered, so that a broken file
    // fails the same whichever queue is replayed.
    trace.queues.insert(job.queue);
    if (!options.queue.empty() && job.queue != options.queue) {
      ++trace.skipped_other_queue;
    } else if (field(kDuration).empty()) {
      ++trace.skipped_unknown_duration;
    } else if (job.gpus == 0) {
      ++trace.skipped_no_gpus;
    } else {
      trace.jobs.push_back(std::move(job));
    }
  }
  if (header) return absl::InvalidArgumentError("line 1: the file is empty (expected a CSV header)");
  FinishTrace(trace);
  return trace;
}

}  // namespace gpusched::sim
