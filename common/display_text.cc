#include "common/display_text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

// The offset of the first control character, or npos.
size_t FirstControlCharacter(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return i;
    if (c == 0xc2 && i + 1 < text.size()) {
      const unsigned char next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return i;
    }
  }
  return absl::string_view::npos;
}

}  // namespace

std::string ToDisplayText(absl::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t at = FirstControlCharacter(text.substr(i, 2));
    if (at == 0) {
      const bool c1 = static_cast<unsigned char>(text[i]) == 0xc2;
      out.push_back(' ');
      if (c1) ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  if (out.size() <= max_bytes) return out;
  size_t cut = max_bytes;
  // Back off continuation bytes so that no character is split.
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
  out.resize(cut);
  return out;
}

bool HasControlCharacter(absl::string_view text) { return FirstControlCharacter(text) != absl::string_view::npos; }

absl::Status CheckDisplayText(absl::string_view field, absl::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", text.size(), " bytes long, at most ", max_bytes));
  }
  const size_t at = FirstControlCharacter(text);
  if (at == absl::string_view::npos) return absl::OkStatus();
  const unsigned char c = static_cast<unsigned char>(text[at]);
  return absl::InvalidArgumentError(absl::StrCat(field, ": holds a control character (byte ", at, ", 0x",
                                                 absl::Hex(c == 0xc2 ? text[at + 1] & 0xff : c, absl::kZeroPad2),
                                                 "); names and reasons are shown in tables and terminals"));
}

}  // namespace gpusched
