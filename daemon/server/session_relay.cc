#include "daemon/server/session_relay.h"

#include "absl/strings/str_cat.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

uint64_t SessionRelay::Add(Endpoint* endpoint, const std::string& node) {
  MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  sessions_[id] = Entry{endpoint, node};
  return id;
}

void SessionRelay::Remove(uint64_t session_id) {
  MutexLock lock(&mu_);
  sessions_.erase(session_id);
}

void SessionRelay::Deliver(const std::string& node, const v1::SessionOutput& output) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(output.session_id());
  if (it == sessions_.end() || it->second.node != node) return;
  it->second.endpoint->Deliver(output);
}

void SessionRelay::NodeGone(const std::string& node) {
  MutexLock lock(&mu_);
  for (const auto& [id, entry] : sessions_) {
    if (entry.node != node) continue;
    v1::SessionOutput gone;
    gone.set_session_id(id);
    gone.mutable_exit()->set_exit_code(-1);
    gone.mutable_exit()->set_message(absl::StrCat("the connection to ", node, "'s agent was lost"));
    entry.endpoint->Deliver(gone);
  }
}

size_t SessionRelay::size() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace gpusched::server
