#include "fake_daemon.h"

#include <chrono>
#include <stdexcept>

namespace gpusched::agent::testing {

class FakeDaemon::Service final : public v1::AgentGateway::Service {
 public:
  explicit Service(FakeDaemon* daemon) : daemon_(daemon) {}

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>* stream) override {
    v1::AgentMessage message;
    if (!stream->Read(&message)) return grpc::Status::OK;
    daemon_->Record(message);
    if (!message.has_register_()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "register first");
    v1::DaemonMessage ack;
    {
      std::lock_guard<std::mutex> write_lock(daemon_->write_mu_);
      std::lock_guard<std::mutex> lock(daemon_->mu_);
      if (daemon_->refusal_.has_value()) return *daemon_->refusal_;
      *ack.mutable_register_ack() = daemon_->ack_;
      ack.mutable_register_ack()->set_node(message.register_().node().name());
      daemon_->current_context_ = context;
      daemon_->current_stream_ = stream;
      stream->Write(ack);
    }
    while (stream->Read(&message)) {
      daemon_->Record(message);
      bool ack_it = false;
      {
        std::lock_guard<std::mutex> lock(daemon_->mu_);
        ack_it = message.has_heartbeat() && daemon_->ack_heartbeats_;
      }
      if (ack_it) {
        v1::DaemonMessage beat_ack;
        beat_ack.mutable_heartbeat_ack()->set_seq(message.heartbeat().seq());
        std::lock_guard<std::mutex> write_lock(daemon_->write_mu_);
        stream->Write(beat_ack);
      }
    }
    std::lock_guard<std::mutex> write_lock(daemon_->write_mu_);
    std::lock_guard<std::mutex> lock(daemon_->mu_);
    if (daemon_->current_stream_ == stream) {
      daemon_->current_stream_ = nullptr;
      daemon_->current_context_ = nullptr;
    }
    return grpc::Status::OK;
  }

 private:
  FakeDaemon* daemon_;
};

FakeDaemon::FakeDaemon(int port) : service_(std::make_unique<Service>(this)) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) throw std::runtime_error("fake daemon cannot listen on port " + std::to_string(port));
}

FakeDaemon::~FakeDaemon() { Shutdown(); }

std::string FakeDaemon::address() const { return "127.0.0.1:" + std::to_string(port_); }

void FakeDaemon::AckHeartbeats(bool ack) {
  std::lock_guard<std::mutex> lock(mu_);
  ack_heartbeats_ = ack;
}

void FakeDaemon::SetAck(v1::RegisterAck ack) {
  std::lock_guard<std::mutex> lock(mu_);
  ack_ = std::move(ack);
}

void FakeDaemon::RefuseRegistrations(std::optional<grpc::Status> refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  refusal_ = std::move(refusal);
}

bool FakeDaemon::Send(const v1::DaemonMessage& message) {
  std::lock_guard<std::mutex> write_lock(write_mu_);
  grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>* stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream = current_stream_;
  }
  return stream != nullptr && stream->Write(message);
}

void FakeDaemon::DropConnection() {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_context_ != nullptr) current_context_->TryCancel();
}

void FakeDaemon::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  // Cancels the open streams too, as a daemon that exits would.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
}

void FakeDaemon::Record(const v1::AgentMessage& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
  }
  cv_.notify_all();
}

std::vector<v1::AgentMessage> FakeDaemon::Messages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_;
}

bool FakeDaemon::WaitUntil(const std::function<bool(const std::vector<v1::AgentMessage>&)>& done,
                           absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::nanoseconds(absl::ToInt64Nanoseconds(timeout)),
                      [&] { return done(messages_); });
}

std::vector<v1::RegisterNode> FakeDaemon::WaitForRegistrations(size_t n, absl::Duration timeout) const {
  std::vector<v1::RegisterNode> found;
  WaitUntil(
      [&](const std::vector<v1::AgentMessage>& messages) {
        found.clear();
        for (const auto& m : messages) {
          if (m.has_register_()) found.push_back(m.register_());
        }
        return found.size() >= n;
      },
      timeout);
  return found;
}

std::optional<v1::JobUpdate> FakeDaemon::WaitForUpdate(uint64_t job_id, v1::JobUpdate::Kind kind,
                                                       absl::Duration timeout) const {
  std::optional<v1::JobUpdate> found;
  WaitUntil(
      [&](const std::vector<v1::AgentMessage>& messages) {
        for (const auto& m : messages) {
          if (m.has_job_update() && m.job_update().job_id() == job_id && m.job_update().kind() == kind) {
            found = m.job_update();
            return true;
          }
        }
        return false;
      },
      timeout);
  return found;
}

}  // namespace gpusched::agent::testing
