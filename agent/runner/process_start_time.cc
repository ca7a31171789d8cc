#include "agent/runner/process_start_time.h"

#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runner/small_file.h"

namespace gpusched::agent {

uint64_t ProcessStartTime(pid_t pid) {
  const std::optional<std::string> stat = ReadSmallFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.has_value()) return 0;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  int field = 2;
  for (absl::string_view value : absl::StrSplit(absl::string_view(*stat).substr(close + 1), ' ', absl::SkipEmpty())) {
    if (++field == 22) {
      uint64_t start = 0;
      return absl::SimpleAtoi(value, &start) ? start : 0;
    }
  }
  return 0;
}

}  // namespace gpusched::agent
