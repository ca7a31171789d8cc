#pragma once

#include "daemon/server/scheduler_loop.h"
#include "gpusched/v1/agent.grpc.pb.h"

namespace gpusched::server {

class AgentGatewayService final : public v1::AgentGateway::CallbackService {
 public:
  explicit AgentGatewayService(SchedulerLoop& loop) : loop_(loop) {}
  grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* Connect(grpc::CallbackServerContext* ctx) override;

 private:
  SchedulerLoop& loop_;
};

}  // namespace gpusched::server
