#include "common/io/systemd/systemd_notifier.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"

namespace {

// A datagram socket where systemd's would be: NAME under /tmp, or in the
// abstract namespace when `abstract`. Sets NOTIFY_SOCKET to it while alive.
class FakeSystemd {
 public:
  explicit FakeSystemd(bool abstract) {
    const std::string name = absl::StrCat("gpusched-notify-test-", getpid());
    env_ = abstract ? absl::StrCat("@", name) : absl::StrCat("/tmp/", name);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    env_.copy(address.sun_path, env_.size());
    if (abstract) address.sun_path[0] = '\0';
    if (!abstract) unlink(env_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    REQUIRE(bind(fd_, reinterpret_cast<const sockaddr*>(&address),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + env_.size())) == 0);
    setenv("NOTIFY_SOCKET", env_.c_str(), 1);
  }
  ~FakeSystemd() {
    unsetenv("NOTIFY_SOCKET");
    close(fd_);
    if (env_[0] == '/') unlink(env_.c_str());
  }
  // The next datagram, or "" when none comes within a second.
  std::string Next() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1) return "";
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
  }

 private:
  std::string env_;
  int fd_ = -1;
};

}  // namespace

TEST_CASE("the notifier sends sd_notify's datagrams to a socket path and to an abstract socket") {
  const bool abstract = GENERATE(false, true);
  FakeSystemd systemd(abstract);
  gpusched::service::SystemdNotifier notifier;
  REQUIRE(notifier.enabled());
  notifier.Ready("serving on :6870");
  CHECK(systemd.Next() == "READY=1\nSTATUS=serving on :6870");
  notifier.Stopping();
  CHECK(systemd.Next() == "STOPPING=1");
}

TEST_CASE("the watchdog pings at half of WATCHDOG_USEC, and only for the process WATCHDOG_PID names") {
  FakeSystemd systemd(/*abstract=*/false);
  setenv("WATCHDOG_USEC", "3000000", 1);
  SECTION("no WATCHDOG_PID: ours") {
    unsetenv("WATCHDOG_PID");
    gpusched::service::SystemdNotifier notifier;
    REQUIRE(notifier.watchdog_interval().has_value());
    CHECK(*notifier.watchdog_interval() == absl::Milliseconds(1500));
    notifier.PingWatchdogIfDue();
    CHECK(systemd.Next() == "WATCHDOG=1");
    notifier.PingWatchdogIfDue();  // within the interval: nothing
    notifier.Status("still here");
    CHECK(systemd.Next() == "STATUS=still here");
  }
  SECTION("WATCHDOG_PID of this process") {
    setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
    gpusched::service::SystemdNotifier notifier;
    CHECK(notifier.watchdog_interval().has_value());
  }
  SECTION("WATCHDOG_PID of another process: no pings") {
    setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
    gpusched::service::SystemdNotifier notifier;
    CHECK_FALSE(notifier.watchdog_interval().has_value());
    notifier.PingWatchdogIfDue();
    notifier.Stopping();
    CHECK(systemd.Next() == "STOPPING=1");
  }
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
}

TEST_CASE("without NOTIFY_SOCKET the notifier does nothing") {
  unsetenv("NOTIFY_SOCKET");
  gpusched::service::SystemdNotifier notifier;
  CHECK_FALSE(notifier.enabled());
  notifier.Ready("nobody listens");  // must not fail or block
}
