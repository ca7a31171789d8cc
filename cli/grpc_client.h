#pragma once

#include <memory>
#include <string>

#include "cli/client.h"

namespace gpusched::cli {

// Every unary call carries this deadline: a wedged daemon must not hang a script.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

// A SchedulerClient over an insecure gRPC channel to gpuschedd.
std::unique_ptr<SchedulerClient> MakeGrpcSchedulerClient(const std::string& address);

}  // namespace gpusched::cli
