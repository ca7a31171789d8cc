#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/store/pg_connection.h"
#include "daemon/store/store_url.h"

namespace gpusched::store {

// Who the database says is the active replica.
struct Leader {
  int64_t epoch = 0;    // 0: there never was one
  std::string holder;   // the replica's name (host and pid)
  std::string address;  // where clients reach it
  bool live = false;    // its lease has not run out
};

// Which of several gpuschedd on one PostgreSQL database is active: one row
// (table `leader`), taken and renewed on a connection of its own. A replica
// takes it when the leader's lease has run out, or at once when the
// session the leader renews from is gone (its process died: the server
// ends the session when the socket closes). Each take raises the epoch,
// which fences every commit of the former leader (PgJobStore::Open).
// Times are the server's clock, so replicas' clocks do not matter.
class PgLeadership {
 public:
  struct Identity {
    std::string holder;
    std::string address;
  };
  static absl::StatusOr<std::unique_ptr<PgLeadership>> Open(const StoreUrl& url, Identity me, absl::Duration lease);

  // The new epoch when this replica became the leader; nullopt while
  // another holds a live lease.
  absl::StatusOr<std::optional<int64_t>> TryTake();
  // Extends the lease of `epoch`. FencedOut (fencing.h) when another
  // replica has taken over since.
  absl::Status Renew(int64_t epoch);
  // At a clean stop: the lease ends now, so a standby takes over at once.
  absl::Status Release(int64_t epoch);
  absl::StatusOr<Leader> Current();

 private:
  PgLeadership(std::unique_ptr<PgConnection> db, Identity me, absl::Duration lease)
      : db_(std::move(db)), me_(std::move(me)), lease_(lease) {}

  std::unique_ptr<PgConnection> db_;
  const Identity me_;
  const absl::Duration lease_;
};

}  // namespace gpusched::store
