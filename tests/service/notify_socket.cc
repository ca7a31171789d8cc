#include "tests/service/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace gpusched::testing {
namespace {

bool HasLine(const std::string& datagram, absl::string_view line) {
  for (absl::string_view l : absl::StrSplit(datagram, '\n')) {
    if (l == line) return true;
  }
  return false;
}

}  // namespace

NotifySocket::NotifySocket() {
  static std::atomic<int> counter{0};
  path_ = absl::StrCat("/tmp/gpusched-notify-", getpid(), "-", counter++, ".sock");
  unlink(path_.c_str());
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error(absl::StrCat("cannot bind ", path_, ": ", std::strerror(errno)));
  }
}

NotifySocket::~NotifySocket() {
  if (fd_ >= 0) close(fd_);
  unlink(path_.c_str());
}

bool NotifySocket::WaitForLine(const std::string& line, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) continue;
    datagrams_.emplace_back(buffer, static_cast<size_t>(n));
    if (HasLine(datagrams_.back(), line)) return true;
  }
}

int NotifySocket::Count(const std::string& line) const {
  int count = 0;
  for (const std::string& d : datagrams_) count += HasLine(d, line) ? 1 : 0;
  return count;
}

std::string NotifySocket::Last(const std::string& key) const {
  std::string value;
  for (const std::string& d : datagrams_) {
    for (absl::string_view l : absl::StrSplit(d, '\n')) {
      if (absl::ConsumePrefix(&l, key + "=")) value = std::string(l);
    }
  }
  return value;
}

std::string NotifySocket::Received() const { return absl::StrJoin(datagrams_, " | "); }

}  // namespace gpusched::testing
