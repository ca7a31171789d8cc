#include "agent/gpu/pci_address.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace gpusched::agent {
namespace {

bool ParseHex(absl::string_view text, size_t max_digits, uint32_t& out) {
  if (text.empty() || text.size() > max_digits) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleHexAtoi(text, &out);
}

}  // namespace

std::optional<PciAddress> ParsePciAddress(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::vector<absl::string_view> colon = absl::StrSplit(text, ':');
  if (colon.size() != 2 && colon.size() != 3) return std::nullopt;
  std::vector<absl::string_view> dot = absl::StrSplit(colon.back(), '.');
  if (dot.size() != 2) return std::nullopt;
  PciAddress a;
  if (colon.size() == 3 && !ParseHex(colon[0], 8, a.domain)) return std::nullopt;
  if (!ParseHex(colon[colon.size() - 2], 2, a.bus) || !ParseHex(dot[0], 2, a.device) ||
      !ParseHex(dot[1], 1, a.function) || a.device >= 32 || a.function >= 8) {
    return std::nullopt;
  }
  return a;
}

std::string FormatPciAddress(const PciAddress& a) {
  return absl::StrFormat("%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
}

}  // namespace gpusched::agent
