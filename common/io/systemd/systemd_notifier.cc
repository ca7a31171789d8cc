#include "common/io/systemd/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"

namespace gpusched::service {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  if (!enabled_) return;
  uint64_t usec = 0;
  // > 0: the watchdog is on and meant for this process.
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0 && usec > 0) {
    watchdog_interval_ = absl::Microseconds(static_cast<int64_t>(usec / 2));
  }
}

void SystemdNotifier::Send(const std::string& state) {
  if (!enabled_) return;
  // Job processes get an environment built from scratch, so leaving
  // NOTIFY_SOCKET set (unset_environment=0) reaches none of them.
  const int rc = sd_notify(/*unset_environment=*/0, state.c_str());
  if (rc < 0) GetLogger("systemd")->warn("sd_notify({}) failed: error {}", state, -rc);
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
