#pragma once

#include "daemon/server/caller.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::server {

// What a user may see of another user's job, as Slurm's PrivateData=jobs
// would have it but without hiding the queue: id, user, queue, state,
// resources, placement and reasons, never the command, script, environment
// or working directory, which hold paths, tokens and keys, nor its client
// request id. The owner and admins see everything.
void HideDetailsUnlessOwner(const Caller& viewer, v1::Job& job);

}  // namespace gpusched::server
