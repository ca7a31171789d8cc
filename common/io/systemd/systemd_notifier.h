#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpusched::service {

// Tells systemd how a Type=notify service is doing (sd_notify(3)): READY=1
// once it serves, STATUS= lines for `systemctl status`, STOPPING=1, and
// WATCHDOG=1 pings when the unit sets WatchdogSec=. Outside systemd
// (NOTIFY_SOCKET unset) every call does nothing, so the binaries need no
// special case for being started by hand, by tests or by `gpuschedd dev`.
class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET and, as sd_watchdog_enabled(3) does, WATCHDOG_USEC
  // (and WATCHDOG_PID, so that a child does not ping for its parent).
  SystemdNotifier();

  // Whether systemd listens at all.
  bool enabled() const { return enabled_; }

  void Ready(absl::string_view status);
  void Status(absl::string_view status);
  void Stopping();

  // How often to ping: half of WatchdogSec=, as sd_watchdog_enabled(3)
  // advises; std::nullopt when the unit has no watchdog.
  std::optional<absl::Duration> watchdog_interval() const { return watchdog_interval_; }

  // Sends WATCHDOG=1 unless one went out less than watchdog_interval() ago;
  // cheap enough for every turn of a loop. Call it from the thread whose
  // hang should get the service restarted. Thread-safe.
  void PingWatchdogIfDue();

 private:
  void Send(const std::string& state);

  bool enabled_ = false;
  std::string socket_path_;
  std::optional<absl::Duration> watchdog_interval_;
  // steady_clock nanoseconds of the last ping; 0 before the first one.
  std::atomic<int64_t> last_ping_ns_{0};
};

}  // namespace gpusched::service
