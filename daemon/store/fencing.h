#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched::store {

// A commit refused because another replica became the active one since
// this one did (its leader epoch is no longer the database's). Nothing of
// the batch was written; the replica must stop acting as the leader.
absl::Status FencedOutError(absl::string_view message);
bool IsFencedOut(const absl::Status& status);

}  // namespace gpusched::store
