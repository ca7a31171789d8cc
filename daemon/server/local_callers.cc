#include "daemon/server/local_callers.h"

#include "common/digits.h"

namespace gpusched::server {

void LocalCallers::Connected(int fd, LocalCaller caller) {
  std::lock_guard<std::mutex> lock(mu_);
  by_fd_[fd] = std::move(caller);
}

std::optional<LocalCaller> LocalCallers::Find(absl::string_view grpc_peer) const {
  constexpr absl::string_view kPrefix = "fd:";
  if (grpc_peer.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  int fd = 0;
  if (!ParseDigits(grpc_peer.substr(kPrefix.size()), &fd)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

Caller IdentifyCaller(const LocalCallers* callers, const std::set<std::string>& admins, absl::string_view grpc_peer) {
  std::optional<LocalCaller> local = callers == nullptr ? std::nullopt : callers->Find(grpc_peer);
  if (!local.has_value()) return Caller{};
  return Caller{true, local->user, local->uid == 0 || admins.count(local->user) > 0};
}

}  // namespace gpusched::server
