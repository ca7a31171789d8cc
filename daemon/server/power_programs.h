#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "daemon/core/effects.h"

namespace gpusched::server {

// Runs the pools' resume and suspend programs (core::PowerRequest), each on
// its own thread so that a slow cloud CLI holds up nothing else. The
// contract, like Slurm's ResumeProgram without its traps:
//
//   PROGRAM HOSTLIST JSON_FILE
//
// HOSTLIST names the nodes ("gpu[017-020]"); JSON_FILE says what for:
//   {"action": "resume", "pool": "burst", "nodes": ["gpu017", ...],
//    "jobs": [{"id": 42, "nodes": ["gpu017", ...], "why": "..."}]}
// stdin is /dev/null; stdout and stderr go to the daemon's log, each line
// with the pool, the action and the nodes; the program is killed (with its
// process group) past the pool's timeout. A program that starts something
// lasting (an agent) must not leave it our stdout or stderr, or we wait for
// it until the timeout. Its outcome goes to `ended`: OK on exit 0, else why.
class PowerPrograms {
 public:
  using Ended = std::function<void(const core::PowerRequest&, const absl::Status&)>;
  // `work_dir` holds the JSON files while their programs run; it is made
  // when missing.
  PowerPrograms(std::string work_dir, Ended ended);
  // Programs still running go on (their outcome is then not heard: a
  // restarted daemon finds their nodes where they were and carries on), and
  // their threads, which outlive it, neither log nor call `ended` from now
  // on: the process may be exiting by the time they end.
  ~PowerPrograms();

  void Run(core::PowerRequest request);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::string work_dir_;
};

// The JSON_FILE's text for `request`.
std::string PowerRequestJson(const core::PowerRequest& request);

}  // namespace gpusched::server
