#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/io/tls/tls_files.h"

namespace grpc {
class Server;
}

namespace gpusched::server {

class RefuseAsStandby;

// What a standby replica serves on the daemon's address while another is
// active: every call fails UNAVAILABLE, saying where the active replica is
// (in the message, and as `gpusched-leader` metadata, which clients follow),
// and the gRPC health check says NOT_SERVING, so a load balancer routes
// elsewhere.
class StandbyServer {
 public:
  static absl::StatusOr<std::unique_ptr<StandbyServer>> Start(const std::string& listen_address,
                                                              const std::optional<tls::TlsMaterial>& tls);
  ~StandbyServer();
  // The active replica's address, as the database last said ("" unknown).
  void SetLeader(const std::string& address);

 private:
  StandbyServer();
  std::unique_ptr<RefuseAsStandby> refuse_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace gpusched::server
