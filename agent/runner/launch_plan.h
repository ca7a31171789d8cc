#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/runner/container_launch.h"
#include "agent/runner/cpu_binding.h"
#include "agent/runner/gpu_sharing.h"
#include "agent/runner/process_spawner.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What the node contributes to every launch.
struct LaunchContext {
  std::string node_name;
  std::string log_dir;
  std::string advertise_address;
  std::map<std::string, std::string> agent_env;  // see RankEnvContext::agent_env
  // The node as the agent discovered it: where the NCCL NIC hints and the CPU
  // binding come from. Null: neither.
  const topology::NodeTopology* topology = nullptr;
  CpuBindMode cpu_bind = CpuBindMode::kNuma;
  std::vector<int> agent_cpus;          // the CPUs the agent may use; bindings stay within them
  std::string nccl_topo_file;           // NCCL_TOPO_FILE unless the job sets it; "" = none
  const GpuSharing* sharing = nullptr;  // JobRunnerOptions::sharing; null: no GPU is shared
  // How jobs in containers run here; null or disabled: they do not.
  const ContainerSettings* containers = nullptr;
  HostGpuFiles host_gpu_files;  // where container launches find the driver's device nodes and libraries
};

struct LaunchPlan {
  std::string job_log_dir;
  std::vector<ProcessSpec> processes;  // in local rank order
  // Why a process was left unbound although binding was asked for, for the
  // agent's log; empty when every process with GPUs was bound.
  std::string cpu_bind_note;
};

// <log_dir>/job-<id>
std::string JobLogDir(const std::string& log_dir, uint64_t job_id);

// Turns a LaunchJob into ready-to-spawn processes: resolves the user, the
// command (PATH lookup, or the script written to <job log dir>/script), the
// workdir, each rank's environment, CPU binding and log file. Creates the
// job's log directory. Errors are worded for the person who submitted the job.
//
// From the topology, every rank gets the same NCCL NIC hint: the NICs near
// all of the node's allocated GPUs (NcclNetworkEnv), not just its own GPU's.
// NCCL searches its rings and trees per rank and then combines them, which
// goes wrong when ranks of one node see different NICs, and its PXN path
// sends a rank's traffic out of a peer GPU's NIC; within the list NCCL
// already picks the NIC nearest each GPU. The hint still keeps a job off the
// rails of other jobs' GPUs and off storage NICs. CPU binding is per process:
// a per-GPU rank is bound near its own GPU, a per-node process near all of
// the node's GPUs (ChooseCpuBinding); GPUSCHED_CPU_BIND says where.
absl::StatusOr<LaunchPlan> PrepareLaunch(const v1::LaunchJob& launch, const LaunchContext& context);

}  // namespace gpusched::agent
