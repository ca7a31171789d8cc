#include "daemon/server/local_callers.h"

#include <pwd.h>

#include <vector>

#include "common/digits.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

std::string UserName(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) return found->pw_name;
  return std::to_string(uid);
}

const std::string& UserNameCache::NameOf(uid_t uid, absl::Time now) {
  Entry& entry = by_uid_[uid];
  if (entry.name.empty() || now - entry.looked_up >= keep_) entry = Entry{UserName(uid), now};
  return entry.name;
}

void LocalCallers::Connected(int fd, LocalCaller caller) {
  MutexLock lock(&mu_);
  by_fd_[fd] = std::move(caller);
}

std::optional<LocalCaller> LocalCallers::Find(absl::string_view grpc_peer) const {
  constexpr absl::string_view kPrefix = "fd:";
  if (grpc_peer.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  int fd = 0;
  if (!ParseDigits(grpc_peer.substr(kPrefix.size()), &fd)) return std::nullopt;
  MutexLock lock(&mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpusched::server
