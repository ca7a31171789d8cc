#include "common/topology/cpu_list.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/digits.h"

namespace gpusched::topology {
namespace {

bool ParseId(absl::string_view s, int* out) { return s.size() <= 6 && ParseDigits(s, out) && *out <= kMaxCpuId; }

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  std::vector<int> cpus;
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return cpus;
  for (absl::string_view part : absl::StrSplit(t, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, '-');
    int lo = 0;
    int hi = 0;
    bool ok = ends.size() == 1 ? ParseId(ends[0], &lo) && ((hi = lo), true)
                               : ends.size() == 2 && ParseId(ends[0], &lo) && ParseId(ends[1], &hi) && lo <= hi;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("invalid CPU list \"", text, "\": bad element \"", part,
                                                     "\" (expected ids or ranges like 0-23,48-71, ids up to ",
                                                     kMaxCpuId, ")"));
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  size_t i = 0;
  while (i < cpus.size()) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace gpusched::topology
