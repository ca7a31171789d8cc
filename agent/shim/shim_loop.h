#pragma once

namespace gpusched::agent {

// The life of one job's shim (gpusched-shim, see agent/runner/shim_protocol.h):
// read the spec from `spec_fd`, start every rank or none, reply on
// `reply_fd`, then reap the ranks, pass the agent's stop and kill on to
// them, keep the lease, and write how each rank ended to `exits_fd`.
// Returns the shim's exit code: 0 once every rank was reaped, 1 when the
// ranks could not start, 2 for a spec it cannot read.
int RunShim(int spec_fd, int reply_fd, int exits_fd);

}  // namespace gpusched::agent
