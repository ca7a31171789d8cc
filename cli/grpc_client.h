#pragma once

#include <memory>
#include <string>

#include "cli/client.h"

namespace gpusched::cli {

// Every unary call carries this deadline: a wedged daemon must not hang a script.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

// A SchedulerClient over a gRPC channel to gpuschedd: TLS when the endpoint
// has TLS material, else plaintext.
std::unique_ptr<SchedulerClient> MakeGrpcSchedulerClient(const DaemonEndpoint& endpoint);

}  // namespace gpusched::cli
