#include "cli/sizes.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::cli {

absl::StatusOr<int64_t> ParseSizeMb(absl::string_view text) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a size (use a number of MB, or a size such as 512M, 16G, 1T)"));
  };
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  if (!s.empty() && s.back() == 'B') s.pop_back();
  int64_t multiplier = 1;
  if (!s.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(s.back()))) {
    switch (s.back()) {
      case 'M': multiplier = 1; break;
      case 'G': multiplier = 1024; break;
      case 'T': multiplier = 1024 * 1024; break;
      default: return invalid();
    }
    s.pop_back();
  }
  if (s.empty()) return invalid();
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return invalid();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(s, &value) || value > std::numeric_limits<int64_t>::max() / multiplier) {
    return invalid();
  }
  return value * multiplier;
}

std::string FormatSizeMb(int64_t mb) {
  constexpr int64_t kG = 1024, kT = 1024 * 1024;
  auto scaled = [](int64_t size_mb, int64_t unit, char suffix) {
    if (size_mb % unit == 0) return absl::StrCat(size_mb / unit, std::string(1, suffix));
    const double value = static_cast<double>(size_mb) / static_cast<double>(unit);
    // A decimal matters for 1.5G, not for 377G.
    return absl::StrFormat(value < 100 ? "%.1f%c" : "%.0f%c", value, suffix);
  };
  if (mb >= kT) return scaled(mb, kT, 'T');
  if (mb >= kG) return scaled(mb, kG, 'G');
  return absl::StrCat(mb, "M");
}

}  // namespace gpusched::cli
