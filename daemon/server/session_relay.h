#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::server {

// The interactive sessions in flight (Scheduler.Attach): which client stream
// each agent's SessionOutput goes to. Thread-safe; endpoints are called
// with the relay's lock held, so Deliver must only queue.
class SessionRelay {
 public:
  class Endpoint {
   public:
    virtual ~Endpoint() = default;
    virtual void Deliver(const v1::SessionOutput& output) = 0;
  };

  // A new session of `node`'s agent; its id, unique in this daemon's life.
  uint64_t Add(Endpoint* endpoint, const std::string& node);
  // Once Remove returns, the endpoint is never called again.
  void Remove(uint64_t session_id);
  // Output from `node`'s agent: to its session, if that session is of that
  // node (an agent cannot write into another node's sessions).
  void Deliver(const std::string& node, const v1::SessionOutput& output);
  // The node's agent connection ended: its sessions end, saying so.
  void NodeGone(const std::string& node);
  size_t size() const;

 private:
  struct Entry {
    Endpoint* endpoint;
    std::string node;
  };
  mutable Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Entry> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpusched::server
