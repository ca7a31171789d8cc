#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "daemon/server/daemon.h"

namespace gpusched::server {

struct ReplicaOptions {
  // How long the leader's lease lasts without renewal; it renews four
  // times per lease. A standby takes over when it runs out, or at once
  // when the leader's session with PostgreSQL ends (its process died).
  absl::Duration lease = absl::Seconds(5);
  absl::Duration poll = absl::Milliseconds(250);  // a standby's tries
  std::string advertise;                          // where clients reach this replica
};

struct ReplicaHooks {
  // True once the process is told to stop; waits up to the duration for it.
  std::function<bool(absl::Duration)> stop_within;
  std::function<void(const std::string& status)> ready;  // serving: as a standby, then as the leader
  std::function<void()> alive;                           // at least every poll while a standby
};

// `gpuschedd serve` on a PostgreSQL store, one of several replicas: a
// standby (StandbyServer) until it takes the leadership (PgLeadership),
// then the daemon, its commits fenced by its epoch, its lease renewed. It
// returns when told to stop, having let the leadership go so that a
// standby takes over at once. Losing the leadership (a renewal or a commit
// finds another replica's epoch) calls options.on_lost_leadership.
absl::Status RunReplica(DaemonOptions options, const ReplicaOptions& replica, const Clock& clock,
                        const ReplicaHooks& hooks);

}  // namespace gpusched::server
