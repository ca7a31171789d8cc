#pragma once

#include <memory>

#include "absl/time/time.h"
#include "cli/client.h"

namespace gpusched::cli {

// The gRPC service path of the scheduler's methods ("/gpusched.v1.Scheduler/").
inline constexpr char kSchedulerServicePath[] = "/gpusched.v1.Scheduler/";

// Every unary call carries this deadline: a wedged daemon must not hang a script.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

// The CLI's SchedulerClient: gRPC on the wire, without the gRPC library.
// Unary calls go over HTTP/2 (H2Connection), one connection per replica
// made at first use; streams (WatchJobs, Attach) each on a connection of
// their own (h2::GrpcBidiStream). TLS when the endpoint has TLS material.
std::unique_ptr<SchedulerClient> MakeSchedulerClient(const DaemonEndpoint& endpoint);

}  // namespace gpusched::cli
