#include "daemon/sim/sacct_trace.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace gpusched::sim {
namespace {

absl::Status RowError(int line, absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": field ", field, ": ", what));
}

bool NeverStarted(absl::string_view value) {
  return value.empty() || absl::EqualsIgnoreCase(value, "Unknown") || absl::EqualsIgnoreCase(value, "None");
}

std::optional<absl::Time> ParseSlurmTime(absl::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%S", std::string(text), absl::UTCTimeZone(), &t, &err)) return std::nullopt;
  return t;
}

}  // namespace

std::optional<int64_t> ParseSlurmDuration(absl::string_view text) {
  int64_t days = 0;
  if (size_t dash = text.find('-'); dash != absl::string_view::npos) {
    if (!absl::SimpleAtoi(text.substr(0, dash), &days) || days < 0) return std::nullopt;
    text = text.substr(dash + 1);
  }
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t v = 0;
    // Seconds may carry sacct's milliseconds ("05:01.123"): whole seconds count.
    absl::string_view part = parts[i];
    if (i + 1 == parts.size()) part = part.substr(0, part.find('.'));
    if (part.empty() || !absl::SimpleAtoi(part, &v) || v < 0) return std::nullopt;
    if (i > 0 && v >= 60) return std::nullopt;
    total = total * 60 + v;
  }
  return days * 86400 + total;
}

std::optional<int64_t> GpusFromTres(absl::string_view tres) {
  std::optional<int64_t> untyped;
  int64_t typed = 0;
  for (absl::string_view item : absl::StrSplit(tres, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    const bool plain = kv.first == "gres/gpu";
    if (!plain && !absl::StartsWith(kv.first, "gres/gpu:")) continue;
    int64_t n = 0;
    if (!absl::SimpleAtoi(kv.second, &n) || n < 0) return std::nullopt;
    if (plain) {
      untyped = n;
    } else {
      typed += n;
    }
  }
  // Slurm lists both the total and each type when GPUs are typed.
  return untyped.has_value() ? *untyped : typed;
}

absl::StatusOr<Trace> ParseSacctTrace(absl::string_view text, const TraceOptions& options) {
  Trace trace;
  std::map<std::string, int> at;
  size_t width = 0;
  int line_no = 0;
  bool header = true;
  struct Pending {
    TraceJob job;
    absl::Time submit;
  };
  std::vector<Pending> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '|');
    if (header) {
      header = false;
      width = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!at.emplace(fields[i], static_cast<int>(i)).second) {
          return RowError(line_no, fields[i], "column is named twice in the header");
        }
      }
      for (const char* required : {"JobID", "Submit"}) {
        if (!at.contains(required)) return RowError(line_no, required, "missing from the header");
      }
      if (!at.contains("AllocTRES") && !at.contains("ReqTRES")) {
        return RowError(line_no, "AllocTRES", "missing from the header (AllocTRES or ReqTRES gives the GPUs)");
      }
      if (!at.contains("Elapsed") && !(at.contains("Start") && at.contains("End"))) {
        return RowError(line_no, "Elapsed", "missing from the header (Elapsed, or Start and End, give the run time)");
      }
      continue;
    }
    if (fields.size() != width) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected ", width, " fields as in the header, got ", fields.size()));
    }
    auto field = [&](const char* name) -> std::string {
      auto it = at.find(name);
      return it == at.end() ? std::string() : fields[it->second];
    };
    ++trace.rows;
    Pending row;
    TraceJob& job = row.job;
    job.line = line_no;
    job.id = field("JobID");
    if (job.id.empty()) return RowError(line_no, "JobID", "is empty");
    if (absl::StrContains(job.id, '.')) {
      ++trace.skipped_steps;
      continue;
    }
    auto submit = ParseSlurmTime(field("Submit"));
    if (!submit.has_value()) {
      return RowError(line_no, "Submit", absl::StrCat("expected YYYY-MM-DDTHH:MM:SS, got \"", field("Submit"), "\""));
    }
    row.submit = *submit;
    std::string tres_column = "AllocTRES";
    std::string tres = field("AllocTRES");
    if (tres.empty()) {
      tres_column = "ReqTRES";
      tres = field("ReqTRES");
    }
    auto gpus = GpusFromTres(tres);
    if (!gpus.has_value()) {
      return RowError(line_no, tres_column, absl::StrCat("gres/gpu is not a whole number in \"", tres, "\""));
    }
    job.gpus = *gpus;
    job.user = field("User");
    job.queue = field("Partition");

    std::optional<int64_t> duration;
    const bool pending = absl::StartsWith(absl::AsciiStrToUpper(field("State")), "PENDING");
    const bool started = !at.contains("Start") || !NeverStarted(field("Start"));
    if (!pending && started) {
      if (at.contains("Elapsed")) {
        duration = ParseSlurmDuration(field("Elapsed"));
        if (!duration.has_value()) {
          return RowError(line_no, "Elapsed", absl::StrCat("expected [D-][HH:]MM:SS, got \"", field("Elapsed"), "\""));
        }
      } else if (!NeverStarted(field("End"))) {
        auto start = ParseSlurmTime(field("Start"));
        auto end = ParseSlurmTime(field("End"));
        if (!start.has_value()) return RowError(line_no, "Start", absl::StrCat("bad time \"", field("Start"), "\""));
        if (!end.has_value()) return RowError(line_no, "End", absl::StrCat("bad time \"", field("End"), "\""));
        if (*end < *start) return RowError(line_no, "End", "is before Start");
        duration = absl::ToInt64Seconds(*end - *start);
      }
    }
    trace.queues.insert(job.queue);
    if (!options.queue.empty() && job.queue != options.queue) {
      ++trace.skipped_other_queue;
    } else if (!duration.has_value()) {
      ++trace.skipped_unknown_duration;
    } else if (job.gpus == 0) {
      ++trace.skipped_no_gpus;
    } else {
      job.duration_s = *duration;
      rows.push_back(std::move(row));
    }
  }
  if (header) return absl::InvalidArgumentError("line 1: the file is empty (expected a sacct header)");
  if (!rows.empty()) {
    absl::Time first = rows.front().submit;
    for (const Pending& r : rows) first = std::min(first, r.submit);
    for (Pending& r : rows) {
      r.job.submit_s = absl::ToInt64Seconds(r.submit - first);
      trace.jobs.push_back(std::move(r.job));
    }
  }
  FinishTrace(trace);
  return trace;
}

}  // namespace gpusched::sim
