#pragma once

#include <functional>
#include <string>

#include "common/io/local_call/frame.h"
#include "daemon/server/caller.h"
#include "daemon/server/scheduler_calls.h"

namespace gpusched::server {

// Takes a finished local call's reply frame (local_call::EncodeReply):
// called once, from whichever thread finished the call.
using LocalReplySink = std::function<void(std::string frame)>;

// Starts `request` as `caller`'s call of the SchedulerCalls method it names.
// A method that is not one of them is Unimplemented and a message that does
// not decode as the method's request is InvalidArgument, each saying so, as
// over gRPC.
void StartLocalCall(SchedulerCalls& calls, const Caller& caller, const local_call::Request& request,
                    LocalReplySink reply);

}  // namespace gpusched::server
