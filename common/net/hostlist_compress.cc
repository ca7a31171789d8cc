// CompressHostlist, declared in hostlist.h: kept apart from the expander
// because the two share no code, only the notation.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/net/hostlist.h"

namespace gpusched {
namespace {

// As in the expander: longer digit runs are left as plain text.
constexpr size_t kMaxDigits = 18;

// A name split around its last run of digits: "rack1-gpu07" is
// {"rack1-gpu", "07", ""}.
struct NumberedName {
  std::string prefix;
  std::string digits;
  std::string suffix;
  uint64_t value = 0;
};

bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }

bool SplitLastNumber(const std::string& name, NumberedName* out) {
  size_t end = name.size();
  while (end > 0 && !IsDigit(name[end - 1])) --end;
  if (end == 0) return false;
  size_t begin = end;
  while (begin > 0 && IsDigit(name[begin - 1])) --begin;
  if (end - begin > kMaxDigits) return false;
  out->prefix = name.substr(0, begin);
  out->digits = name.substr(begin, end - begin);
  out->suffix = name.substr(end);
  return absl::SimpleAtoi(out->digits, &out->value);
}

// The zero-padded width a number was written with, 0 when it has no leading
// zero (and so could be written at any width from its own length up).
size_t PaddedWidth(const std::string& digits) { return digits.size() > 1 && digits[0] == '0' ? digits.size() : 0; }

std::string Format(uint64_t value, size_t width) {
  std::string digits = absl::StrCat(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

struct Group {
  std::string literal;  // a name without a usable number; the rest unused
  std::string prefix;
  std::string suffix;
  size_t width = 0;  // 0: numbers written without padding
  std::vector<uint64_t> values;
};

std::string Render(Group& g) {
  if (g.values.empty()) return g.literal;
  std::sort(g.values.begin(), g.values.end());
  g.values.erase(std::unique(g.values.begin(), g.values.end()), g.values.end());
  if (g.values.size() == 1) {
    return absl::StrCat(g.prefix, Format(g.values[0], g.width), g.suffix);
  }
  std::string out = absl::StrCat(g.prefix, "[");
  for (size_t i = 0; i < g.values.size();) {
    size_t j = i;
    while (j + 1 < g.values.size() && g.values[j + 1] == g.values[j] + 1) ++j;
    if (i > 0) out += ',';
    absl::StrAppend(&out, Format(g.values[i], g.width));
    if (j > i) absl::StrAppend(&out, "-", Format(g.values[j], g.width));
    i = j + 1;
  }
  absl::StrAppend(&out, "]", g.suffix);
  return out;
}

}  // namespace

std::string CompressHostlist(std::vector<std::string> names) {
  std::vector<NumberedName> split(names.size());
  std::vector<bool> numbered(names.size());
  // The padded widths in use around each prefix/suffix: an unpadded number of
  // the same length ("100" next to "099") then joins that group, which gives
  // "n[099-100]" rather than "n099,n100".
  std::map<std::pair<std::string, std::string>, std::set<size_t>> widths;
  for (size_t i = 0; i < names.size(); ++i) {
    numbered[i] = SplitLastNumber(names[i], &split[i]);
    if (!numbered[i]) continue;
    if (size_t w = PaddedWidth(split[i].digits); w > 0) {
      widths[{split[i].prefix, split[i].suffix}].insert(w);
    }
  }

  std::vector<Group> groups;
  std::map<std::tuple<std::string, std::string, size_t>, size_t> numbered_index;
  std::map<std::string, size_t> literal_index;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!numbered[i]) {
      auto [it, added] = literal_index.try_emplace(names[i], groups.size());
      if (added) {
        Group g;
        g.literal = names[i];
        groups.push_back(std::move(g));
      }
      continue;
    }
    NumberedName& n = split[i];
    size_t width = PaddedWidth(n.digits);
    if (width == 0) {
      auto padded = widths.find({n.prefix, n.suffix});
      if (padded != widths.end() && padded->second.count(n.digits.size()) > 0) {
        width = n.digits.size();
      }
    }
    auto [it, added] = numbered_index.try_emplace({n.prefix, n.suffix, width}, groups.size());
    if (added) {
      Group g;
      g.prefix = n.prefix;
      g.suffix = n.suffix;
      g.width = width;
      groups.push_back(std::move(g));
    }
    groups[it->second].values.push_back(n.value);
  }

  std::string out;
  for (Group& g : groups) {
    if (!out.empty()) out += ',';
    out += Render(g);
  }
  return out;
}

}  // namespace gpusched
