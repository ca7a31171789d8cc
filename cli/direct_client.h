#pragma once

#include <memory>

#include "absl/time/time.h"
#include "cli/client.h"

namespace gpusched::cli {

// The gRPC service path of the scheduler's methods ("/gpusched.v1.Scheduler/").
inline constexpr char kSchedulerServicePath[] = "/gpusched.v1.Scheduler/";

// Every unary call carries this deadline: a wedged daemon must not hang a script.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

// The CLI's SchedulerClient, without the gRPC library. Unary calls go, one
// connection per replica made at first use, as local calls on a Unix socket
// (LocalConnection; gRPC over HTTP/2 to a daemon that does not take them)
// and as gRPC over HTTP/2 (H2Connection) on TCP; streams (WatchJobs,
// Attach) each on a gRPC connection of their own (h2::GrpcBidiStream). TLS
// when the endpoint has TLS material.
std::unique_ptr<SchedulerClient> MakeSchedulerClient(const DaemonEndpoint& endpoint);

}  // namespace gpusched::cli
