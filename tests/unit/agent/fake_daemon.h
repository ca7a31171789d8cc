#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpusched/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace gpusched::agent::testing {

// Just enough of gpuschedd's AgentGateway to drive an agent from a test: acks
// every registration, records everything the agent sends, sends what the test
// tells it to, and can break the stream or go away.
class FakeDaemon {
 public:
  // port 0: any free port.
  explicit FakeDaemon(int port = 0);
  ~FakeDaemon();  // Shutdown()

  std::string address() const;
  int port() const { return port_; }

  void SetAck(v1::RegisterAck ack);
  // Ends every registration with `refusal` (as gpuschedd refuses a second
  // host under a taken name); std::nullopt acks them again.
  void RefuseRegistrations(std::optional<grpc::Status> refusal);
  // Answer each heartbeat with a HeartbeatAck, as gpuschedd does (off by default).
  void AckHeartbeats(bool ack);
  // To the agent's current stream; false when there is none.
  bool Send(const v1::DaemonMessage& message);
  // Cancels the current stream: to the agent the connection broke.
  void DropConnection();
  void Shutdown();

  std::vector<v1::AgentMessage> Messages() const;
  // Waits until `done(messages)` holds.
  bool WaitUntil(const std::function<bool(const std::vector<v1::AgentMessage>&)>& done,
                 absl::Duration timeout = absl::Seconds(5)) const;
  // The registrations received so far, waiting for at least `n`.
  std::vector<v1::RegisterNode> WaitForRegistrations(size_t n, absl::Duration timeout = absl::Seconds(5)) const;
  std::optional<v1::JobUpdate> WaitForUpdate(uint64_t job_id, v1::JobUpdate::Kind kind,
                                             absl::Duration timeout = absl::Seconds(5)) const;

 private:
  class Service;
  void Record(const v1::AgentMessage& message);

  int port_ = 0;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<v1::AgentMessage> messages_;
  v1::RegisterAck ack_;
  std::optional<grpc::Status> refusal_;
  grpc::ServerContext* current_context_ = nullptr;
  grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>* current_stream_ = nullptr;
  std::mutex write_mu_;
  bool shut_down_ = false;
  bool ack_heartbeats_ = false;
};

}  // namespace gpusched::agent::testing
