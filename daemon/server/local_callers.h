#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
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
