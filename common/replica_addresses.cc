#include "common/replica_addresses.h"

#include <algorithm>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpusched {

ReplicaAddresses::ReplicaAddresses(absl::string_view list) {
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    addresses_.emplace_back(absl::StripAsciiWhitespace(part));
  }
  if (addresses_.empty()) addresses_.emplace_back(list);
}

void ReplicaAddresses::Failed(absl::string_view leader) {
  const auto named = std::find(addresses_.begin(), addresses_.end(), leader);
  if (!leader.empty() && named != addresses_.end() && static_cast<size_t>(named - addresses_.begin()) != current_) {
    current_ = static_cast<size_t>(named - addresses_.begin());
    return;
  }
  current_ = (current_ + 1) % addresses_.size();
}

}  // namespace gpusched
