#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched::store {

// A commit refused because another replica became the active one since
// this one did (its leader epoch is no longer the database's). Nothing of
// the batch was written; the replica must stop acting as the leader.
absl::Status FencedOutError(absl::string_view message);
bool IsFencedOut(const absl::Status& status);

// The PostgreSQL session name (application_name) of the writer that commits
// as the leader of `epoch`: the replica that takes over after it ends those
// sessions, so that a commit of theirs in flight cannot hold it up.
std::string WriterSessionName(int64_t epoch);

}  // namespace gpusched::store
