#include "common/io/systemd/systemd_notifier.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"

namespace gpusched::service {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// WatchdogSec= as systemd passes it: WATCHDOG_USEC, for the process that
// WATCHDOG_PID names when it names one (a child must not ping for its parent).
std::optional<uint64_t> WatchdogMicros() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  uint64_t micros = 0;
  if (usec == nullptr || !absl::SimpleAtoi(usec, &micros) || micros == 0) return std::nullopt;
  if (const char* pid = std::getenv("WATCHDOG_PID"); pid != nullptr && *pid != '\0') {
    int64_t watched = 0;
    if (!absl::SimpleAtoi(pid, &watched) || watched != getpid()) return std::nullopt;
  }
  return micros;
}

}  // namespace

// The protocol of sd_notify(3), spoken directly: a datagram of KEY=value
// lines to the unix socket NOTIFY_SOCKET names ('@' for the abstract
// namespace). libsystemd for these few lines would load seven libraries
// into the daemon and into every agent.
SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  if (!enabled_) return;
  socket_path_ = socket;
  if (auto micros = WatchdogMicros()) watchdog_interval_ = absl::Microseconds(static_cast<int64_t>(*micros / 2));
}

void SystemdNotifier::Send(const std::string& state) {
  if (!enabled_) return;
  // Job processes get an environment built from scratch, so leaving
  // NOTIFY_SOCKET set reaches none of them.
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path) || (socket_path_[0] != '/' && socket_path_[0] != '@')) {
    GetLogger("systemd")->warn("NOTIFY_SOCKET={}: not a unix socket path; systemd is not told \"{}\"", socket_path_,
                               state);
    return;
  }
  std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path_.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address),
                       length) != static_cast<ssize_t>(state.size())) {
    GetLogger("systemd")->warn("telling systemd \"{}\" through {} failed: {}", state, socket_path_,
                               std::strerror(errno));
  }
  if (fd >= 0) close(fd);
}

void SystemdNotifier::Ready(absl::string_view status) { Send(absl::StrCat("READY=1\nSTATUS=", status)); }

void SystemdNotifier::Status(absl::string_view status) { Send(absl::StrCat("STATUS=", status)); }

void SystemdNotifier::Stopping() { Send("STOPPING=1"); }

void SystemdNotifier::PingWatchdogIfDue() {
  if (!watchdog_interval_) return;
  const int64_t now = SteadyNowNs();
  int64_t last = last_ping_ns_.load(std::memory_order_relaxed);
  if (last != 0 && now - last < absl::ToInt64Nanoseconds(*watchdog_interval_)) return;
  // One thread wins the right to ping for this interval.
  if (!last_ping_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  Send("WATCHDOG=1");
}

}  // namespace gpusched::service
