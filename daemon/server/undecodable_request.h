#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"

namespace gpusched::server {

// INVALID_ARGUMENT for a request to `method` ("/gpusched.v1.Scheduler/SubmitJob")
// that does not decode as its message, in one wording whatever carried it.
absl::Status UndecodableRequest(absl::string_view method);

// gRPC's callback API answers a request it cannot decode with UNIMPLEMENTED
// and no message, which reads as "this daemon lacks the method". This makes
// it INVALID_ARGUMENT saying what was wrong. Only our own methods get here
// with a decoding failure, so the status is rewritten only when the request
// message did not decode.
class UndecodableRequestInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace gpusched::server
