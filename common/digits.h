#pragma once

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// A number written in decimal digits only: SimpleAtoi alone would also take
// " 7", "+7" and "-7". False when empty, not all digits, or out of range.
template <typename Int>
bool ParseDigits(absl::string_view text, Int* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, out);
}

}  // namespace gpusched
