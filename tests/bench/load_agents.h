#pragma once

// The nodes of a load benchmark: real gpusched-agent processes with fake GPUs,
// registered with one daemon, so that jobs really fork, exec, exit and get
// reported, as on a cluster (only the GPUs are pretend).

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace gpusched::bench {

struct AgentsSpec {
  std::string agent_bin;
  std::string daemon_address;
  std::string dir;  // agent logs and job logs go under it
  int count = 4;
  int gpus = 8;               // per agent, --fake-gpus
  std::string topology_file;  // when set: GPUs wired like this `nvidia-smi topo -m` output instead
};

class BenchAgents {
 public:
  explicit BenchAgents(AgentsSpec spec);  // starts every agent; throws when one cannot be spawned
  ~BenchAgents();                         // SIGTERM, wait
  BenchAgents(const BenchAgents&) = delete;
  BenchAgents& operator=(const BenchAgents&) = delete;

  // Until the daemon lists every agent's node UP.
  absl::Status WaitUntilUp(absl::Duration timeout) const;
  // Agents and the job processes they reaped, all together.
  double CpuSeconds() const;
  int count() const { return static_cast<int>(pids_.size()); }

 private:
  AgentsSpec spec_;
  std::vector<pid_t> pids_;
};

}  // namespace gpusched::bench
