#pragma once

#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "daemon/server/agent_channel.h"
#include "daemon/server/caller.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/session_relay.h"
#include "grpcpp/support/server_callback.h"

namespace gpusched::server {

// One agent's AgentGateway.Connect stream. Reads go straight to the scheduler
// thread as commands; writes are queued and sent one at a time, as the
// callback API requires. Deletes itself when gRPC is done with it.
class AgentStream final : public grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage> {
 public:
  // `caller` is what the connection proved: the node names it may register.
  // Interactive sessions' output goes to `sessions`.
  AgentStream(SchedulerLoop& loop, SessionRelay& sessions, std::string peer, Caller caller);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  class Channel;

  void Dispatch(const v1::AgentMessage& message);
  // OK when the connection proved it is node `name`'s agent.
  absl::Status MayRegisterAs(const std::string& name) const;
  void Refuse(const absl::Status& why);
  void Send(const v1::DaemonMessage& message);
  void FinishOnce(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SchedulerLoop& loop_;
  SessionRelay& sessions_;
  const std::string peer_;
  const Caller caller_;
  v1::AgentMessage in_;
  std::string node_;  // known after RegisterNode; touched by the read path only
  std::shared_ptr<Channel> channel_;

  Mutex mu_;
  std::deque<v1::DaemonMessage> out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpusched::server
