#pragma once

#include <memory>

#include "cli/client.h"

namespace gpusched::cli {

// The gRPC service path of the scheduler's methods ("/gpusched.v1.Scheduler/").
inline constexpr char kSchedulerServicePath[] = "/gpusched.v1.Scheduler/";

// A SchedulerClient whose unary calls go straight over HTTP/2
// (H2Connection), one connection per replica made at first use, for an
// endpoint without TLS whose addresses are all unix: sockets or HOST:PORT.
// Streams (WatchJobs, Attach) go to a client `streams` makes, only once one
// is needed. Errors read as the gRPC client's do.
std::unique_ptr<SchedulerClient> MakeDirectSchedulerClient(const DaemonEndpoint& endpoint, ClientFactory streams);

// The CLI's client: direct where the endpoint allows it, else the gRPC
// library's (TLS, dns:/// and other targets).
std::unique_ptr<SchedulerClient> MakeSchedulerClient(const DaemonEndpoint& endpoint);

}  // namespace gpusched::cli
