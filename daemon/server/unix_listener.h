#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "daemon/server/local_callers.h"

namespace grpc {
class Server;
}

namespace gpusched::server {

// The daemon's Unix socket for the CLI on its own host. gRPC's own Unix
// listener cannot say who connected, so connections are accepted here, the
// caller's uid read with SO_PEERCRED into `callers`, and the connection
// handed to the gRPC server. The socket is world-connectable (0666): the
// daemon, not the file mode, decides what each caller may do.
class UnixListener {
 public:
  // Replaces a stale socket file at `path` (one no daemon answers on).
  static absl::StatusOr<std::unique_ptr<UnixListener>> Start(const std::string& path, grpc::Server& server,
                                                             LocalCallers& callers);
  ~UnixListener();  // stops accepting and removes the socket file

  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

 private:
  static constexpr absl::Duration kKeepUserNames = absl::Seconds(60);
  UnixListener(std::string path, int listen_fd, int wake_fd, grpc::Server& server, LocalCallers& callers);
  void AcceptLoop();

  const std::string path_;
  const int listen_fd_;
  const int wake_fd_;  // an eventfd: written once to stop the loop
  grpc::Server& server_;
  LocalCallers& callers_;
  // The accept loop's own. Each CLI command is a connection: the user
  // database was read for every one of them.
  UserNameCache user_names_{kKeepUserNames};
  std::thread thread_;
};

}  // namespace gpusched::server
