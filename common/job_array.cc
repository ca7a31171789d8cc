#include "common/job_array.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/digits.h"

namespace gpusched {
namespace {

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("array \"", text, "\": ", why));
}

// Indices are non-negative: a task's index is what scripts shard data by.
absl::StatusOr<int32_t> ParseIndex(absl::string_view whole, absl::string_view part) {
  int32_t value = 0;
  if (!ParseDigits(part, &value)) {
    return Bad(whole, absl::StrCat("\"", part, "\" is not a non-negative number"));
  }
  return value;
}

}  // namespace

absl::StatusOr<JobArraySpec> ParseJobArraySpec(absl::string_view text, size_t max_tasks) {
  JobArraySpec spec;
  absl::string_view ranges = text;
  if (size_t percent = text.find('%'); percent != absl::string_view::npos) {
    ranges = text.substr(0, percent);
    absl::string_view limit = text.substr(percent + 1);
    if (!ParseDigits(limit, &spec.max_running) || spec.max_running < 1) {
      return Bad(text, absl::StrCat("the limit after % must be a number >= 1, got \"", limit, "\""));
    }
  }
  if (ranges.empty()) return Bad(text, "no indices (write e.g. 0-99 or 1,3,5)");
  for (absl::string_view item : absl::StrSplit(ranges, ',')) {
    if (item.empty()) return Bad(text, "an empty item between commas");
    int64_t step = 1;
    absl::string_view span = item;
    if (size_t colon = item.find(':'); colon != absl::string_view::npos) {
      span = item.substr(0, colon);
      absl::string_view step_text = item.substr(colon + 1);
      if (!ParseDigits(step_text, &step) || step < 1) {
        return Bad(text, absl::StrCat("the step after : must be a number >= 1, got \"", step_text, "\""));
      }
    }
    const size_t dash = span.find('-');
    auto first = ParseIndex(text, span.substr(0, dash));
    if (!first.ok()) return first.status();
    int32_t last = *first;
    if (dash != absl::string_view::npos) {
      auto parsed = ParseIndex(text, span.substr(dash + 1));
      if (!parsed.ok()) return parsed.status();
      last = *parsed;
      if (last < *first) return Bad(text, absl::StrCat("range \"", span, "\" ends before it starts"));
    } else if (step != 1) {
      return Bad(text, absl::StrCat("a step needs a range, as in ", *first, "-", int64_t{*first} + 10, ":", step));
    }
    // Counted before expanding, so that "0-2000000000" is refused without
    // building two billion indices first.
    const int64_t count = (int64_t{last} - *first) / step + 1;
    if (spec.indices.size() + count > max_tasks) {
      return Bad(text, absl::StrCat("more than ", max_tasks, " tasks"));
    }
    for (int64_t i = *first; i <= last; i += step) spec.indices.push_back(static_cast<int32_t>(i));
  }
  std::sort(spec.indices.begin(), spec.indices.end());
  if (auto dup = std::adjacent_find(spec.indices.begin(), spec.indices.end()); dup != spec.indices.end()) {
    return Bad(text, absl::StrCat("index ", *dup, " is given twice"));
  }
  return spec;
}

}  // namespace gpusched
