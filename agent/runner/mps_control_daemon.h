#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/runner/process_spawner.h"
#include "common/threads/mutex.h"
#include "spdlog/logger.h"

namespace gpusched::agent {

struct MpsControlOptions {
  // nvidia-cuda-mps-control, as a path (tests give a stand-in).
  std::string program;
  // CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY: the agent's own, so
  // that its daemon is not mistaken for one an operator started by hand.
  std::string pipe_dir;
  std::string log_dir;
  // CUDA_VISIBLE_DEVICES of the daemon: the UUIDs (or indices) of the GPUs
  // this node shares through MPS, and no others.
  std::vector<std::string> gpus;
  std::map<std::string, std::string> env;  // the base environment (PATH, LANG, TZ)
  absl::Duration first_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  // How long "quit" may take before SIGTERM, and SIGTERM before SIGKILL.
  absl::Duration stop_grace = absl::Seconds(5);
};

// The MPS control daemon of a node's MPS GPUs, run in the foreground (-f)
// as the agent's child and restarted, with backoff, whenever it dies. Left
// running by an agent that detaches from its jobs (an MPS client needs it),
// and adopted from its pid file by the next agent on the node.
class MpsControlDaemon {
 public:
  MpsControlDaemon(MpsControlOptions options, std::shared_ptr<spdlog::logger> log);
  ~MpsControlDaemon();  // Stop(), unless Detach() came first
  MpsControlDaemon(const MpsControlDaemon&) = delete;
  MpsControlDaemon& operator=(const MpsControlDaemon&) = delete;

  // Makes the directories, then adopts the daemon its pid file names or
  // starts one, and the thread that keeps it running. Fails only when the
  // directories cannot be made; a daemon that will not start is Ready()'s
  // answer, retried with backoff. Returns once the first try is known.
  absl::Status Start();
  // OK while the daemon runs; otherwise what became of it, for a launch's
  // refusal.
  absl::Status Ready() const;
  // The daemon's pid; 0 when none runs.
  pid_t pid() const;
  // How many times it died or would not start (each is followed by a retry).
  int restarts() const;
  // "quit" to the daemon, SIGTERM after stop_grace, SIGKILL after as long
  // again; then the thread ends. Safe to call twice.
  void Stop();
  // Ends the thread and leaves the daemon running, for the next agent.
  void Detach();

  const std::string& pipe_dir() const { return options_.pipe_dir; }
  const std::string& log_dir() const { return options_.log_dir; }

 private:
  void Supervise();
  // A live daemon of ours that the pid file names (an earlier agent's), or 0.
  pid_t FindRunning() const;
  // True when the daemon took the command.
  bool SendQuit();
  // The program run as the daemon (`args` "-f") or as its client (no args,
  // commands on `stdin_path`), in the daemon's environment.
  ProcessSpec ControlProcess(std::vector<std::string> args, const std::string& stdin_path = "") const;

  MpsControlOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  mutable Mutex mu_;
  CondVar cv_;
  pid_t pid_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool detaching_ ABSL_GUARDED_BY(mu_) = false;
  int restarts_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(mu_) =
      absl::FailedPreconditionError("the MPS control daemon has not been started");
  std::thread thread_;  // started and joined by the owner's thread
};

}  // namespace gpusched::agent
