#include "common/io/metrics/metrics_endpoint.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/io/metrics/text_format.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpusched::metrics {
namespace {

// For a client to send its request, and to take the answer.
constexpr absl::Duration kClientTimeout = absl::Seconds(5);
constexpr size_t kMaxRequestHead = 16 * 1024;
// How long accepting pauses after accept(2) failed for want of resources.
constexpr absl::Duration kAcceptRetry = absl::Milliseconds(100);

struct ListenAddress {
  std::string host;  // as given, an IPv6 address in brackets: for url()
  std::string port;
};

// Checked here so that a typo gets a message about the flag, whatever the
// resolver would have said.
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", listen, "\": expected HOST:PORT, e.g. 127.0.0.1:6871 or 0.0.0.0:6871"));
  }
  return ListenAddress{listen.substr(0, colon), absl::StrCat(port)};
}

// A listening TCP socket on the first address `address` resolves to that
// binds; the errno of the last failure otherwise.
absl::StatusOr<int> Listen(const ListenAddress& address, const std::string& flag) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  std::string host = address.host;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), address.port.c_str(), &hints, &found); rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", flag, ": ", gai_strerror(rc)));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      why = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", flag, " (address in use, or not a local address?): ", why));
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  if (bound.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

// The request's head (up to the blank line), or empty when the client sent
// none in time, closed, sent more head than any scraper does, or the
// endpoint is stopping (`wake_fd` readable).
std::string ReadRequestHead(int fd, int wake_fd) {
  std::string head;
  const absl::Time deadline = absl::Now() + kClientTimeout;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.find("\n\n") == std::string::npos) {
    if (head.size() > kMaxRequestHead) return "";
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return "";
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    const int ready = poll(p, 2, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || p[1].revents != 0) return "";
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    head.append(buffer, static_cast<size_t>(n));
  }
  return head;
}

// Blocking, within the socket's send timeout (kClientTimeout, set at accept):
// a scraper that stops reading is dropped rather than holding the endpoint.
void SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the scraper went away: nothing to tell it
    sent += static_cast<size_t>(n);
  }
}

std::string Response(int status, const char* reason, const char* content_type, const std::string& body,
                     bool with_body) {
  return absl::StrCat("HTTP/1.1 ", status, " ", reason, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", with_body ? body : "");
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  absl::StatusOr<ListenAddress> address = ParseListenAddress(listen);
  if (!address.ok()) return address.status();
  absl::StatusOr<int> fd = Listen(*address, listen);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  endpoint->listen_fd_ = *fd;
  endpoint->host_ = address->host;
  endpoint->port_ = BoundPort(*fd);
  endpoint->wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (endpoint->wake_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": eventfd: ", std::strerror(errno)));
  }
  endpoint->collectables_ = std::move(collectables);
  endpoint->thread_ = std::thread([e = endpoint.get()] { e->ServeLoop(); });
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    // An eventfd write of 1 cannot fail short of a counter at its maximum.
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string MetricsEndpoint::url() const { return absl::StrCat("http://", host_, ":", port_, "/metrics"); }

void MetricsEndpoint::ServeLoop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    const int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      // Out of descriptors or memory, the connection stays in the backlog and
      // the socket readable: polling it again at once would spin.
      if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) {
        pollfd wake{wake_fd_, POLLIN, 0};
        if (poll(&wake, 1, static_cast<int>(absl::ToInt64Milliseconds(kAcceptRetry))) > 0) return;
      }
      continue;
    }
    const timeval send_timeout = absl::ToTimeval(kClientTimeout);
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
    Serve(connection);
    close(connection);
  }
}

void MetricsEndpoint::Serve(int connection) {
  const std::string head = ReadRequestHead(connection, wake_fd_);
  if (head.empty()) return;
  // "METHOD TARGET HTTP/1.x": the query string, if any, changes nothing.
  std::vector<std::string> request_line = absl::StrSplit(head.substr(0, head.find_first_of("\r\n")), ' ');
  if (request_line.size() != 3) {
    SendAll(connection, Response(400, "Bad Request", "text/plain", "malformed request line\n", true));
    return;
  }
  const std::string& method = request_line[0];
  const std::string path = request_line[1].substr(0, request_line[1].find('?'));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    SendAll(connection, Response(405, "Method Not Allowed", "text/plain", "only GET /metrics is served\n", true));
  } else if (path != "/metrics") {
    SendAll(connection, Response(404, "Not Found", "text/plain", "only /metrics is served\n", !head_only));
  } else {
    SendAll(connection, Response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", Render(), !head_only));
  }
}

std::string MetricsEndpoint::Render() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& collectable : collectables_) {
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  return TextFormatOf(families);
}

}  // namespace gpusched::metrics
