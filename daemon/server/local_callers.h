#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::server {

// Who is at the other end of a Unix-socket connection, as the kernel says
// (SO_PEERCRED) when it is accepted: the one identity a caller cannot forge.
struct LocalCaller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string user;  // the uid's name, or the uid in digits when it has none
};

// The connections UnixListener handed to gRPC, by the peer name gRPC gives
// their calls ("fd:N"). Thread-safe: the listener writes, handlers read.
class LocalCallers {
 public:
  void Connected(int fd, LocalCaller caller);
  // nullopt for a call that did not come over the Unix socket.
  std::optional<LocalCaller> Find(absl::string_view grpc_peer) const;

 private:
  mutable std::mutex mu_;
  std::map<int, LocalCaller> by_fd_;  // an fd number is reused only once its connection is closed
};

// What a caller may do. Local callers are who the kernel says; admins (uid 0
// and the daemon's `admins`) may act on anyone's jobs. A caller over TCP is
// an agent or a tool the network and TLS already vetted: trusted as admin.
struct Caller {
  bool local = false;
  std::string user;  // local callers only
  bool admin = true;

  // Whether this caller may cancel, hold or release a job of `owner`.
  bool MayActOnJobOf(const std::string& owner) const { return admin || owner == user; }
};

Caller IdentifyCaller(const LocalCallers* callers, const std::set<std::string>& admins, absl::string_view grpc_peer);

}  // namespace gpusched::server
