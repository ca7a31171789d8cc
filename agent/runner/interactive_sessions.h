#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "agent/runner/process_spawner.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// The interactive sessions of the jobs running on this node (Scheduler.Attach,
// relayed by the daemon as SessionInput): each a process started with the
// job's rank-0 user, environment, workdir and CPUs, on a pseudo-terminal (its
// controlling terminal, so that Ctrl-C and window sizes work as at a login)
// or on pipes, whose output goes back as SessionOutput as it comes, then how
// it ended. A session without a command only holds the allocation
// (gpusched alloc) until the job ends or its client goes away.
//
// Sessions are the agent's children, not a shim's: they end with the agent,
// as a login ends with its sshd.
class InteractiveSessions {
 public:
  using SendFn = std::function<void(const v1::SessionOutput&)>;
  // The job's rank-0 process as its launch prepared it; nullopt when the job
  // does not run here, or runs in a container.
  using TemplateFn = std::function<std::optional<ProcessSpec>(uint64_t job_id)>;

  InteractiveSessions(SendFn send, TemplateFn process_of_job);
  ~InteractiveSessions();  // hangs up every session and waits for them
  InteractiveSessions(const InteractiveSessions&) = delete;
  InteractiveSessions& operator=(const InteractiveSessions&) = delete;

  void Handle(const v1::SessionInput& input);
  // The job ended (or is being stopped) here: its sessions end, their exit
  // saying `why`.
  void EndJob(uint64_t job_id, const std::string& why);
  // Every session ends, saying `why`; they are waited for.
  void EndAll(const std::string& why);
  size_t count() const;

 private:
  class Session;
  void Start(const v1::SessionInput& input);
  void Reap();  // forgets sessions that have ended

  const SendFn send_;
  const TemplateFn process_of_job_;
  mutable Mutex mu_;
  std::map<uint64_t, std::unique_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);  // by session id
};

}  // namespace gpusched::agent
