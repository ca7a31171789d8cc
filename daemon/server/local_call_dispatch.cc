#include "daemon/server/local_call_dispatch.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "daemon/server/undecodable_request.h"

namespace gpusched::server {
namespace {

using Starter = void (*)(SchedulerCalls&, const Caller&, const local_call::Request&, LocalReplySink);

// The request and response of one call, alive until its reply is encoded.
template <typename Request, typename Response>
struct Exchange {
  Request request;
  Response response;
};

template <typename Request, typename Response,
          void (SchedulerCalls::*kMethod)(const Caller&, const Request&, Response*, CallDone)>
void Start(SchedulerCalls& calls, const Caller& caller, const local_call::Request& call, LocalReplySink reply) {
  auto exchange = std::make_shared<Exchange<Request, Response>>();
  if (!exchange->request.ParseFromString(call.message)) {
    return reply(local_call::EncodeReply(UndecodableRequest(absl::StrCat("/gpusched.v1.Scheduler/", call.method)), ""));
  }
  (calls.*kMethod)(
      caller, exchange->request, &exchange->response, [exchange, reply = std::move(reply)](const absl::Status& status) {
        reply(local_call::EncodeReply(status, status.ok() ? exchange->response.SerializeAsString() : std::string()));
      });
}

const std::map<std::string, Starter, std::less<>>& Methods() {
  static const auto* methods = new std::map<std::string, Starter, std::less<>>{
      {"SubmitJob", &Start<v1::SubmitJobRequest, v1::SubmitJobResponse, &SchedulerCalls::SubmitJob>},
      {"GetJob", &Start<v1::GetJobRequest, v1::Job, &SchedulerCalls::GetJob>},
      {"ListJobs", &Start<v1::ListJobsRequest, v1::ListJobsResponse, &SchedulerCalls::ListJobs>},
      {"CancelJob", &Start<v1::CancelJobRequest, v1::CancelJobResponse, &SchedulerCalls::CancelJob>},
      {"ListNodes", &Start<v1::ListNodesRequest, v1::ListNodesResponse, &SchedulerCalls::ListNodes>},
      {"DrainNode", &Start<v1::DrainNodeRequest, v1::Node, &SchedulerCalls::DrainNode>},
      {"ResumeNode", &Start<v1::ResumeNodeRequest, v1::Node, &SchedulerCalls::ResumeNode>},
      {"ProbeNode", &Start<v1::ProbeNodeRequest, v1::Node, &SchedulerCalls::ProbeNode>},
      {"InterruptNode", &Start<v1::InterruptNodeRequest, v1::Node, &SchedulerCalls::InterruptNode>},
      {"ListPools", &Start<v1::ListPoolsRequest, v1::ListPoolsResponse, &SchedulerCalls::ListPools>},
      {"HoldJob", &Start<v1::HoldJobRequest, v1::Job, &SchedulerCalls::HoldJob>},
      {"ReleaseJob", &Start<v1::ReleaseJobRequest, v1::Job, &SchedulerCalls::ReleaseJob>},
  };
  return *methods;
}

}  // namespace

void StartLocalCall(SchedulerCalls& calls, const Caller& caller, const local_call::Request& request,
                    LocalReplySink reply) {
  const auto& methods = Methods();
  auto it = methods.find(request.method);
  if (it == methods.end()) {
    // WatchJobs and Attach are streams: gRPC's alone.
    return reply(local_call::EncodeReply(
        absl::UnimplementedError(absl::StrCat("local call: gpuschedd has no unary method \"",
                                              absl::CHexEscape(request.method),
                                              "\" (streams such as WatchJobs and Attach are served over gRPC)")),
        ""));
  }
  it->second(calls, caller, request, std::move(reply));
}

}  // namespace gpusched::server
