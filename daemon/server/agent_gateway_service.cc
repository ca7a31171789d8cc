#include "daemon/server/agent_gateway_service.h"

#include "daemon/server/agent_stream.h"

namespace gpusched::server {

grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* AgentGatewayService::Connect(
    grpc::CallbackServerContext* ctx) {
  return new AgentStream(loop_, sessions_, ctx->peer(), IdentifyCaller(callers_, *ctx));
}

}  // namespace gpusched::server
