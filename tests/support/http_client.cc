#include "tests/support/http_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::testing {
namespace {

absl::StatusOr<int> Connect(const std::string& host, int port, int timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("nothing answers at ", host, ":", port));
  return fd;
}

}  // namespace

absl::StatusOr<HttpResponse> HttpGet(const std::string& host, int port, const std::string& target, int timeout_ms) {
  auto fd = Connect(host, port, timeout_ms);
  if (!fd.ok()) return fd.status();
  // HTTP/1.0 without keep-alive: the server closes after the body, so EOF
  // ends it and there is no chunked encoding to undo.
  const std::string request = absl::StrCat("GET ", target, " HTTP/1.0\r\nHost: ", host, ":", port, "\r\n\r\n");
  if (send(*fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(*fd);
    return absl::UnavailableError(absl::StrCat("cannot send to ", host, ":", port, ": ", std::strerror(errno)));
  }
  std::string raw;
  char buf[16384];
  while (true) {
    ssize_t n = recv(*fd, buf, sizeof buf, 0);
    if (n > 0) {
      raw.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = errno;
    close(*fd);
    if (n < 0) return absl::DeadlineExceededError(absl::StrCat(host, ":", port, target, ": ", std::strerror(err)));
    break;
  }
  const size_t header_end = raw.find("\r\n\r\n");
  const size_t space = raw.find(' ');
  HttpResponse response;
  if (header_end == std::string::npos || space == std::string::npos ||
      !absl::SimpleAtoi(raw.substr(space + 1, 3), &response.status)) {
    return absl::DataLossError(
        absl::StrCat("not an HTTP response from ", host, ":", port, target, ": ", raw.substr(0, 200)));
  }
  response.body = raw.substr(header_end + 4);
  return response;
}

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

}  // namespace gpusched::testing
