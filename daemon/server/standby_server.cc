#include "daemon/server/standby_server.h"

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/io/tls/grpc_credentials.h"
#include "common/replica_addresses.h"
#include "common/threads/mutex.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace gpusched::server {

// Answers any method no other service has: all of them, on a standby.
class RefuseAsStandby final : public grpc::CallbackGenericService {
 public:
  void SetLeader(const std::string& address) {
    MutexLock lock(&mu_);
    leader_ = address;
  }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    std::string leader;
    {
      MutexLock lock(&mu_);
      leader = leader_;
    }
    return new Refusal(context, leader);
  }

 private:
  class Refusal final : public grpc::ServerGenericBidiReactor {
   public:
    Refusal(grpc::GenericCallbackServerContext* context, const std::string& leader) {
      if (!leader.empty()) context->AddTrailingMetadata(kLeaderMetadata, leader);
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          leader.empty()
                              ? "this gpuschedd is a standby replica, and no replica is active now"
                              : absl::StrCat("this gpuschedd is a standby replica; the active one is at ", leader)));
    }
    void OnDone() override { delete this; }
  };

  Mutex mu_;
  std::string leader_ ABSL_GUARDED_BY(mu_);
};

StandbyServer::StandbyServer() : refuse_(std::make_unique<RefuseAsStandby>()) {}

StandbyServer::~StandbyServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
}

absl::StatusOr<std::unique_ptr<StandbyServer>> StandbyServer::Start(const std::string& listen_address,
                                                                    const std::optional<tls::TlsMaterial>& tls) {
  std::unique_ptr<StandbyServer> standby(new StandbyServer());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen_address, tls::ServerCredentials(tls), &port);
  builder.RegisterCallbackGenericService(standby->refuse_.get());
  standby->server_ = builder.BuildAndStart();
  if (standby->server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen_address, " (address in use, or not a local address?)"));
  }
  standby->server_->GetHealthCheckService()->SetServingStatus(false);
  return standby;
}

void StandbyServer::SetLeader(const std::string& address) { refuse_->SetLeader(address); }

}  // namespace gpusched::server
