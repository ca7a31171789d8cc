#include "agent/route_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpusched::agent {

absl::StatusOr<std::string> LocalAddressToward(absl::string_view daemon) {
  if (absl::StartsWith(daemon, "unix:")) return std::string("127.0.0.1");
  std::string host(daemon);
  std::string port;
  if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    port = host.substr(colon + 1);
    host.resize(colon);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || port.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("daemon address \"", daemon, "\" is not HOST:PORT"));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve daemon host \"", host, "\": ", gai_strerror(rc)));
  }
  absl::Status last = absl::UnavailableError(absl::StrCat("no address of \"", host, "\" is routable"));
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {};
    const bool ok = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
                    inet_ntop(local.ss_family,
                              local.ss_family == AF_INET6
                                  ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                                  : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr),
                              text, sizeof(text)) != nullptr;
    if (!ok)
      last = absl::UnavailableError(absl::StrCat("no route to daemon host \"", host, "\": ", std::strerror(errno)));
    close(fd);
    if (ok) {
      freeaddrinfo(found);
      return std::string(text);
    }
  }
  freeaddrinfo(found);
  return last;
}

}  // namespace gpusched::agent
