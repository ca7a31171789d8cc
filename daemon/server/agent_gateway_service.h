#pragma once

#include "daemon/server/caller.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/session_relay.h"
#include "gpusched/v1/agent.grpc.pb.h"

namespace gpusched::server {

class AgentGatewayService final : public v1::AgentGateway::CallbackService {
 public:
  // `callers` decides which node each connection may register as.
  AgentGatewayService(SchedulerLoop& loop, SessionRelay& sessions, CallerPolicy callers)
      : loop_(loop), sessions_(sessions), callers_(std::move(callers)) {}
  grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* Connect(grpc::CallbackServerContext* ctx) override;

 private:
  SchedulerLoop& loop_;
  SessionRelay& sessions_;
  const CallerPolicy callers_;
};

}  // namespace gpusched::server
