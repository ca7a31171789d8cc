#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace gpusched::testing {

// A unix datagram socket standing in for systemd's NOTIFY_SOCKET: what
// sd_notify(3) sends to it arrives here as one datagram per call.
class NotifySocket {
 public:
  NotifySocket();  // binds a fresh path under /tmp
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }

  // Receives datagrams until one has the line `line` (e.g. "READY=1") or
  // `timeout` passes; true when it came. Every datagram received is kept.
  bool WaitForLine(const std::string& line, absl::Duration timeout);
  // How many received datagrams have the line `line`.
  int Count(const std::string& line) const;
  // The value of the last "KEY=value" line received, or "".
  std::string Last(const std::string& key) const;
  // Everything received, for failure messages.
  std::string Received() const;

 private:
  int fd_ = -1;
  std::string path_;
  std::vector<std::string> datagrams_;
};

}  // namespace gpusched::testing
