#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

// Who is at the other end of a Unix-socket connection, as the kernel says
// (SO_PEERCRED) when it is accepted: the one identity a caller cannot forge.
struct LocalCaller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string user;  // the uid's name, or the uid in digits when it has none
};

// The uid's name, or the uid in digits when it has none.
std::string UserName(uid_t uid);

// UserName for every connection accepted, without reading the user database
// each time (getpwuid opens and parses /etc/passwd, or asks NSS): a name is
// kept for `keep` after it was looked up, so that a renamed or removed user
// is seen within that time. One thread's (the listener's); not thread-safe.
class UserNameCache {
 public:
  explicit UserNameCache(absl::Duration keep) : keep_(keep) {}
  const std::string& NameOf(uid_t uid, absl::Time now);

 private:
  struct Entry {
    std::string name;
    absl::Time looked_up;
  };
  absl::Duration keep_;
  std::map<uid_t, Entry> by_uid_;
};

// The connections UnixListener handed to gRPC, by the peer name gRPC gives
// their calls ("fd:N"). Thread-safe: the listener writes, handlers read.
class LocalCallers {
 public:
  void Connected(int fd, LocalCaller caller);
  // nullopt for a call that did not come over the Unix socket.
  std::optional<LocalCaller> Find(absl::string_view grpc_peer) const;

 private:
  mutable Mutex mu_;
  std::map<int, LocalCaller> by_fd_ ABSL_GUARDED_BY(mu_);  // an fd number is reused only once its connection is closed
};

}  // namespace gpusched::server
