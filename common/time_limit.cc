#include "common/time_limit.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/digits.h"

namespace gpusched {
namespace {

// One year is far beyond any sane job limit and keeps every product in int64.
constexpr int64_t kMaxLimitSeconds = 366LL * 24 * 3600;

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid time limit \"", text, "\": ", why,
                                                 " (use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)"));
}

bool ParseField(absl::string_view field, int64_t* out) { return field.size() <= 9 && ParseDigits(field, out); }

}  // namespace

absl::StatusOr<int64_t> ParseTimeLimit(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return Invalid(text, "it is empty");
  std::string lower = absl::AsciiStrToLower(t);
  if (lower == "unlimited" || lower == "infinite") return 0;

  int64_t days = 0;
  absl::string_view clock = t;
  const bool has_days = t.find('-') != absl::string_view::npos;
  if (has_days) {
    std::vector<absl::string_view> parts = absl::StrSplit(t, absl::MaxSplits('-', 1));
    if (!ParseField(parts[0], &days)) return Invalid(text, "the day count is not a number");
    clock = parts[1];
  }

  std::vector<absl::string_view> fields = absl::StrSplit(clock, ':');
  std::vector<int64_t> values;
  for (absl::string_view f : fields) {
    int64_t v = 0;
    if (!ParseField(f, &v)) return Invalid(text, absl::StrCat("\"", f, "\" is not a number"));
    values.push_back(v);
  }

  int64_t seconds = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    if (values.size() > 3) return Invalid(text, "too many ':' fields");
    int64_t h = values[0], m = values.size() > 1 ? values[1] : 0, s = values.size() > 2 ? values[2] : 0;
    if (h > 23 && days > 0) return Invalid(text, "hours must be below 24 after a day count");
    if (m > 59 || s > 59) return Invalid(text, "minutes and seconds must be below 60");
    seconds = ((days * 24 + h) * 60 + m) * 60 + s;
  } else if (values.size() == 1) {
    seconds = values[0] * 60;  // a bare number is minutes, as in Slurm
  } else if (values.size() == 2) {
    if (values[1] > 59) return Invalid(text, "seconds must be below 60");
    seconds = values[0] * 60 + values[1];
  } else if (values.size() == 3) {
    if (values[1] > 59 || values[2] > 59) return Invalid(text, "minutes and seconds must be below 60");
    seconds = (values[0] * 60 + values[1]) * 60 + values[2];
  } else {
    return Invalid(text, "too many ':' fields");
  }
  if (seconds > kMaxLimitSeconds) return Invalid(text, "longer than 366 days");
  return seconds;
}

std::string FormatTimeLimit(int64_t seconds) {
  if (seconds <= 0) return "none";
  int64_t days = seconds / 86400;
  int64_t rest = seconds % 86400;
  std::string hms = absl::StrFormat("%02d:%02d:%02d", rest / 3600, (rest / 60) % 60, rest % 60);
  return days > 0 ? absl::StrCat(days, "-", hms) : hms;
}

}  // namespace gpusched
