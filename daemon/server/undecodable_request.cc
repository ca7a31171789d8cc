#include "daemon/server/undecodable_request.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/server/grpc_status.h"
#include "grpcpp/support/interceptor.h"

namespace gpusched::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

class UndecodableRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit UndecodableRequestInterceptor(const char* method) : method_(method == nullptr ? "" : method) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // Null after a received message means it did not decode.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      undecodable_ = true;
    }
    if (undecodable_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      methods->ModifySendStatus(ToGrpcStatus(UndecodableRequest(method_)));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool undecodable_ = false;
};

}  // namespace

absl::Status UndecodableRequest(absl::string_view method) {
  return absl::InvalidArgumentError(absl::StrCat(
      "the request to ", method,
      " could not be decoded as that method's protobuf message (a truncated or corrupt message, or one for another "
      "method)"));
}

grpc::experimental::Interceptor* UndecodableRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new UndecodableRequestInterceptor(info->method());
}

}  // namespace gpusched::server
