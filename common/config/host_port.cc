#include "common/config/host_port.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace gpusched::config {

bool IsHostPort(absl::string_view address, bool port_zero_ok) {
  if (absl::StartsWith(address, "unix:")) return address.size() > 5;
  if (address.find_first_of(" \t") != absl::string_view::npos) return false;
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  const absl::string_view host = address.substr(0, colon);
  if (host.front() == '[' && host.back() != ']') return false;
  int port = -1;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port >= (port_zero_ok ? 0 : 1) && port <= 65535;
}

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) return true;
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return false;
  const absl::string_view host = address.substr(0, colon);
  if (host == "localhost" || host == "[::1]") return true;
  const std::vector<absl::string_view> octets = absl::StrSplit(host, '.');
  if (octets.size() != 4 || octets[0] != "127") return false;
  for (absl::string_view octet : octets) {
    int value = -1;
    if (octet.empty() || octet.size() > 3 || !absl::SimpleAtoi(octet, &value) || value < 0 || value > 255) return false;
  }
  return true;
}

}  // namespace gpusched::config
