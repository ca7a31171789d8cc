#include "common/net/hostlist.h"

#include <cstdint>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/digits.h"

namespace gpusched {
namespace {

// 18 decimal digits always fit in uint64_t, and no host is numbered beyond.
constexpr size_t kMaxDigits = 18;

struct Span {
  size_t begin;  // offsets into the expression, [begin, end)
  size_t end;
  bool empty() const { return begin >= end; }
};

// One bracket element: lo-hi, or a single number with lo == hi.
struct Range {
  uint64_t lo;
  uint64_t hi;
  size_t width;  // digits of lo as written; every name is padded to it
};

// An item is a sequence of literal text and bracketed number sets.
struct Piece {
  std::string literal;        // used when ranges is empty
  std::vector<Range> ranges;  // a bracket
};

// Quotes the expression for an error message; a config line can be long or
// hold garbage, so it is cut and escaped to keep log lines readable.
std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 80;
  if (s.size() > kMax) {
    return absl::StrCat("\"", absl::CHexEscape(s.substr(0, kMax)), "...\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(s), "\"");
}

absl::Status Invalid(absl::string_view expr, absl::string_view what, size_t pos) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid hostlist ", Quote(expr), ": ", what, " at position ", pos + 1));
}

bool IsBlank(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }

Span Trim(absl::string_view expr, Span s) {
  while (s.begin < s.end && IsBlank(expr[s.begin])) ++s.begin;
  while (s.end > s.begin && IsBlank(expr[s.end - 1])) --s.end;
  return s;
}

absl::string_view Text(absl::string_view expr, Span s) { return expr.substr(s.begin, s.end - s.begin); }

bool ParseNumber(absl::string_view s, uint64_t* out) { return s.size() <= kMaxDigits && ParseDigits(s, out); }

// Splits at the commas outside brackets, checking bracket balance on the way
// so that later steps can rely on every '[' having its ']'.
absl::StatusOr<std::vector<Span>> SplitItems(absl::string_view expr) {
  std::vector<Span> items;
  size_t open = absl::string_view::npos;
  size_t begin = 0;
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (c == '[') {
      if (open != absl::string_view::npos) {
        return Invalid(expr, "'[' inside another bracket", i);
      }
      open = i;
    } else if (c == ']') {
      if (open == absl::string_view::npos) {
        return Invalid(expr, "']' without a matching '['", i);
      }
      open = absl::string_view::npos;
    } else if (c == ',' && open == absl::string_view::npos) {
      items.push_back({begin, i});
      begin = i + 1;
    }
  }
  if (open != absl::string_view::npos) {
    return Invalid(expr, "'[' without a matching ']'", open);
  }
  items.push_back({begin, expr.size()});
  return items;
}

// Parses the inside of one bracket, [begin, end) between '[' and ']'.
absl::StatusOr<std::vector<Range>> ParseBracket(absl::string_view expr, size_t begin, size_t end) {
  std::vector<Range> ranges;
  size_t element_begin = begin;
  for (size_t i = begin; i <= end; ++i) {
    if (i < end && expr[i] != ',') continue;
    const Span element = Trim(expr, {element_begin, i});
    if (element.empty()) {
      return Invalid(expr, begin == end ? "empty brackets" : "empty range", begin == end ? begin - 1 : element_begin);
    }
    const absl::string_view text = Text(expr, element);
    const size_t dash = text.find('-');
    const absl::string_view lo_text = text.substr(0, dash);
    const absl::string_view hi_text = dash == absl::string_view::npos ? lo_text : text.substr(dash + 1);
    uint64_t lo = 0;
    uint64_t hi = 0;
    if (!ParseNumber(lo_text, &lo) || !ParseNumber(hi_text, &hi)) {
      return Invalid(expr, absl::StrCat(Quote(text), " is not a number or a range of numbers like 1-8"), element.begin);
    }
    if (lo > hi) {
      return Invalid(expr, absl::StrCat("range ", Quote(text), " is reversed"), element.begin);
    }
    ranges.push_back({lo, hi, lo_text.size()});
    element_begin = i + 1;
  }
  return ranges;
}

absl::StatusOr<std::vector<Piece>> ParseItem(absl::string_view expr, Span item) {
  std::vector<Piece> pieces;
  std::string literal;
  for (size_t i = item.begin; i < item.end; ++i) {
    const char c = expr[i];
    if (IsBlank(c)) return Invalid(expr, "whitespace inside a name", i);
    if (c != '[') {
      literal += c;
      continue;
    }
    if (!literal.empty()) pieces.push_back({std::exchange(literal, {}), {}});
    const size_t close = expr.find(']', i);  // SplitItems saw it balanced
    auto ranges = ParseBracket(expr, i + 1, close);
    if (!ranges.ok()) return ranges.status();
    pieces.push_back({"", *std::move(ranges)});
    i = close;
  }
  if (!literal.empty()) pieces.push_back({std::move(literal), {}});
  return pieces;
}

// How many names the item gives, or false once that passes `limit`. Checked
// before anything is expanded, so a runaway range costs no memory.
bool CountNames(const std::vector<Piece>& pieces, uint64_t limit, uint64_t* count) {
  uint64_t product = 1;
  for (const Piece& piece : pieces) {
    if (piece.ranges.empty()) continue;
    uint64_t in_bracket = 0;
    for (const Range& r : piece.ranges) {
      if (r.hi - r.lo >= limit) return false;
      in_bracket += r.hi - r.lo + 1;
      if (in_bracket > limit) return false;
    }
    product *= in_bracket;  // both factors <= limit: no overflow
    if (product > limit) return false;
  }
  if (product > limit) return false;  // a plain name when the limit is spent
  *count = product;
  return true;
}

std::string Pad(uint64_t value, size_t width) {
  std::string digits = absl::StrCat(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

void AppendNames(const std::vector<Piece>& pieces, std::vector<std::string>* out) {
  std::vector<std::string> partial = {""};
  for (const Piece& piece : pieces) {
    if (piece.ranges.empty()) {
      for (std::string& name : partial) name += piece.literal;
      continue;
    }
    std::vector<std::string> next;
    for (const std::string& name : partial) {
      for (const Range& r : piece.ranges) {
        for (uint64_t v = r.lo; v <= r.hi; ++v) {
          next.push_back(absl::StrCat(name, Pad(v, r.width)));
        }
      }
    }
    partial = std::move(next);
  }
  out->insert(out->end(), std::make_move_iterator(partial.begin()), std::make_move_iterator(partial.end()));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr) {
  std::vector<std::string> names;
  if (Trim(expr, {0, expr.size()}).empty()) return names;

  auto items = SplitItems(expr);
  if (!items.ok()) return items.status();

  std::vector<std::vector<Piece>> parsed;
  uint64_t total = 0;
  for (const Span& raw : *items) {
    const Span item = Trim(expr, raw);
    if (item.empty()) {
      // Point at the comma that has nothing on one side.
      const size_t comma = raw.end < expr.size() ? raw.end : raw.begin - 1;
      return Invalid(expr, "empty name next to the ','", comma);
    }
    auto pieces = ParseItem(expr, item);
    if (!pieces.ok()) return pieces.status();
    uint64_t count = 0;
    if (!CountNames(*pieces, kMaxHostlistNames - total, &count)) {
      return Invalid(expr, absl::StrCat("expands past the limit of ", kMaxHostlistNames, " names with the item"),
                     item.begin);
    }
    total += count;
    parsed.push_back(*std::move(pieces));
  }

  names.reserve(total);
  for (const std::vector<Piece>& pieces : parsed) AppendNames(pieces, &names);
  return names;
}

}  // namespace gpusched
