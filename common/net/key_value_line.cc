#include "common/net/key_value_line.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

bool IsBlank(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }

absl::Status Invalid(size_t pos, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("column ", pos + 1, ": ", what));
}

std::string QuoteWord(absl::string_view word) {
  constexpr size_t kMax = 40;
  const bool cut = word.size() > kMax;
  return absl::StrCat("\"", absl::CHexEscape(word.substr(0, kMax)), cut ? "...\"" : "\"");
}

}  // namespace

absl::StatusOr<std::vector<KeyValue>> SplitKeyValueLine(absl::string_view line) {
  std::vector<KeyValue> pairs;
  size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i == line.size() || line[i] == '#') return pairs;

    const size_t key_begin = i;
    while (i < line.size() && !IsBlank(line[i]) && line[i] != '=' && line[i] != '#') ++i;
    const absl::string_view key = line.substr(key_begin, i - key_begin);
    if (i == line.size() || line[i] != '=') {
      return Invalid(key_begin, absl::StrCat("expected Key=Value, found ", QuoteWord(key)));
    }
    if (key.empty()) return Invalid(key_begin, "'=' without a key before it");
    ++i;  // '='

    KeyValue kv{std::string(key), "", static_cast<int>(key_begin) + 1};
    if (i < line.size() && line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      if (close == absl::string_view::npos) {
        return Invalid(i, absl::StrCat("the quoted value of ", key, " is never closed"));
      }
      kv.value = std::string(line.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < line.size() && !IsBlank(line[i]) && line[i] != '#') {
        return Invalid(i, absl::StrCat("expected a space after the quoted value of ", key));
      }
    } else {
      const size_t value_begin = i;
      while (i < line.size() && !IsBlank(line[i]) && line[i] != '#') ++i;
      kv.value = std::string(line.substr(value_begin, i - value_begin));
    }
    pairs.push_back(std::move(kv));
  }
}

}  // namespace gpusched
