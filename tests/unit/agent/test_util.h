#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runner/job_runner.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent::testing {

// A fresh directory under /tmp, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Collects what a JobRunner reports, from whichever thread it reports on.
class UpdateRecorder {
 public:
  void Record(const v1::JobUpdate& update);
  std::function<void(const v1::JobUpdate&)> Callback();
  // The first report of `kind` for the job, waiting up to `timeout` for it.
  std::optional<v1::JobUpdate> WaitFor(uint64_t job_id, v1::JobUpdate::Kind kind,
                                       absl::Duration timeout = absl::Seconds(5));
  std::vector<v1::JobUpdate> All() const;
  int Count(uint64_t job_id, v1::JobUpdate::Kind kind) const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1::JobUpdate> updates_;
};

// A runner for node "test-node" with its logs in `dir` and the built shim.
JobRunnerOptions RunnerOptions(const TempDir& dir);

v1::LaunchJob MakeLaunch(uint64_t job_id, std::vector<std::string> argv, std::vector<int> gpus = {});
v1::LaunchJob MakeShellLaunch(uint64_t job_id, const std::string& command, std::vector<int> gpus = {});

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
// Polls until the file contains `text`.
bool WaitForFileContaining(const std::string& path, const std::string& text, absl::Duration timeout = absl::Seconds(5));
// The pid a job wrote to `path` (waits for the line; REQUIREs a number).
pid_t ReadPid(const std::string& path);
// Dead: no such process, or a zombie nobody reaps (PID 1 in a container may not).
bool ProcessGone(pid_t pid);
bool WaitForProcessGone(pid_t pid, absl::Duration timeout = absl::Seconds(5));

// A saved `nvidia-smi topo -m` from shared/fixtures/topo, parsed (REQUIREs
// that it parses).
topology::NodeTopology FixtureTopology(const std::string& name);
std::string FixturePath(const std::string& name);

}  // namespace gpusched::agent::testing
