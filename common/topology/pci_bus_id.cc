#include "common/topology/pci_bus_id.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace gpusched::topology {
namespace {

// Parses 1..max_digits hex digits into *out, at most `max_value`.
bool ParseHexField(absl::string_view s, size_t max_digits, uint64_t max_value, uint64_t* out) {
  if (s.empty() || s.size() > max_digits) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  uint64_t v = 0;
  if (!absl::SimpleHexAtoi(s, &v) || v > max_value) return false;
  *out = v;
  return true;
}

}  // namespace

std::optional<std::string> NormalizePciBusId(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3) return std::nullopt;
  std::vector<absl::string_view> dev_fn = absl::StrSplit(parts[2], '.');
  if (dev_fn.size() != 2) return std::nullopt;
  uint64_t domain = 0, bus = 0, device = 0, function = 0;
  if (!ParseHexField(parts[0], 8, 0xffffffff, &domain) || !ParseHexField(parts[1], 2, 0xff, &bus) ||
      !ParseHexField(dev_fn[0], 2, 0x1f, &device) || !ParseHexField(dev_fn[1], 1, 7, &function)) {
    return std::nullopt;
  }
  return absl::StrFormat("%04x:%02x:%02x.%x", domain, bus, device, function);
}

std::string PlaceholderPciBusId(uint16_t domain, int n) {
  const int bus = 0xff - ((n >> 8) & 0xff);
  return absl::StrFormat("%04x:%02x:%02x.0", domain, bus, n & 0xff);
}

}  // namespace gpusched::topology
