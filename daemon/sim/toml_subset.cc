#include "daemon/sim/toml_subset.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpusched::sim {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

bool IsBareKeyChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Reads one line from left to right; `pos` is the next unread character.
class LineReader {
 public:
  LineReader(absl::string_view text, int line) : text_(text), line_(line) {}

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void Advance() { ++pos_; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Only whitespace and a comment may follow.
  absl::Status ExpectEnd(absl::string_view after) {
    SkipSpace();
    if (AtEnd() || Peek() == '#') return absl::OkStatus();
    return Error(absl::StrCat("unexpected \"", text_.substr(pos_, 20), "\" after ", after));
  }
  absl::Status Error(absl::string_view what) const { return LineError(line_, what); }

  absl::StatusOr<std::string> Key() {
    SkipSpace();
    if (Peek() == '"' || Peek() == '\'') return Error("quoted keys are not supported; use a bare key");
    const size_t start = pos_;
    while (!AtEnd() && IsBareKeyChar(Peek())) ++pos_;
    if (pos_ == start) return Error(absl::StrCat("expected a key, found \"", text_.substr(pos_, 20), "\""));
    std::string key(text_.substr(start, pos_ - start));
    SkipSpace();
    if (Peek() == '.') return Error(absl::StrCat("dotted keys are not supported (", key, ".…)"));
    return key;
  }

  absl::StatusOr<TomlValue> Value(bool in_array) {
    SkipSpace();
    TomlValue v;
    v.line = line_;
    const char c = Peek();
    if (AtEnd() || c == '#') return Error("expected a value");
    if (c == '"') {
      if (text_.substr(pos_, 3) == "\"\"\"") return Error("multi-line strings are not supported");
      auto s = BasicString();
      if (!s.ok()) return s.status();
      v.value = *std::move(s);
      return v;
    }
    if (c == '\'') {
      if (text_.substr(pos_, 3) == "'''") return Error("multi-line strings are not supported");
      size_t end = text_.find('\'', pos_ + 1);
      if (end == absl::string_view::npos) return Error("unterminated string");
      v.value = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return v;
    }
    if (c == '[') {
      Advance();
      TomlArray items;
      while (true) {
        SkipSpace();
        if (Consume(']')) break;
        if (AtEnd() || Peek() == '#') return Error("unterminated array (arrays must fit on one line)");
        auto item = Value(/*in_array=*/true);
        if (!item.ok()) return item.status();
        items.push_back(*std::move(item));
        SkipSpace();
        if (AtEnd() || Peek() == '#') return Error("unterminated array (arrays must fit on one line)");
        if (Consume(',')) continue;
        if (Consume(']')) break;
        return Error("expected ',' or ']' in array");
      }
      v.value = std::move(items);
      return v;
    }
    if (c == '{') return Error("inline tables are not supported; use a [table]");
    // A bare scalar runs to whitespace, a comment, or (in an array) ',' / ']'.
    const size_t start = pos_;
    while (!AtEnd() && Peek() != ' ' && Peek() != '\t' && Peek() != '#' &&
           !(in_array && (Peek() == ',' || Peek() == ']'))) {
      ++pos_;
    }
    absl::string_view word = text_.substr(start, pos_ - start);
    if (word == "true" || word == "false") {
      v.value = word == "true";
      return v;
    }
    return Number(word, v);
  }

 private:
  absl::StatusOr<std::string> BasicString() {
    std::string out;
    Advance();  // opening quote
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      char c = Peek();
      Advance();
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      char e = Peek();
      Advance();
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        default:
          return Error(absl::StrCat("escape \\", std::string(1, e), " is not supported (only \\\" \\\\ \\n \\t)"));
      }
    }
  }

  absl::StatusOr<TomlValue> Number(absl::string_view word, TomlValue& v) const {
    std::string digits;
    for (size_t i = 0; i < word.size(); ++i) {
      if (word[i] == '_') {
        // TOML: an underscore must sit between two digits.
        if (i == 0 || i + 1 == word.size() || !absl::ascii_isdigit(static_cast<unsigned char>(word[i - 1])) ||
            !absl::ascii_isdigit(static_cast<unsigned char>(word[i + 1]))) {
          return Error(absl::StrCat("misplaced '_' in number \"", word, "\""));
        }
        continue;
      }
      digits.push_back(word[i]);
    }
    if (absl::StrContains(digits, "0x") || absl::StrContains(digits, "0o") || absl::StrContains(digits, "0b")) {
      return Error(absl::StrCat("only decimal numbers are supported, got \"", word, "\""));
    }
    if (digits == "inf" || digits == "+inf" || digits == "-inf" || absl::StrContains(digits, "nan")) {
      return Error(absl::StrCat("inf and nan are not supported, got \"", word, "\""));
    }
    const bool looks_float = digits.find_first_of(".eE") != std::string::npos;
    if (!looks_float) {
      int64_t i = 0;
      if (!digits.empty() && absl::SimpleAtoi(digits, &i)) {
        v.value = i;
        return v;
      }
    } else {
      double d = 0;
      if (absl::SimpleAtod(digits, &d)) {
        v.value = d;
        return v;
      }
    }
    if (word.find_first_of(":T") != absl::string_view::npos && word.find('-') != absl::string_view::npos) {
      return Error(absl::StrCat("dates and times are not supported, got \"", word, "\""));
    }
    return Error(absl::StrCat("expected a string, number, boolean or array, got \"", word,
                              "\" (strings need quotes)"));
  }

  absl::string_view text_;
  int line_;
  size_t pos_ = 0;
};

}  // namespace

absl::string_view TomlValue::type_name() const {
  switch (value.index()) {
    case 0: return "string";
    case 1: return "integer";
    case 2: return "float";
    case 3: return "boolean";
    default: return "array";
  }
}

const TomlValue* TomlTable::Find(absl::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<TomlDocument> ParseTomlSubset(absl::string_view text) {
  TomlDocument doc;
  TomlTable* current = &doc.root;
  std::set<std::string> plain_tables, array_tables;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LineReader r(line, line_no);
    r.SkipSpace();
    if (r.AtEnd() || r.Peek() == '#') continue;
    if (r.Consume('[')) {
      const bool array = r.Consume('[');
      auto name = r.Key();
      if (!name.ok()) return name.status();
      r.SkipSpace();
      if (!r.Consume(']') || (array && !r.Consume(']'))) {
        return r.Error(absl::StrCat("expected '", array ? "]]" : "]", "' after table name ", *name));
      }
      if (absl::Status s = r.ExpectEnd("the table header"); !s.ok()) return s;
      if (array ? plain_tables.contains(*name) : array_tables.contains(*name)) {
        return r.Error(absl::StrCat(*name, " is used both as [", *name, "] and [[", *name, "]]"));
      }
      if (!array && !plain_tables.insert(*name).second) {
        return r.Error(absl::StrCat("table [", *name, "] is defined twice"));
      }
      if (array) array_tables.insert(*name);
      TomlTable& t = doc.tables.emplace_back();
      t.name = *std::move(name);
      t.array_element = array;
      t.line = line_no;
      current = &t;
      continue;
    }
    auto key = r.Key();
    if (!key.ok()) return key.status();
    if (!r.Consume('=')) return r.Error(absl::StrCat("expected '=' after key ", *key));
    auto value = r.Value(/*in_array=*/false);
    if (!value.ok()) return value.status();
    if (absl::Status s = r.ExpectEnd(absl::StrCat("the value of ", *key)); !s.ok()) return s;
    if (const TomlValue* old = current->Find(*key)) {
      return r.Error(absl::StrCat("key ", *key, " is given twice (first on line ", old->line, ")"));
    }
    current->entries.emplace_back(*std::move(key), *std::move(value));
  }
  return doc;
}

}  // namespace gpusched::sim
