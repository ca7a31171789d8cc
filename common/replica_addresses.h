#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace gpusched {

// gRPC metadata by which a standby gpuschedd names the active replica.
inline constexpr char kLeaderMetadata[] = "gpusched-leader";

// The daemon addresses a client was given ("sched1:6870,sched2:6870": the
// replicas of a daemon on PostgreSQL), and which one to call: the one that
// answered last, or the one a standby named as active. Pure: callers do
// the calls.
class ReplicaAddresses {
 public:
  explicit ReplicaAddresses(absl::string_view list);

  const std::string& current() const { return addresses_[current_]; }
  size_t current_index() const { return current_; }
  size_t size() const { return addresses_.size(); }
  const std::vector<std::string>& all() const { return addresses_; }
  // The current one did not serve (down, or a standby). `leader`: the
  // active replica a standby named ("" when none). Moves to it when it is
  // one of the list, else to the next in the list.
  void Failed(absl::string_view leader);
  // The same from a failed call's trailing metadata (gRPC's multimap of
  // string_refs), where a standby names the active replica: true when it
  // did.
  template <typename Trailers>
  bool FailedWith(const Trailers& trailers) {
    const auto named = trailers.find(kLeaderMetadata);
    if (named == trailers.end()) {
      Failed("");
      return false;
    }
    Failed(absl::string_view(named->second.data(), named->second.size()));
    return true;
  }

 private:
  std::vector<std::string> addresses_;
  size_t current_ = 0;
};

}  // namespace gpusched
