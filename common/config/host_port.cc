#include "common/config/host_port.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

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

}  // namespace gpusched::config
